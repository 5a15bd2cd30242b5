import { sql, type RawBuilder } from 'kysely'
import type { Executor } from '../db/schema.js'
import { validationFailed } from '../errors.js'
import { definitionsOfOwner } from './values/metafield-definition.repository.js'
import type { MetafieldType } from './values/metafield-types.js'

/**
 * The search's side of filterable attributes: `metafield.<namespace>.<key>=<value>` filters
 * and facets of the product list, served by the metafield_values index (decision 0040).
 */

export interface MetafieldFilter {
  definitionId: string
  type: MetafieldType
  /** The values asked, as the index holds them (each item's JSON text); any of them matches. */
  values: string[]
}

const PARAMETER = /^metafield\.([a-z0-9_-]{2,64})\.([a-z0-9_-]{2,64})$/

/** Whether a query parameter's name is a metafield filter or facet name. */
export function isMetafieldParameter(name: string): boolean {
  return PARAMETER.test(name)
}

/**
 * Reads `metafield.<ns>.<key>` parameters: each must name a filterable definition of the
 * store (a product's, or a variant's, which matches its product), and each value must read as
 * the attribute's type; else 400 naming the parameter.
 */
export async function metafieldFilters(
  db: Executor,
  storeId: string,
  parameters: Record<string, string[]>,
): Promise<MetafieldFilter[]> {
  const names = Object.keys(parameters)
  if (names.length === 0) return []
  const definitions = await filterableDefinitions(db, storeId)
  return names.map((name) => {
    const definition = definitions.get(name)
    if (definition === undefined) {
      throw validationFailed([
        { field: name, message: 'must name a filterable metafield definition of the store' },
      ])
    }
    const values = parameters[name]!.map((text) => {
      const value = queryValue(definition.type, text)
      if (value === undefined) {
        throw validationFailed([
          { field: name, message: `must be a value of type ${definition.type}` },
        ])
      }
      return value
    })
    return { definitionId: definition.id, type: definition.type, values }
  })
}

/** The store's filterable definitions by parameter name, `metafield.<ns>.<key>`. */
export async function filterableDefinitions(
  db: Executor,
  storeId: string,
): Promise<Map<string, { id: string; type: MetafieldType; owner: string }>> {
  const rows = [
    ...(await definitionsOfOwner(db, storeId, 'product')),
    ...(await definitionsOfOwner(db, storeId, 'variant')),
  ]
  return new Map(
    rows
      .filter((row) => row.filterable === true || row.filterable === 1)
      .map((row) => [
        `metafield.${row.namespace}.${row.key}`,
        { id: row.id, type: row.type as MetafieldType, owner: row.owner },
      ]),
  )
}

/**
 * A query value read as the attribute's type (a list's item type), as the index's JSON text;
 * undefined when it is not one.
 */
export function queryValue(type: MetafieldType, text: string): string | undefined {
  switch (type) {
    case 'number_integer':
    case 'list.number_integer':
      return /^-?\d{1,16}$/.test(text) && Number.isSafeInteger(Number(text))
        ? JSON.stringify(Number(text))
        : undefined
    case 'number_decimal':
      return /^-?\d+(\.\d+)?([eE][+-]?\d+)?$/.test(text) && Number.isFinite(Number(text))
        ? JSON.stringify(Number(text))
        : undefined
    case 'boolean':
      return text === 'true' || text === 'false' ? text : undefined
    case 'color':
      return /^#[0-9a-fA-F]{6}$/.test(text) ? JSON.stringify(text.toLowerCase()) : undefined
    case 'date_time': {
      const time = Date.parse(text)
      return Number.isNaN(time) ? undefined : JSON.stringify(new Date(time).toISOString())
    }
    case 'json':
      try {
        return JSON.stringify(JSON.parse(text))
      } catch {
        return undefined
      }
    default:
      return JSON.stringify(text)
  }
}

/**
 * The condition "the product `productId` (a column reference) has one of the filter's values".
 * `page` (a sorted page, which may stop early): one probe of metafield_values' primary key per
 * candidate and value. `whole` (every match read, no word to drive it): the products listed
 * by the values' own rows of the primary key, so that the read starts from them rather than
 * from every product of the store (an `in`: a product is one match however many rows hold it).
 */
export function metafieldCondition(
  storeId: string,
  productId: string,
  filter: MetafieldFilter,
  read: 'page' | 'whole' = 'page',
): RawBuilder<boolean> {
  const holding = sql`metafield_values mv
    where mv.store_id = ${storeId} and mv.definition_id = ${filter.definitionId}
      and mv.value in (${sql.join(filter.values)})`
  if (read === 'whole')
    return sql<boolean>`${sql.ref(productId)} in (select mv.product_id from ${holding})`
  return sql<boolean>`exists (select 1 from ${holding} and mv.product_id = ${sql.ref(productId)})`
}

/**
 * A facet of a filterable attribute: its values (JSON, a number for a number attribute) with
 * how many of the products `matching` (a subquery of product ids, named `id`; undefined for
 * every product of the store) hold each, most first, then by value, at most `limit`. A
 * product attribute's rows are one per product and value, counted as they are; a variant
 * attribute's are one per variant, counted by product.
 * Matching products are read first, then their values by product (metafield_values_by_product:
 * SQLite takes CROSS JOIN's order as written), not every value of the definition; every
 * product's values are read by value, each once.
 */
export async function metafieldFacet(
  db: Executor,
  storeId: string,
  definitionId: string,
  matching: RawBuilder<unknown> | undefined,
  limit: number,
  owner: string,
): Promise<{ value: unknown; count: number }[]> {
  const { rows } = await metafieldFacetQuery(storeId, definitionId, matching, limit, owner).execute(
    db,
  )
  return rows.map((row) => ({ value: JSON.parse(row.value), count: Number(row.count) }))
}

/** The statement of metafieldFacet (EXPLAIN reads it too). */
export function metafieldFacetQuery(
  storeId: string,
  definitionId: string,
  matching: RawBuilder<unknown> | undefined,
  limit: number,
  owner: string,
): RawBuilder<{ value: string; count: number | string }> {
  const count = owner === 'product' ? sql`count(*)` : sql`count(distinct mv.product_id)`
  const from =
    matching === undefined
      ? sql`metafield_values mv`
      : sql`(${matching}) m cross join metafield_values mv`
  const byMatch = matching === undefined ? sql`` : sql`and mv.product_id = m.id`
  return sql<{ value: string; count: number | string }>`
    select mv.value as value, ${count} as count
    from ${from}
    where mv.store_id = ${storeId} and mv.definition_id = ${definitionId} ${byMatch}
    group by mv.value
    order by ${count} desc, lower(mv.value), mv.value
    limit ${limit}`
}
