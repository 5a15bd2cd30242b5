import type { Executor } from '../db/schema.js'
import { storeDefinitions } from './definition-cache.js'
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
  const texts = new Map<string, string[]>()
  const searchable = new Set(
    (await storeDefinitions(db, storeId)).rows
      .filter((row) => row.searchable === true || row.searchable === 1)
      .map((row) => `${row.owner}:${row.namespace}.${row.key}`),
  )
  if (searchable.size === 0 || productIds.length === 0) return texts
  for (const record of await metafieldsOfProducts(db, storeId, productIds)) {
    for (const [key, value] of Object.entries(storedMetafields(record.metafields))) {
      if (!searchable.has(`${record.owner}:${key}`)) continue
      const list = texts.get(record.productId)
      if (list) list.push(...textsOf(value))
      else texts.set(record.productId, [...textsOf(value)])
    }
  }
  return texts
}
