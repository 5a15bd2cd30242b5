import { sql } from 'kysely'
import type { Executor, ProductRow } from '../db/schema.js'
import type { VariantFields } from './variant.repository.js'

/**
 * A page of a store's products, oldest first, by (created_at, id): an export reads the
 * whole store this way, and an import of the file creates them in the same order again.
 */
export function listProductsOldestFirst(
  db: Executor,
  storeId: string,
  after: { createdAt: string; id: string } | undefined,
  limit: number,
): Promise<ProductRow[]> {
  let query = db.selectFrom('products').selectAll().where('store_id', '=', storeId)
  if (after) {
    query = query.where((eb) =>
      eb(eb.refTuple('created_at', 'id'), '>', eb.tuple(after.createdAt, after.id)),
    )
  }
  return query.orderBy('created_at').orderBy('id').limit(limit).execute()
}

/** The variants of some products of a store, each product's by position, then creation. */
export function listVariantsOfProducts(
  db: Executor,
  storeId: string,
  productIds: string[],
): Promise<VariantFields[]> {
  if (productIds.length === 0) return Promise.resolve([])
  return db
    .selectFrom('variants as v')
    .select([
      'id',
      'product_id',
      'name',
      'sku',
      'barcode',
      'price_e4',
      'compare_at_price_e4',
      'options',
      'position',
      'weight_grams',
      'version',
      'created_at',
      'updated_at',
    ])
    .where('store_id', '=', storeId)
    .where('product_id', 'in', productIds)
    .orderBy(sql`v.product_id, v.position, v.created_at, v.id`)
    .execute()
}
