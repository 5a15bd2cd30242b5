import type { Executor, ProductRow } from '../db/schema.js'
import { isUuid } from '../db/values.js'
import { preconditionFailed, productNotFound } from '../errors.js'
import { ifMatchAllows } from '../http/conditional.js'
import { findProductForUpdate } from './product.repository.js'

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
