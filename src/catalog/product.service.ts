import { unindexProduct } from '../attributes/values/metafield-values.js'
import { leaveEveryCollection } from '../collections/membership/membership.js'
import type { Database } from '../db/database.js'
import { inTransaction } from '../db/transactions.js'
import { isUuid } from '../db/values.js'
import { productNotFound } from '../errors.js'
import { appendEvent } from '../outbox/outbox.js'
import { rowToProduct, rowToVariant } from './catalog.mappers.js'
import { type CreateProductInput } from './catalog.schemas.js'
import { type Product, type ProductWithVariants } from './catalog-records.schemas.js'
import { createProductWork } from './product-create-work.js'
import { deleteProductRow } from './product.repository.js'
import { beginProductWrite, lockProduct, productsWritten } from './product-write.js'
import type { Deleted, Work } from '../db/unit-of-work.js'
import { findProductWithVariants } from './variant-read.repository.js'

/**
 * The product service: what the routes call. The units of work of a create and of a PATCH
 * are in product-create-work.ts and product-update-work.ts (an import runs them in its own
 * writes), what every product write shares in product-write.ts, the list in
 * search/search.service.ts.
 */

export function createProduct(
  database: Database,
  storeId: string,
  input: CreateProductInput,
): Promise<Product> {
  return database.write(createProductWork(storeId, input))
}

/**
 * The unit of work of a DELETE of a product: its variants go with it, and before its row, its
 * places in collections and its filter index rows; its document after.
 */
export function deleteProductWork(
  storeId: string,
  id: string,
  ifMatch: string | undefined,
): Work<Deleted> {
  return (db) =>
    inTransaction(db, async (tx) => {
      const rules = await beginProductWrite(tx, storeId)
      const row = await lockProduct(tx, storeId, id, ifMatch)
      await leaveEveryCollection(tx, storeId, row.id)
      await unindexProduct(tx, storeId, row.id)
      await deleteProductRow(tx, storeId, row.id)
      await appendEvent(tx, storeId, { type: 'product.deleted', object: row })
      await productsWritten(tx, storeId, rules, {
        ids: [row.id],
        deleted: true,
        documents: { kind: 'written', ids: [row.id], locked: true },
      })
      return { id: row.id, deleted: true }
    })
}

export async function getProduct(
  database: Database,
  storeId: string,
  id: string,
): Promise<ProductWithVariants> {
  if (!isUuid(id)) throw productNotFound()
  const found = await findProductWithVariants(database.kysely, storeId, id.toLowerCase())
  if (!found) throw productNotFound()
  return { ...rowToProduct(found.product), variants: found.variants.map(rowToVariant) }
}
