import type { Executor, ProductRow } from '../db/schema.js'
import { isUuid } from '../db/values.js'
import { AppError, productNotFound } from '../errors.js'
import { ifMatchAllows } from '../http/conditional.js'
import { findProductForUpdate } from './product.repository.js'

// What every write of a product shares: the unit of work's type, its errors, its lock.

/**
 * A write of the catalogue: one unit of work, run by `database.write` (or by the
 * idempotency writer, in the same transaction as its record). Whatever a change must also
 * record (an event, say) is one more step inside it.
 */
export type Work<T> = (db: Executor) => Promise<T>

/** What a delete answers: the id of the record that is gone. */
export interface Deleted {
  id: string
  deleted: true
}

/** Thrown when If-Match names no current version of the record. */
export function preconditionFailed(): AppError {
  return new AppError(
    'precondition_failed',
    'The record has changed since the version named in If-Match; read it again.',
  )
}

export function duplicateSlug(): AppError {
  return new AppError('duplicate_slug', 'Another product in your store already has this slug.')
}

/**
 * The product a write of it (or of one of its variants) is about, locked for the rest of the
 * unit of work: 404 when the store has no such product, then 412 when `ifMatch` is given
 * and names another version. The If-Match of a variant's write names the variant's version,
 * not the product's: leave it out here and check it on the variant.
 */
export async function lockProduct(
  db: Executor,
  storeId: string,
  id: string,
  ifMatch?: string,
): Promise<ProductRow> {
  if (!isUuid(id)) throw productNotFound()
  const row = await findProductForUpdate(db, storeId, id.toLowerCase())
  if (row === undefined) throw productNotFound()
  if (!ifMatchAllows(ifMatch, row.version)) throw preconditionFailed()
  return row
}
