import { inTransaction } from '../db/transactions.js'
import type { Executor } from '../db/schema.js'
import { refreshSearchDocuments } from './search-document.repository.js'

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
