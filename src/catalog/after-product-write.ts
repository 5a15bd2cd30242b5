import {
  lockRulesForProductWrites,
  refreshMemberships,
} from '../collections/membership/membership.js'
import { inTransaction } from '../db/transactions.js'
import { stampReadAtStart } from '../attributes/values/definition-cache.js'
import type { RulesState } from '../collections/membership/rules-state.repository.js'
import {
  refreshSearchDocuments,
  writeStoredDocuments,
  type NewDocumentProduct,
} from '../search/documents/search-document.repository.js'
import type { StoredProduct } from '../search/documents/search-document.postgres.js'
import {
  withAddedVariantDocument,
  withNewProductDocument,
  withSearchDocuments,
  type AddedVariant,
} from '../search/documents/search-documents.js'
import type { Work } from '../db/unit-of-work.js'

/** Which products a write of products or variants wrote (`products` of its result). */
export type Written<T> =
  /** One new product: its search document is built from what its create answers. */
  | { kind: 'created'; product: (result: T) => NewDocumentProduct }
  /**
   * Products written, read back for their documents. `created`: all new, so in no collection
   * yet; `locked`: the write locked (or updated) each product's row.
   */
  | {
      kind: 'written'
      products: (result: T) => readonly string[]
      created?: boolean
      locked?: boolean
    }
  /**
   * One variant added to its product: its part is appended to the product's document, or
   * the document rebuilt when the variant is not `last` in its product's order
   * (withAddedVariantDocument).
   */
  | { kind: 'added-variant'; variant: (result: T) => AddedVariant; last: boolean }
  /** A deleted product: its document goes (it left its collections in the write). */
  | { kind: 'deleted'; product: (result: T) => string }

/** A write that only creates products: no other write can hold their rows' locks. */
function isCreate<T>(written: Written<T>): boolean {
  return written.kind === 'created' || (written.kind === 'written' && written.created === true)
}

/**
 * Every write of products or variants (create, bulk create, PATCH, DELETE, and those of
 * variants): `work` in a transaction under the store's rules lock (shared), then, in the same
 * transaction once its rows are written, what follows from them, in this order: the search
 * documents of the products it wrote (search-documents.ts), then their memberships of smart
 * collections and the events of those (membership.ts). Exact at commit, whatever the path.
 */
export function afterProductWrite<T>(storeId: string, written: Written<T>, work: Work<T>): Work<T> {
  const documented =
    written.kind === 'created'
      ? withNewProductDocument(storeId, written.product, work)
      : written.kind === 'added-variant'
        ? withAddedVariantDocument(storeId, written.variant, written.last, work)
        : withSearchDocuments(
            storeId,
            (result) =>
              written.kind === 'deleted' ? [written.product(result)] : written.products(result),
            work,
            written.kind === 'deleted' || written.locked,
          )
  return (db) =>
    inTransaction(db, async (tx) => {
      const rules = await lockRulesForProductWrites(tx, storeId)
      if (rules.definitionStamp !== undefined && isCreate(written)) {
        stampReadAtStart(tx, storeId, rules.definitionStamp)
      }
      const result = await documented(tx)
      if (written.kind === 'created') {
        await refreshMemberships(tx, storeId, [written.product(result).id], rules, true)
      } else if (written.kind === 'written') {
        await refreshMemberships(tx, storeId, written.products(result), rules, written.created)
      } else if (written.kind === 'added-variant') {
        await refreshMemberships(tx, storeId, [written.variant(result).productId], rules)
      }
      return result
    })
}

/** What a write of one product that takes the store's rules lock itself answers. */
export interface SelfLockedWrite<T> {
  result: T
  /** The store's rules state, read under the rules lock that the work took before any row lock. */
  rules: RulesState
  /**
   * PostgreSQL: the product as its search document needs it, read after its row lock by the
   * work's own statement; undefined: read here.
   */
  document?: StoredProduct
}

/**
 * afterProductWrite for a write of one existing product whose work takes the store's rules
 * lock (shared) itself, before any row lock: a product's PATCH or a variant's, whose one
 * statement on PostgreSQL takes it, and reads what the product's document needs, with its
 * update (product-patch.repository.ts, variant-patch.repository.ts); their transaction paths
 * call lockRulesForProductWrites first, then lock the product's row. Then, as
 * afterProductWrite: the product's document, its memberships, in the same transaction.
 */
export function afterSelfLockedProductWrite<T>(
  storeId: string,
  productId: (result: T) => string,
  work: Work<SelfLockedWrite<T>>,
): Work<T> {
  return (db) =>
    inTransaction(db, async (tx) => {
      const { result, rules, document } = await work(tx)
      const id = productId(result)
      if (document) await writeStoredDocuments(tx, storeId, [id], [document])
      else await refreshSearchDocuments(tx, storeId, [id], true)
      await refreshMemberships(tx, storeId, [id], rules)
      return result
    })
}
