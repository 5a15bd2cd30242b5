import { sql, type RawBuilder } from 'kysely'
import { dialectOf, type Dialect } from '../db/dialect.js'
import type { Executor, ProductRow } from '../db/schema.js'
import { toIso } from '../db/values.js'
import { priceBetween, type Condition } from './filters.js'
import type { FacetSource } from './search-filters.js'
import type { SortKey } from './search-cursor.js'
import type { SearchRequest } from './search-query.js'
import type { Sort } from './sorts.js'

/**
 * The statements of the search path of the product list: a page in any sort (keyset), and
 * facet counts. `q` is never handed to an engine's query language: the match is written
 * here from its folded words (`[a-z0-9]` only), each quoted, the last as a prefix.
 */

interface Engine {
  /** The products (`p`) whose document holds every word (the last also as a prefix). */
  matches(storeId: string, words: readonly string[]): Condition
  /**
   * The FROM of a relevance page, with `p` and `s` (product_search), the condition that they
   * match, and the score (lower is better) and name-match test of each.
   */
  ranked(words: readonly string[]): {
    from: RawBuilder<unknown>
    where: Condition
    score: RawBuilder<number>
    nameHolds: Condition
  }
  /** Whether `codes` (newline-framed) holds `needle` (newline-framed). */
  holds(codes: RawBuilder<unknown>, needle: string): Condition
  /** `expression` compared by code point. */
  byCodePoint(expression: RawBuilder<unknown>): RawBuilder<unknown>
}

const ftsQuery = (words: readonly string[]) =>
  words.map((word, i) => `"${word}"${i === words.length - 1 ? '*' : ''}`).join(' ')
const tsQuery = (words: readonly string[], weight = '') =>
  words.map((word, i) => `'${word}':${i === words.length - 1 ? '*' : ''}${weight}`).join(' & ')

const ENGINES: Record<Dialect, Engine> = {
  sqlite: {
    matches: (storeId, words) => sql<boolean>`p.id in (select s.product_id
      from product_search_fts join product_search s on s.doc = product_search_fts.rowid
      where product_search_fts match ${ftsQuery(words)} and s.store_id = ${storeId})`,
    ranked: (words) => ({
      from: sql`product_search_fts
        join product_search s on s.doc = product_search_fts.rowid
        join products p on p.store_id = s.store_id and p.id = s.product_id`,
      where: sql<boolean>`product_search_fts match ${ftsQuery(words)}`,
      score: sql<number>`bm25(product_search_fts, 10.0, 1.0)`,
      nameHolds: sql<boolean>`s.doc in (select rowid from product_search_fts
        where product_search_fts match ${`name_words : (${ftsQuery(words)})`})`,
    }),
    holds: (codes, needle) => sql<boolean>`instr(${codes}, ${needle}) > 0`,
    byCodePoint: (expression) => expression,
  },
  postgres: {
    matches: (storeId, words) => sql<boolean>`p.id in (select s.product_id
      from product_search s
      where s.store_id = ${storeId} and s.document @@ to_tsquery('simple', ${tsQuery(words)}))`,
    ranked: (words) => {
      const query = sql`to_tsquery('simple', ${tsQuery(words)})`
      return {
        from: sql`product_search s
          join products p on p.store_id = s.store_id and p.id = s.product_id`,
        where: sql<boolean>`s.document @@ ${query}`,
        score: sql<number>`-ts_rank(s.document, ${query})`,
        nameHolds: sql<boolean>`s.document @@ to_tsquery('simple', ${tsQuery(words, 'A')})`,
      }
    },
    holds: (codes, needle) => sql<boolean>`strpos(${codes}, ${needle}) > 0`,
    byCodePoint: (expression) => sql`${expression} collate "C"`,
  },
}

/** The conditions of a request on `p`, but those of the facet `exceptFacet` when named. */
function conditions(
  db: Executor,
  storeId: string,
  request: SearchRequest,
  options: { exceptFacet?: string; withQuery?: boolean } = {},
): Condition[] {
  const engine = ENGINES[dialectOf(db).name]
  const { exceptFacet, withQuery = true } = options
  const own = exceptFacet === undefined ? undefined : facetKey(exceptFacet)
  const all: Condition[] = [sql<boolean>`p.store_id = ${storeId}`]
  if (withQuery && request.q) {
    all.push(request.q.words.length > 0 ? engine.matches(storeId, request.q.words) : sql`1 = 0`)
  }
  for (const filter of request.filters) {
    if (facetKey(filter.param) !== own) {
      all.push(filter.kind.condition(db, filter.param, filter.values))
    }
  }
  if (own !== 'price' && (request.priceMinE4 !== undefined || request.priceMaxE4 !== undefined)) {
    all.push(priceBetween(request.priceMinE4, request.priceMaxE4))
  }
  return all
}

/** The ids of the request's products (`p.id`) but the facet `exceptFacet`'s own filter: a subquery. */
export function matchingProductIds(
  db: Executor,
  storeId: string,
  request: SearchRequest,
  exceptFacet: string,
): RawBuilder<unknown> {
  const where = conditions(db, storeId, request, { exceptFacet })
  return sql`select p.id from products p where ${sql.join(where, sql` and `)}`
}

/** A filter's or facet's name as they are matched to each other: option names without case. */
export function facetKey(name: string): string {
  return name.startsWith('option.') ? name.toLowerCase() : name
}

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
  const keyOf = (alias: string) => (column: SortColumn) => {
    const reference = sql.ref(`${alias}.${column.column}`)
    return column.codePoint ? engine.byCodePoint(reference) : reference
  }
  const ref = keyOf('r')
  // The page is chosen on the sort's key alone; only its rows' products are read whole.
  const keyColumns = sql.join(
    [...new Set(['id', ...columns.map(({ column }) => column)])]
      .filter((column) => !column.startsWith('search_'))
      .map((column) => sql.ref(`p.${column}`)),
  )
  let inner: RawBuilder<unknown>
  if (request.sort === 'relevance' && request.q && request.q.words.length > 0) {
    const ranked = engine.ranked(request.q.words)
    const where = [ranked.where, ...conditions(db, storeId, request, { withQuery: false })]
    const needle = request.q.code.includes('\n') ? '\n\n' : `\n${request.q.code}\n`
    inner = sql`select ${keyColumns},
        case when ${engine.holds(sql.ref('s.codes'), needle)} then 0
          when ${ranked.nameHolds} then 1 else 2 end as search_group,
        ${ranked.score} as search_score
      from ${ranked.from} where ${sql.join(where, sql` and `)}`
  } else {
    const byName = request.sort === 'name' || request.sort === '-name'
    inner = sql`select ${keyColumns}${byName ? sql`, s.name_key as search_name_key` : sql``}
      from products p
      ${byName ? sql`join product_search s on s.store_id = p.store_id and s.product_id = p.id` : sql``}
      where ${sql.join(conditions(db, storeId, request), sql` and `)}`
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
    join products p on p.store_id = ${storeId} and p.id = k.id
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

export interface FacetCount {
  value: string
  count: number
}

/** The values of one facet with their counts (every one: the caller orders and cuts). */
export async function facetCounts(
  db: Executor,
  storeId: string,
  request: SearchRequest,
  name: string,
  source: FacetSource,
): Promise<FacetCount[]> {
  const result = await facetQuery(db, storeId, request, name, source).execute(db)
  return result.rows.map((row) => ({ value: row.value, count: Number(row.count) }))
}

/**
 * The statement of facetCounts (EXPLAIN reads it too). A value facet reads the matching
 * products first, then their values by product (SQLite takes CROSS JOIN's order as written:
 * from a q's few matches, not from every value of the store).
 */
export function facetQuery(
  db: Executor,
  storeId: string,
  request: SearchRequest,
  name: string,
  source: FacetSource,
): RawBuilder<{ value: string; count: number | string }> {
  const where = conditions(db, storeId, request, { exceptFacet: name })
  return 'column' in source
    ? sql<{ value: string; count: number | string }>`
          select ${sql.ref(source.column)} as value, count(*) as count
          from products p
          where ${sql.join(where, sql` and `)} and ${sql.ref(source.column)} is not null
          group by ${sql.ref(source.column)}`
    : sql<{ value: string; count: number | string }>`
          select min(f.value) as value, count(*) as count
          from products p
          cross join search_facets f
          where f.store_id = p.store_id and f.product_id = p.id
            and f.kind = ${source.kind} and f.name_key = ${source.nameKey}
            and ${sql.join(where, sql` and `)}
          group by f.value_key`
}

/** The lowest and highest price (ten-thousandths) of the request's products but its price bounds. */
export async function priceRange(
  db: Executor,
  storeId: string,
  request: SearchRequest,
): Promise<{ min: number | null; max: number | null }> {
  const where = conditions(db, storeId, request, { exceptFacet: 'price' })
  const result = await sql<{ min: number | string | null; max: number | string | null }>`
    select min(p.price_e4) as min, max(p.price_e4) as max from products p
    where ${sql.join(where, sql` and `)}`.execute(db)
  const row = result.rows[0]
  const number = (value: number | string | null | undefined) =>
    value === null || value === undefined ? null : Number(value)
  return { min: number(row?.min), max: number(row?.max) }
}

export interface SharedFacet {
  name: string
  /** The source of a value facet; none for `price`. */
  source?: FacetSource
}

export type SharedFacetAnswer = FacetCount[] | { min: number | null; max: number | null }

/**
 * The facets of `facets`, none of which has a filter of its own in the request, so that each
 * is counted over the same products: the request's matches, read once (a materialized CTE of
 * the few columns the facets read), then grouped per facet, in one statement.
 */
export async function sharedFacets(
  db: Executor,
  storeId: string,
  request: SearchRequest,
  facets: readonly SharedFacet[],
): Promise<Map<string, SharedFacetAnswer>> {
  const rows = (await sharedFacetsQuery(db, storeId, request, facets).execute(db)).rows
  const answers = new Map<string, SharedFacetAnswer>()
  const number = (value: number | string | null) => (value === null ? null : Number(value))
  facets.forEach((facet, i) => {
    const own = rows.filter((row) => Number(row.facet) === i)
    answers.set(
      facet.name,
      facet.source
        ? own.map((row) => ({ value: row.value!, count: Number(row.count) }))
        : { min: number(own[0]?.low ?? null), max: number(own[0]?.high ?? null) },
    )
  })
  return answers
}

type SharedRow = {
  facet: number | string
  value: string | null
  count: number | string
  low: number | string | null
  high: number | string | null
}

/** The statement of sharedFacets (EXPLAIN reads it too). */
export function sharedFacetsQuery(
  db: Executor,
  storeId: string,
  request: SearchRequest,
  facets: readonly SharedFacet[],
): RawBuilder<SharedRow> {
  const columns = [
    ...new Set(
      facets.flatMap(({ source }) => (source && 'column' in source ? [source.column] : [])),
    ),
  ]
  const alias = (column: string) => sql.ref(`m.c${columns.indexOf(column)}`)
  const read = [
    sql`p.id`,
    sql`p.price_e4`,
    ...columns.map((column, i) => sql`${sql.ref(column)} as ${sql.ref(`c${i}`)}`),
  ]
  const arms = facets.map(({ source }, i) => {
    if (!source) {
      return sql`select ${sql.lit(i)} as facet, cast(null as text) as value, 0 as count,
        min(m.price_e4) as low, max(m.price_e4) as high from m`
    }
    if ('column' in source) {
      return sql`select ${sql.lit(i)} as facet, ${alias(source.column)} as value, count(*) as count,
          cast(null as bigint) as low, cast(null as bigint) as high
        from m where ${alias(source.column)} is not null group by ${alias(source.column)}`
    }
    return sql`select ${sql.lit(i)} as facet, min(f.value) as value, count(*) as count,
        cast(null as bigint) as low, cast(null as bigint) as high
      from search_facets f
      where f.store_id = ${storeId} and f.kind = ${source.kind} and f.name_key = ${source.nameKey}
        and ${dialectOf(db).inSubquery('f.product_id', sql`select m.id from m`)}
      group by f.value_key`
  })
  return sql<SharedRow>`
    with m as materialized (
      select ${sql.join(read)} from products p
      where ${sql.join(conditions(db, storeId, request), sql` and `)}
    )
    ${sql.join(arms, sql` union all `)}`
}
