import { inTransaction } from '../db/transactions.js'
import type { Executor } from '../db/schema.js'
import { buildSearchDocument } from './search-document.js'
import {
  refreshSearchDocuments,
  SEARCH_TEXT_SOURCES,
  writeSearchDocuments,
  type NewDocumentProduct,
} from './search-document.repository.js'

/**
 * A write's unit of work with the search documents of the products it changed written in the
 * same transaction, after it (`productIds` of its result): up to date at commit. On
 * PostgreSQL a unit that was one statement now runs in a transaction of its own. `locked`:
 * the work locks (or updates) the row of every product it answers, so the documents' read
 * needs no lock of its own (refreshSearchDocuments).
 */
export function withSearchDocuments<T>(
  storeId: string,
  productIds: (result: T) => readonly string[],
  work: (db: Executor) => Promise<T>,
  locked = false,
): (db: Executor) => Promise<T> {
  return (db) =>
    inTransaction(db, async (tx) => {
      const result = await work(tx)
      await refreshSearchDocuments(tx, storeId, productIds(result), locked)
      return result
    })
}

/**
 * A create's unit of work with its new product's document, built from the product it
 * answers (no variants yet) and the text sources' texts of it: written without reading the
 * product back.
 */
export function withNewProductDocument<T>(
  storeId: string,
  documentProduct: (result: T) => NewDocumentProduct,
  work: (db: Executor) => Promise<T>,
): (db: Executor) => Promise<T> {
  return (db) =>
    inTransaction(db, async (tx) => {
      const result = await work(tx)
      const product = documentProduct(result)
      const extra: string[] = []
      for (const source of SEARCH_TEXT_SOURCES) {
        extra.push(...(await source.ofNewProduct(tx, storeId, product)))
      }
      await writeSearchDocuments(
        tx,
        storeId,
        [product.id],
        [buildSearchDocument(product, [], extra)],
        true,
      )
      return result
    })
}
