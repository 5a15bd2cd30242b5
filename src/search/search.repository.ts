import { sql, type RawBuilder } from 'kysely'
import { dialectOf } from '../db/dialect.js'
import type { Executor, ProductRow } from '../db/schema.js'
import { toIso } from '../db/values.js'
import { PRODUCTS } from './documents/filters.js'
import { columnOf, conditions, ENGINES, sideOf, tableOf } from './search-conditions.js'
import type { SortKey } from './search-cursor.js'
import type { SearchRequest } from './search-query.js'
import type { Sort } from './sorts.js'

/**
 * The page of the search path of the product list, in any sort (keyset). A page with `q` is
 * chosen among the matching documents (`s`) on their sort key alone (decision 0033); one
 * without `q` (or with a filter only the products hold) on the products (`p`), whose
 * indexes serve each sort. Only the page's rows join `products` for the answer.
 */

interface SortColumn {
  /** The column of the page's rows (`r`), as selected by the inner query. */
  column: string
  direction: 'asc' | 'desc'
  codePoint?: boolean
}

const NEWEST: SortColumn[] = [
  { column: 'created_at', direction: 'desc' },
  { column: 'id', direction: 'desc' },
]

const SORT_COLUMNS: Record<Sort, SortColumn[]> = {
  newest: NEWEST,
  oldest: [
    { column: 'created_at', direction: 'asc' },
    { column: 'id', direction: 'desc' },
  ],
  updated: [{ column: 'updated_at', direction: 'desc' }, ...NEWEST],
  name: [{ column: 'search_name_key', direction: 'asc', codePoint: true }, ...NEWEST],
  '-name': [{ column: 'search_name_key', direction: 'desc', codePoint: true }, ...NEWEST],
  price: [{ column: 'price_e4', direction: 'asc' }, ...NEWEST],
  '-price': [{ column: 'price_e4', direction: 'desc' }, ...NEWEST],
  relevance: [
    { column: 'search_group', direction: 'asc' },
    { column: 'search_score', direction: 'asc' },
    ...NEWEST,
  ],
}

export interface SearchPage {
  rows: ProductRow[]
  /** The sort key of each row, for the cursor. */
  keys: SortKey[]
}

/** A page of the request's products in its sort, after `after` (a sort key), `limit` rows. */
export async function searchPage(
  db: Executor,
  storeId: string,
  request: SearchRequest,
  after: SortKey | undefined,
  limit: number,
): Promise<SearchPage> {
  // A q whose words all fold away (a script any-ascii has no spelling for) matches nothing.
  if (request.q?.words.length === 0) return { rows: [], keys: [] }
  const columns = SORT_COLUMNS[request.sort]
  const result = await searchPageQuery(db, storeId, request, after, limit).execute(db)
  const rows = result.rows
  return {
    rows,
    keys: rows.map((row) =>
      columns.map(({ column }) => {
        const value = row[column]
        if (column === 'created_at' || column === 'updated_at') return toIso(value as string | Date)
        if (column === 'price_e4' || column === 'search_group' || column === 'search_score')
          return Number(value)
        return value as string
      }),
    ),
  }
}

/** The statement of searchPage (EXPLAIN reads it too). */
export function searchPageQuery(
  db: Executor,
  storeId: string,
  request: SearchRequest,
  after: SortKey | undefined,
  limit: number,
): RawBuilder<ProductRow & Record<string, unknown>> {
  const engine = ENGINES[dialectOf(db).name]
  const columns = SORT_COLUMNS[request.sort]
  const on = request.q ? sideOf(request) : PRODUCTS
  const keyOf = (alias: string) => (column: SortColumn) => {
    const reference = sql.ref(`${alias}.${column.column}`)
    return column.codePoint ? engine.byCodePoint(reference) : reference
  }
  const ref = keyOf('r')
  // The page is chosen on the sort's key alone; only its rows' products are read whole (a
  // CROSS JOIN: SQLite takes its order as written, from the page's rows to their products).
  const keyColumns = sql.join(
    [...new Set(['id', ...columns.map(({ column }) => column)])]
      .filter((column) => !column.startsWith('search_'))
      .map((column) => sql`${columnOf(on, column)} as ${sql.ref(column)}`),
  )
  let inner: RawBuilder<unknown>
  if (request.sort === 'relevance' && request.q && request.q.words.length > 0) {
    const ranked = engine.ranked(request.q.words, on)
    const where = [ranked.where, ...conditions(db, storeId, request, { withQuery: false, on })]
    const needle = request.q.code.includes('\n') ? '\n\n' : `\n${request.q.code}\n`
    inner = sql`select ${keyColumns},
        case when ${engine.holds(sql.ref('s.codes'), needle)} then 0
          when ${ranked.nameHolds} then 1 else 2 end as search_group,
        ${ranked.score} as search_score
      from ${ranked.from} where ${sql.join(where, sql` and `)}`
  } else {
    const byName = request.sort === 'name' || request.sort === '-name'
    const join = byName && on.alias === 'p'
    inner = sql`select ${keyColumns}${byName ? sql`, s.name_key as search_name_key` : sql``}
      from ${tableOf(on)}
      ${join ? sql`join product_search s on s.store_id = p.store_id and s.product_id = p.id` : sql``}
      where ${sql.join(conditions(db, storeId, request, { on }), sql` and `)}`
  }
  const keyset = after === undefined ? undefined : afterKey(columns, after, ref)
  const order = (alias: string) =>
    sql.join(columns.map((column) => sql`${keyOf(alias)(column)} ${sql.raw(column.direction)}`))
  const extra = columns.filter(({ column }) => column.startsWith('search_'))
  return sql<ProductRow & Record<string, unknown>>`
    select p.*${sql.join(
      extra.map(({ column }) => sql`, ${sql.ref(`k.${column}`)}`),
      sql``,
    )}
    from (
      select * from (${inner}) r
      ${keyset ? sql`where ${keyset}` : sql``}
      order by ${order('r')}
      limit ${limit}
    ) k
    cross join products p
    where p.store_id = ${storeId} and p.id = k.id
    order by ${order('k')}
  `
}

/**
 * Rows after `key` in the order of `columns`: (a > x) or (a = x and b > y) or ..., with the
 * first column's bound (a >= x) given on its own too, so that an index on it starts its range
 * there instead of reading every row before the page.
 */
function afterKey(
  columns: SortColumn[],
  key: SortKey,
  ref: (column: SortColumn) => RawBuilder<unknown>,
): RawBuilder<boolean> {
  const arms = columns.map((column, i) => {
    const equal = columns.slice(0, i).map((before, j) => sql`${ref(before)} = ${key[j]}`)
    const beyond = sql`${ref(column)} ${sql.raw(column.direction === 'asc' ? '>' : '<')} ${key[i]}`
    return sql`(${sql.join([...equal, beyond], sql` and `)})`
  })
  const first = columns[0]!
  const bound = sql`${ref(first)} ${sql.raw(first.direction === 'asc' ? '>=' : '<=')} ${key[0]}`
  return sql<boolean>`${bound} and (${sql.join(arms, sql` or `)})`
}
