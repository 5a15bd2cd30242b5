import {
  indexMetafields,
  mergeMetafields,
  type MergedMetafields,
} from '../attributes/metafield-values.js'
import { violatedUniqueConstraint } from '../db/driver-errors.js'
import type { Executor, ProductRow } from '../db/schema.js'
import { isUuid, nowIso } from '../db/values.js'
import { pendingEvent } from '../events/outbox.js'
import { ifMatchVersions } from '../http/conditional.js'
import { afterProductWrite } from './after-product-write.js'
import { rowToProduct } from './catalog.mappers.js'
import { type UpdateProductInput } from './catalog.schemas.js'
import { type Product } from './catalog-records.schemas.js'
import { toStoredAmount, toStoredAmountOrNull } from './money.js'
import {
  claimSlugSetByHand,
  updateProductRowWithEvent,
  type ProductChanges,
} from './product.repository.js'
import { duplicateSlug, lockProduct, type Work } from './product-write.js'
import { normalizeImages, tagKey, tagKeysJson, uniqueTags } from './record-fields.js'
import { checkTransition, statusesBarredFrom } from './transitions.js'
import { patchProductInOneStatement, type OneStatementChanges } from './product-patch.repository.js'
import { replaceProductTags } from './product-tags.repository.js'
import { type MetafieldValues } from '../attributes/metafield-types.js'
import { inTransaction } from '../db/transactions.js'

/**
 * The unit of work of a PATCH: a JSON Merge Patch of the product's fields. The checks run in
 * the contract's order (existence, If-Match, transition, then the slug's uniqueness); a patch
 * that changes nothing writes nothing, so the version and updatedAt stay as they are.
 *
 * Run by `writeAtomic`: on PostgreSQL a patch that sets neither slug, tags nor metafields is first tried
 * as one statement that writes only when every check passes (a round trip, as the creates
 * take, instead of four). When it writes nothing, the transaction path reads the product and
 * answers why, or makes the change if another write got in between.
 */
export function updateProductWork(
  storeId: string,
  id: string,
  patch: UpdateProductInput,
  ifMatch: string | undefined,
): Work<Product> {
  return afterProductWrite(
    storeId,
    { kind: 'written', products: (product) => [product.id], locked: true },
    updateProductUnit(storeId, id, patch, ifMatch),
  )
}

function updateProductUnit(
  storeId: string,
  id: string,
  patch: UpdateProductInput,
  ifMatch: string | undefined,
): Work<Product> {
  return async (db) => {
    const oneStatement =
      patch.slug === undefined && patch.tags === undefined && patch.metafields === undefined
    if (isUuid(id) && oneStatement) {
      const row = await patchProductInOneStatement(db, {
        storeId,
        id: id.toLowerCase(),
        changes: oneStatementChanges(patch),
        versions: ifMatchVersions(ifMatch),
        statusesBarred: patch.status ? statusesBarredFrom(patch.status) : [],
        updatedAt: nowIso(),
        event: pendingEvent('product.updated'),
      })
      if (row) return rowToProduct(row)
    }
    return inTransaction(db, (tx) => updateProductIn(tx, storeId, id, patch, ifMatch))
  }
}

/**
 * A patch's values as the product's columns hold them, for the one-statement path. The
 * statement compares them with the stored ones as they are, so they are stored as a create
 * would store them.
 */
function oneStatementChanges(patch: UpdateProductInput): OneStatementChanges {
  const amount = (value: number | null | undefined) =>
    value === undefined ? undefined : toStoredAmountOrNull(value)
  return {
    name: patch.name,
    description: patch.description,
    status: patch.status,
    price_e4: amount(patch.price),
    compare_at_price_e4: amount(patch.compare_at_price),
    sku: patch.sku,
    barcode: patch.barcode,
    tax_rate: patch.tax_rate,
    vendor: patch.vendor,
    product_type: patch.product_type,
    images:
      patch.images === undefined ? undefined : JSON.stringify(normalizeImages(patch.images ?? [])),
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

/** The fields a merge patch may change, with the values a patch gives them. */
type PatchableFields = Omit<Product, 'id' | 'version' | 'createdAt' | 'updatedAt'>

function mergeProduct(current: Product, patch: UpdateProductInput): PatchableFields {
  const pick = <T>(sent: T | null | undefined, stored: T, cleared: T): T =>
    sent === undefined ? stored : sent === null ? cleared : sent
  return {
    name: patch.name ?? current.name,
    slug: patch.slug ?? current.slug,
    status: patch.status ?? current.status,
    description: pick(patch.description, current.description, null),
    price: patch.price ?? current.price,
    compareAtPrice: pick(patch.compare_at_price, current.compareAtPrice, null),
    sku: pick(patch.sku, current.sku, null),
    barcode: pick(patch.barcode, current.barcode, null),
    taxRate: pick(patch.tax_rate, current.taxRate, null),
    vendor: pick(patch.vendor, current.vendor, null),
    productType: pick(patch.product_type, current.productType, null),
    tags: patch.tags === undefined ? current.tags : uniqueTags(patch.tags ?? []),
    images: patch.images === undefined ? current.images : normalizeImages(patch.images ?? []),
    metafields: current.metafields,
  }
}

/** Whether every field of `next` is what `current` holds: lists and images compared whole. */
function sameFields(current: Product, next: PatchableFields): boolean {
  return (Object.keys(next) as (keyof PatchableFields)[]).every((field) =>
    field === 'tags' || field === 'images' || field === 'metafields'
      ? JSON.stringify(current[field]) === JSON.stringify(next[field])
      : Object.is(current[field], next[field]) || current[field] === next[field],
  )
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
