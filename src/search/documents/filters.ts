import { sql, type RawBuilder } from 'kysely'
import type { Executor } from '../../db/schema.js'
import { inList } from '../../db/values.js'

/**
 * The SQL of one filter condition on a product, each a small function of its values, on the
 * products aliased `p`: the list's filters use them, and so may collections' smart rules.
 * Every text value is given as the filter compares it (tags and options without case:
 * lowercased by the caller).
 */
export type Condition = RawBuilder<boolean>

/**
 * Which row of a product a condition reads: its row in `products` (`p`, the default: the
 * list's page without `q`, collections' rules), or its search document (`s`, product_search),
 * which holds the fields these conditions read (decision 0033).
 */
export interface ProductSide {
  alias: 'p' | 's'
  /** The product's id on that side. */
  id: string
}
export const PRODUCTS: ProductSide = { alias: 'p', id: 'p.id' }
export const DOCUMENTS: ProductSide = { alias: 's', id: 's.product_id' }

export function statusIn(
  db: Executor,
  statuses: readonly string[],
  on: ProductSide = PRODUCTS,
): Condition {
  return inList(db, `${on.alias}.status`, 'text', statuses)
}

export function slugIn(db: Executor, slugs: readonly string[]): Condition {
  return inList(db, 'p.slug', 'text', slugs)
}

export function vendorIn(
  db: Executor,
  vendors: readonly string[],
  on: ProductSide = PRODUCTS,
): Condition {
  return inList(db, `${on.alias}.vendor`, 'text', vendors)
}

export function productTypeIn(
  db: Executor,
  types: readonly string[],
  on: ProductSide = PRODUCTS,
): Condition {
  return inList(db, `${on.alias}.product_type`, 'text', types)
}

/** A value of the product's among `valueKeys` for facet `kind`/`nameKey` (search_facets). */
export function facetValueIn(
  db: Executor,
  kind: string,
  nameKey: string,
  valueKeys: readonly string[],
  on: ProductSide = PRODUCTS,
): Condition {
  return sql<boolean>`exists (select 1 from search_facets f
    where f.store_id = ${sql.ref(`${on.alias}.store_id`)} and f.kind = ${kind}
    and f.name_key = ${nameKey} and ${inList(db, 'f.value_key', 'text', valueKeys)}
    and f.product_id = ${sql.ref(on.id)})`
}

/** A tag among `tagKeys` (lowercased). */
export function tagIn(
  db: Executor,
  tagKeys: readonly string[],
  on: ProductSide = PRODUCTS,
): Condition {
  return facetValueIn(db, 'tag', '', tagKeys, on)
}

/** A variant whose option `nameKey` has a value among `valueKeys` (both lowercased). */
export function optionIn(
  db: Executor,
  nameKey: string,
  valueKeys: readonly string[],
  on: ProductSide = PRODUCTS,
): Condition {
  return facetValueIn(db, 'option', nameKey, valueKeys, on)
}

/** A member of one of the collections (ids, lowercased): the primary key of collection_products. */
export function inCollections(
  db: Executor,
  collectionIds: readonly string[],
  on: ProductSide = PRODUCTS,
): Condition {
  return sql<boolean>`exists (select 1 from collection_products cp
    where cp.store_id = ${sql.ref(`${on.alias}.store_id`)}
    and ${inList(db, 'cp.collection_id', 'uuid', collectionIds)}
    and cp.product_id = ${sql.ref(on.id)})`
}

/** The product's price (ten-thousandths) within the bounds, each inclusive, each optional. */
export function priceBetween(
  minE4: number | undefined,
  maxE4: number | undefined,
  on: ProductSide = PRODUCTS,
): Condition {
  const price = sql.ref(`${on.alias}.price_e4`)
  const bounds = [
    minE4 === undefined ? undefined : sql`${price} >= ${minE4}`,
    maxE4 === undefined ? undefined : sql`${price} <= ${maxE4}`,
  ].filter((bound) => bound !== undefined)
  return bounds.length === 0 ? sql<boolean>`1 = 1` : sql<boolean>`${sql.join(bounds, sql` and `)}`
}
