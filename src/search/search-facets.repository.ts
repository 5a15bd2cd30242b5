import { sql, type RawBuilder } from 'kysely'
import { dialectOf } from '../db/dialect.js'
import type { Executor } from '../db/schema.js'
import { columnOf, conditions, sideOf, tableOf } from './search-conditions.js'
import type { FacetSource } from './search-filters.js'
import type { SearchRequest } from './search-query.js'

/**
 * The facet counts of the product list's search path, over the request's matches read on
 * their documents (`s`, product_search: decision 0033) unless a filter of the request reads
 * only the products (`p`).
 */

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
 * The statement of facetCounts (EXPLAIN reads it too). A column's facet reads the matching
 * products' column, then groups it. A value facet reads the matching products first, then
 * their values by product (SQLite takes CROSS JOIN's order as written: from a q's few
 * matches, not from every value of the store).
 */
export function facetQuery(
  db: Executor,
  storeId: string,
  request: SearchRequest,
  name: string,
  source: FacetSource,
): RawBuilder<{ value: string; count: number | string }> {
  const on = sideOf(request)
  const where = conditions(db, storeId, request, { exceptFacet: name, on, whole: true })
  if ('column' in source) {
    // The matches read first (materialized), then grouped: an index of the column, which
    // would serve the grouping, does not then decide how the matches are found.
    return sql<{ value: string; count: number | string }>`
          with m as materialized (
            select ${columnOf(on, source.column)} as value from ${tableOf(on)}
            where ${sql.join(where, sql` and `)}
          )
          select m.value as value, count(*) as count from m
          where m.value is not null group by m.value`
  }
  return sql<{ value: string; count: number | string }>`
          select min(f.value) as value, count(*) as count
          from ${tableOf(on)}
          cross join search_facets f
          where f.store_id = ${columnOf(on, 'store_id')} and f.product_id = ${columnOf(on, 'id')}
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
  const on = sideOf(request)
  const where = conditions(db, storeId, request, { exceptFacet: 'price', on, whole: true })
  const price = columnOf(on, 'price_e4')
  const result = await sql<{ min: number | string | null; max: number | string | null }>`
    select min(${price}) as min, max(${price}) as max from ${tableOf(on)}
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
    const own = rows.filter((row) => Number(row.facet) === slotOf(facets, i))
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

/**
 * The row number (`facet`) that answers facet `i`: a value facet's rows are counted once for
 * every facet of the same kind and name (`option.Color` and `option.color`), under the first.
 */
function slotOf(facets: readonly SharedFacet[], i: number): number {
  const source = facets[i]!.source
  if (!source || 'column' in source) return i
  return facets.findIndex(
    (other) =>
      other.source !== undefined &&
      !('column' in other.source) &&
      other.source.kind === source.kind &&
      other.source.nameKey === source.nameKey,
  )
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
  const on = sideOf(request)
  const read = [
    sql`${columnOf(on, 'id')} as id`,
    sql`${columnOf(on, 'price_e4')} as price_e4`,
    ...columns.map((column, i) => sql`${columnOf(on, column)} as ${sql.ref(`c${i}`)}`),
  ]
  // The value facets (search_facets' rows) are one arm: each match's rows are found once,
  // whichever of those facets they belong to, and grouped by facet and value.
  const valueFacets = facets.flatMap(({ source }, i) =>
    source && !('column' in source) && slotOf(facets, i) === i ? [{ i, source }] : [],
  )
  const valueArm =
    valueFacets.length === 0
      ? []
      : [
          sql`select case ${sql.join(
            valueFacets.map(
              ({ i, source }) =>
                sql`when f.kind = ${source.kind} and f.name_key = ${source.nameKey} then ${sql.lit(i)}`,
            ),
            sql` `,
          )} end as facet, min(f.value) as value, count(*) as count,
        cast(null as bigint) as low, cast(null as bigint) as high
      from search_facets f
      where f.store_id = ${storeId}
        and (${sql.join(
          valueFacets.map(
            ({ source }) => sql`(f.kind = ${source.kind} and f.name_key = ${source.nameKey})`,
          ),
          sql` or `,
        )})
        and ${dialectOf(db).inSubquery('f.product_id', sql`select m.id from m`)}
      group by 1, f.value_key`,
        ]
  const arms = facets.flatMap(({ source }, i) => {
    if (source && !('column' in source)) return []
    if (!source) {
      return [
        sql`select ${sql.lit(i)} as facet, cast(null as text) as value, 0 as count,
        min(m.price_e4) as low, max(m.price_e4) as high from m`,
      ]
    }
    return [
      sql`select ${sql.lit(i)} as facet, ${alias(source.column)} as value, count(*) as count,
          cast(null as bigint) as low, cast(null as bigint) as high
        from m where ${alias(source.column)} is not null group by ${alias(source.column)}`,
    ]
  })
  return sql<SharedRow>`
    with m as materialized (
      select ${sql.join(read)} from ${tableOf(on)}
      where ${sql.join(conditions(db, storeId, request, { on, whole: true }), sql` and `)}
    )
    ${sql.join([...arms, ...valueArm], sql` union all `)}`
}
