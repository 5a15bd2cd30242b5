import type { Executor } from '../../db/schema.js'
import {
  storeDefinitions,
  storeDefinitionsUnderStamp,
  type StoreDefinitions,
} from './definition-cache.js'
import { storedMetafields, textsOf } from './metafield-types.js'
import { metafieldsOfProducts } from './metafield-value.repository.js'

/**
 * The search's text source of custom attributes (decision 0042): the text values of the
 * store's searchable definitions held by each product or one of its variants. A store without
 * a searchable definition pays the read of its definition stamp (definition-cache.ts).
 */
export async function searchableMetafieldTexts(
  db: Executor,
  storeId: string,
  productIds: readonly string[],
): Promise<Map<string, string[]>> {
  const searchable = searchableKeys(await storeDefinitions(db, storeId))
  if (searchable.size === 0 || productIds.length === 0) return new Map()
  return textsOfRecords(searchable, await metafieldsOfProducts(db, storeId, productIds))
}

/** A product as the search documents' read answers it (search-document.postgres.ts). */
export interface ProductWithMetafields {
  id: string
  metafields: unknown
  variants: readonly { metafields: unknown }[]
  /** The store's definition stamp, read by the same statement. */
  definition_stamp: string | null
}

/**
 * The same texts as searchableMetafieldTexts, from products (and their variants) already
 * read with the store's definition stamp: no statement unless the definitions under that
 * stamp are not yet held in memory.
 */
export async function searchableMetafieldTextsOf(
  db: Executor,
  storeId: string,
  products: readonly ProductWithMetafields[],
): Promise<Map<string, string[]>> {
  if (products.length === 0) return new Map()
  const definitions = await storeDefinitionsUnderStamp(
    db,
    storeId,
    products[0]!.definition_stamp ?? undefined,
  )
  const searchable = searchableKeys(definitions)
  if (searchable.size === 0) return new Map()
  return textsOfRecords(
    searchable,
    products.flatMap((product) => [
      { productId: product.id, owner: 'product', metafields: product.metafields },
      ...product.variants.map((variant) => ({
        productId: product.id,
        owner: 'variant',
        metafields: variant.metafields,
      })),
    ]),
  )
}

/**
 * The searchable texts of one variant's custom attributes (`metafields` as stored or
 * answered): none, without a read, when it has no value.
 */
export async function searchableTextsOfVariant(
  db: Executor,
  storeId: string,
  metafields: unknown,
): Promise<string[]> {
  const values = storedMetafields(metafields)
  if (Object.keys(values).length === 0) return []
  const searchable = searchableKeys(await storeDefinitions(db, storeId))
  if (searchable.size === 0) return []
  const texts = textsOfRecords(searchable, [
    { productId: '', owner: 'variant', metafields: values },
  ])
  return texts.get('') ?? []
}

function searchableKeys(definitions: StoreDefinitions): Set<string> {
  return new Set(
    definitions.rows
      .filter((row) => row.searchable === true || row.searchable === 1)
      .map((row) => `${row.owner}:${row.namespace}.${row.key}`),
  )
}

function textsOfRecords(
  searchable: ReadonlySet<string>,
  records: readonly { productId: string; owner: string; metafields: unknown }[],
): Map<string, string[]> {
  const texts = new Map<string, string[]>()
  for (const record of records) {
    for (const [key, value] of Object.entries(storedMetafields(record.metafields))) {
      if (!searchable.has(`${record.owner}:${key}`)) continue
      const list = texts.get(record.productId)
      if (list) list.push(...textsOf(value))
      else texts.set(record.productId, [...textsOf(value)])
    }
  }
  return texts
}
