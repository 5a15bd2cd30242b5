import { inTransaction } from '../db/transactions.js'
import type { Executor } from '../db/schema.js'
import { buildSearchDocument, type DocumentProduct } from './search-document.js'
import {
  refreshSearchDocuments,
  SEARCH_TEXT_SOURCES,
  writeSearchDocuments,
} from './search-document.repository.js'

/**
 * A write's unit of work with the search documents of the products it changed written in the
 * same transaction, after it (`productIds` of its result): up to date at commit. On
 * PostgreSQL a unit that was one statement now runs in a transaction of its own.
 */
export function withSearchDocuments<T>(
  storeId: string,
  productIds: (result: T) => readonly string[],
  work: (db: Executor) => Promise<T>,
): (db: Executor) => Promise<T> {
  return (db) =>
    inTransaction(db, async (tx) => {
      const result = await work(tx)
      await refreshSearchDocuments(tx, storeId, productIds(result))
      return result
    })
}

/**
 * A create's unit of work with its new product's document, built from the product it
 * answers (no variants yet): written without reading anything back. With other text sources
 * registered, it reads as every other write does.
 */
export function withNewProductDocument<T>(
  storeId: string,
  documentProduct: (result: T) => DocumentProduct,
  work: (db: Executor) => Promise<T>,
): (db: Executor) => Promise<T> {
  return (db) =>
    inTransaction(db, async (tx) => {
      const result = await work(tx)
      const product = documentProduct(result)
      if (SEARCH_TEXT_SOURCES.length > 0) {
        await refreshSearchDocuments(tx, storeId, [product.id])
      } else {
        await writeSearchDocuments(
          tx,
          storeId,
          [product.id],
          [buildSearchDocument(product, [])],
          true,
        )
      }
      return result
    })
}
