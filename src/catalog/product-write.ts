import { stampReadAtStart } from '../attributes/values/definition-cache.js'
import {
  lockRulesForProductWrites,
  refreshMemberships,
} from '../collections/membership/membership.js'
import type { RulesState } from '../collections/membership/rules-state.repository.js'
import type { Executor, ProductRow } from '../db/schema.js'
import { isUuid } from '../db/values.js'
import { preconditionFailed, productNotFound } from '../errors.js'
import { ifMatchAllows } from '../http/conditional.js'
import { writeDocuments, type DocumentChange } from '../search/documents/search-documents.js'
import { findProductForUpdate } from './product.repository.js'

/*
 * Every write of products or variants (create, bulk create, PATCH, DELETE, and those of
 * variants) is one sequence in one transaction, in this order:
 *   const rules = await beginProductWrite(tx, storeId)   the store's rules lock, first
 *   ... load, decide, write the rows and the event ...
 *   await productsWritten(tx, storeId, rules, written)   what follows from the rows
 * so that whatever is derived from the products stays exact at commit, whatever the path.
 */

/**
 * Takes the store's rules lock (shared) and reads the store's rules state under it, before
 * any row lock, as every product write must, so that a rules change (which takes it
 * exclusive) and a product write never decide a membership from what the other has not
 * committed, and never wait on each other in a circle. `creates`: the write only creates
 * products, so no other write can hold their rows, and the definition stamp the state read
 * serves the write's first use of the definitions.
 */
export async function beginProductWrite(
  tx: Executor,
  storeId: string,
  options: { creates?: boolean } = {},
): Promise<RulesState> {
  const rules = await lockRulesForProductWrites(tx, storeId)
  if (options.creates && rules.definitionStamp !== undefined) {
    stampReadAtStart(tx, storeId, rules.definitionStamp)
  }
  return rules
}

/** The products a write wrote, for what follows it. */
export interface WrittenProducts {
  /** Their ids (a deleted product's included). */
  ids: readonly string[]
  /** New in this write, so in no collection yet. */
  created?: boolean
  /** Gone in this write: they left their collections in it. */
  deleted?: boolean
  /** What their search documents need to know of the write. */
  documents: DocumentChange
}

/**
 * What follows a write of products, in its transaction once its rows are written: each
 * structure derived from the products, brought up to date by the feature that owns it. A new
 * derived structure is one more line here.
 */
export async function productsWritten(
  tx: Executor,
  storeId: string,
  rules: RulesState,
  written: WrittenProducts,
): Promise<void> {
  await writeDocuments(tx, storeId, written.documents)
  if (!written.deleted) await refreshMemberships(tx, storeId, written.ids, rules, written.created)
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
