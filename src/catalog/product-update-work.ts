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
import { beginProductWrite, lockProduct, productsWritten } from './product-write.js'
import type { Work } from '../db/unit-of-work.js'
import { duplicateSlug } from '../errors.js'
import { tagKey, tagKeysJson } from './record-fields.js'
import { checkTransition, statusesBarredFrom } from './transitions.js'
import {
  patchProductInOneStatement,
  type PatchedInOneStatement,
} from './product-patch.repository.js'
import { replaceProductTags } from './product-tags.repository.js'
import { type MetafieldValues } from '../attributes/values/metafield-types.js'
import { inTransaction } from '../db/transactions.js'

/**
 * The unit of work of a PATCH: a JSON Merge Patch of the product's fields. The checks run in
 * the contract's order (existence, If-Match, transition, then the slug's uniqueness); a patch
 * that changes nothing writes nothing, so the version and updatedAt stay as they are.
 *
 * On PostgreSQL a patch that sets neither slug, tags nor metafields is first tried as one
 * statement that writes only when every check passes, and that takes the store's rules lock
 * (before the row lock, as beginProductWrite) and reads what the product's search document
 * needs. When it writes nothing, the transaction path takes the rules lock, reads the
 * product and answers why, or makes the change if another write got in between.
 */
export function updateProductWork(
  storeId: string,
  id: string,
  patch: UpdateProductInput,
  ifMatch: string | undefined,
): Work<Product> {
  return (db) =>
    inTransaction(db, async (tx) => {
      const patched = await patchInOneStatement(tx, storeId, id, patch, ifMatch)
      if (patched) {
        await productsWritten(tx, storeId, patched.rules, {
          ids: [patched.row.id],
          documents: { kind: 'stored', product: patched.document },
        })
        return rowToProduct(patched.row)
      }
      const rules = await beginProductWrite(tx, storeId)
      const { product, changed } = await updateProductIn(tx, storeId, id, patch, ifMatch)
      if (changed) {
        await productsWritten(tx, storeId, rules, {
          ids: [product.id],
          documents: { kind: 'written', ids: [product.id], locked: true },
        })
      }
      return product
    })
}

/** PostgreSQL's one-statement PATCH, for a patch it can take (undefined: it did not write). */
async function patchInOneStatement(
  tx: Executor,
  storeId: string,
  id: string,
  patch: UpdateProductInput,
  ifMatch: string | undefined,
): Promise<PatchedInOneStatement | undefined> {
  const takes =
    patch.slug === undefined && patch.tags === undefined && patch.metafields === undefined
  if (!takes || !isUuid(id)) return undefined
  return patchProductInOneStatement(tx, {
    storeId,
    id: id.toLowerCase(),
    changes: sentColumns(patch),
    versions: ifMatchVersions(ifMatch),
    statusesBarred: patch.status ? statusesBarredFrom(patch.status) : [],
    updatedAt: nowIso(),
    event: pendingEvent('product.updated'),
  })
}

/**
 * The transaction path of a PATCH: read (locked), merge, check, write what changed.
 * `changed`: false when the patch changed nothing, and nothing was written.
 */
async function updateProductIn(
  db: Executor,
  storeId: string,
  id: string,
  patch: UpdateProductInput,
  ifMatch: string | undefined,
): Promise<{ product: Product; changed: boolean }> {
  const row = await lockProduct(db, storeId, id, ifMatch)
  const current = rowToProduct(row)
  const next = mergeProduct(current, patch)
  checkTransition(current.status, next.status)
  const merged = await mergeProductMetafields(db, storeId, current.metafields, patch.metafields)
  if (merged !== undefined) next.metafields = merged.values
  if (sameFields(current, next)) return { product: current, changed: false }
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
  return { product: rowToProduct(updated), changed: true }
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
