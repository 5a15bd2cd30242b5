import {
  indexMetafields,
  mergeMetafields,
  type MergedMetafields,
} from '../attributes/values/metafield-values.js'
import { violatedUniqueConstraint } from '../db/driver-errors.js'
import type { Executor, ProductRow } from '../db/schema.js'
import { isUuid, nowIso } from '../db/values.js'
import { pendingEvent } from '../outbox/outbox.js'
import { ifMatchVersions } from '../http/conditional.js'
import { afterSelfLockedProductWrite, type SelfLockedWrite } from './after-product-write.js'
import { lockRulesForProductWrites } from '../collections/membership/membership.js'
import { rowToProduct } from './catalog.mappers.js'
import { type UpdateProductInput } from './catalog.schemas.js'
import { type Product } from './catalog-records.schemas.js'
import { toStoredAmount, toStoredAmountOrNull } from './money.js'
import { mergeProduct, sameFields, sentColumns, type PatchableFields } from './product-merge.js'
import {
  claimSlugSetByHand,
  updateProductRowWithEvent,
  type ProductChanges,
} from './product.repository.js'
import { lockProduct } from './product-write.js'
import type { Work } from '../db/unit-of-work.js'
import { duplicateSlug } from '../errors.js'
import { tagKey, tagKeysJson } from './record-fields.js'
import { checkTransition, statusesBarredFrom } from './transitions.js'
import { patchProductInOneStatement } from './product-patch.repository.js'
import { replaceProductTags } from './product-tags.repository.js'
import { type MetafieldValues } from '../attributes/values/metafield-types.js'
import { inTransaction } from '../db/transactions.js'

/**
 * The unit of work of a PATCH: a JSON Merge Patch of the product's fields. The checks run in
 * the contract's order (existence, If-Match, transition, then the slug's uniqueness); a patch
 * that changes nothing writes nothing, so the version and updatedAt stay as they are.
 *
 * Run by `writeAtomic`: on PostgreSQL a patch that sets neither slug, tags nor metafields is first tried
 * as one statement that writes only when every check passes (a round trip, as the creates
 * take, instead of four), and takes the store's rules lock and reads what the product's
 * search document needs in the same statement. When it writes nothing, the transaction path
 * takes the rules lock, reads the product and answers why, or makes the change if another
 * write got in between.
 */
export function updateProductWork(
  storeId: string,
  id: string,
  patch: UpdateProductInput,
  ifMatch: string | undefined,
): Work<Product> {
  return afterSelfLockedProductWrite(
    storeId,
    (product) => product.id,
    updateProductUnit(storeId, id, patch, ifMatch),
  )
}

function updateProductUnit(
  storeId: string,
  id: string,
  patch: UpdateProductInput,
  ifMatch: string | undefined,
): Work<SelfLockedWrite<Product>> {
  return async (db) => {
    const oneStatement =
      patch.slug === undefined && patch.tags === undefined && patch.metafields === undefined
    if (isUuid(id) && oneStatement) {
      const patched = await patchProductInOneStatement(db, {
        storeId,
        id: id.toLowerCase(),
        changes: sentColumns(patch),
        versions: ifMatchVersions(ifMatch),
        statusesBarred: patch.status ? statusesBarredFrom(patch.status) : [],
        updatedAt: nowIso(),
        event: pendingEvent('product.updated'),
      })
      if (patched) {
        const { row, rules, document } = patched
        return { result: rowToProduct(row), rules, document }
      }
    }
    // The store's rules lock before the product's row lock, as every product write takes them.
    const rules = await lockRulesForProductWrites(db, storeId)
    const result = await inTransaction(db, (tx) => updateProductIn(tx, storeId, id, patch, ifMatch))
    return { result, rules }
  }
}

/** The transaction path of a PATCH: read (locked), merge, check, write what changed. */
async function updateProductIn(
  db: Executor,
  storeId: string,
  id: string,
  patch: UpdateProductInput,
  ifMatch: string | undefined,
): Promise<Product> {
  const row = await lockProduct(db, storeId, id, ifMatch)
  const current = rowToProduct(row)
  const next = mergeProduct(current, patch)
  checkTransition(current.status, next.status)
  const merged = await mergeProductMetafields(db, storeId, current.metafields, patch.metafields)
  if (merged !== undefined) next.metafields = merged.values
  if (sameFields(current, next)) return current
  if (next.slug !== current.slug) await claimSlugSetByHand(db, storeId, next.slug)
  const event = pendingEvent('product.updated')
  let updated: ProductRow
  try {
    const changes = storedChanges(next, nowIso())
    updated = await updateProductRowWithEvent(db, storeId, row, changes, event)
  } catch (error) {
    if (violatedUniqueConstraint(error) !== 'products_slug_key') throw error
    throw duplicateSlug()
  }
  if (!sameTags(current.tags, next.tags)) {
    await replaceProductTags(
      db,
      { store_id: storeId, id: row.id, created_at: current.createdAt, status: next.status },
      tagKeysJson(next.tags),
    )
  }
  if (merged?.changed) {
    await indexMetafields(db, { storeId, recordId: row.id, productId: row.id }, merged)
  }
  return rowToProduct(updated)
}

/**
 * A PATCH's `metafields` merged into the product's (null removes every value); undefined
 * when the patch has none.
 */
async function mergeProductMetafields(
  db: Executor,
  storeId: string,
  current: MetafieldValues,
  sent: MetafieldValues | null | undefined,
): Promise<MergedMetafields | undefined> {
  if (sent === undefined) return undefined
  const patch = sent ?? Object.fromEntries(Object.keys(current).map((key) => [key, null]))
  return mergeMetafields(db, storeId, 'product', current, patch)
}

function sameTags(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((tag, i) => tagKey(tag) === tagKey(b[i]!))
}

function storedChanges(next: PatchableFields, now: string): ProductChanges {
  return [
    next.name,
    next.slug,
    next.status,
    next.description,
    toStoredAmount(next.price),
    toStoredAmountOrNull(next.compareAtPrice),
    next.sku,
    next.barcode,
    next.taxRate,
    next.vendor,
    next.productType,
    JSON.stringify(next.tags),
    JSON.stringify(next.images),
    now,
    JSON.stringify(next.metafields),
  ]
}
