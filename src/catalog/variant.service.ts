import {
  indexMetafields,
  mergeMetafields,
  unindexRecord,
  type MergedMetafields,
} from '../attributes/values/metafield-values.js'
import { type Database } from '../db/database.js'
import type { Executor } from '../db/schema.js'
import { isUuid, newId, nowIso } from '../db/values.js'
import { preconditionFailed, productNotFound, variantNotFound } from '../errors.js'
import { appendEvent, pendingEvent } from '../outbox/outbox.js'
import { ifMatchAllows, ifMatchVersions } from '../http/conditional.js'
import { rowToVariant } from './catalog.mappers.js'
import {
  MAX_POSITION,
  type CreateVariantInput,
  type UpdateVariantInput,
} from './catalog.schemas.js'
import { type Variant } from './catalog-records.schemas.js'
import { toStoredAmount, toStoredAmountOrNull } from './money.js'
import { getProduct } from './product.service.js'
import { touchProductForVariants } from './product.repository.js'
import {
  deleteVariantRow,
  insertVariantIntoProduct,
  updateVariantRow,
} from './variant.repository.js'
import { conflictError, positionOverflow, skuFirstConflict } from './variant-conflicts.js'
import { mergeVariant, optionsKey, sameFields, sentColumns } from './variant-merge.js'
import { beginProductWrite, lockProduct, productsWritten } from './product-write.js'
import type { Deleted, Work } from '../db/unit-of-work.js'
import { findVariant, findVariantBySku } from './variant-read.repository.js'
import {
  patchVariantInOneStatement,
  type PatchedVariantInOneStatement,
} from './variant-patch.repository.js'
import { type VariantFields } from './variant.columns.js'
import { storedMetafields, type MetafieldValues } from '../attributes/values/metafield-types.js'
import { inTransaction } from '../db/transactions.js'

export function addVariant(
  database: Database,
  storeId: string,
  productId: string,
  input: CreateVariantInput,
): Promise<Variant> {
  if (!isUuid(productId)) return Promise.reject(productNotFound())
  return database.write(addVariantWork(storeId, productId, input))
}

/** The unit of work behind addVariant, for a caller that runs it in its own write. */
export function addVariantWork(
  storeId: string,
  productId: string,
  input: CreateVariantInput,
): Work<Variant> {
  return (db) =>
    inTransaction(db, async (tx) => {
      const rules = await beginProductWrite(tx, storeId)
      if (!isUuid(productId)) throw productNotFound()
      const variant = await addVariantIn(tx, storeId, productId.toLowerCase(), input)
      await productsWritten(tx, storeId, rules, {
        ids: [variant.productId],
        // Without a position sent, the variant goes last: one more than the highest.
        documents: { kind: 'added-variant', variant, last: input.position == null },
      })
      return variant
    })
}

/**
 * A new variant's columns as an add writes them, in the order its variant.created event
 * shows; a price or position left out is null, for the product's default (an import's batch
 * builds its rows with this too).
 */
export function newVariantFields(
  storeId: string,
  productId: string,
  input: CreateVariantInput,
  now: string,
) {
  const options = input.options ?? {}
  return {
    store_id: storeId,
    id: newId(),
    product_id: productId,
    name: input.name,
    sku: input.sku ?? null,
    barcode: input.barcode ?? null,
    price_e4: input.price == null ? null : toStoredAmount(input.price),
    compare_at_price_e4: toStoredAmountOrNull(input.compare_at_price),
    options: JSON.stringify(options),
    options_key: optionsKey(options),
    position: input.position ?? null,
    weight_grams: input.weight_grams ?? null,
    created_at: now,
    updated_at: now,
    metafields: '{}',
  }
}

async function addVariantIn(
  tx: Executor,
  storeId: string,
  productId: string,
  input: CreateVariantInput,
): Promise<Variant> {
  const sent = input.metafields ?? {}
  if (Object.keys(sent).length === 0) return insertVariantIn(tx, storeId, productId, input)
  const merged = await mergeMetafields(tx, storeId, 'variant', {}, sent)
  const variant = await insertVariantIn(tx, storeId, productId, input, merged.values)
  await indexMetafields(tx, { storeId, recordId: variant.id, productId }, merged)
  return variant
}

async function insertVariantIn(
  db: Executor,
  storeId: string,
  productId: string,
  input: CreateVariantInput,
  metafields?: MetafieldValues,
): Promise<Variant> {
  const fields = {
    ...newVariantFields(storeId, productId, input, nowIso()),
    ...(metafields && { metafields: JSON.stringify(metafields) }),
  }
  let inserted: { price_e4: number; position: number } | undefined
  try {
    inserted = await insertVariantIntoProduct(db, fields, pendingEvent('variant.created'))
  } catch (error) {
    throw (await skuFirstConflict(db, storeId, fields.id, fields.sku, error)) ?? error
  }
  if (!inserted) throw productNotFound()
  if (inserted.position > MAX_POSITION) throw positionOverflow()
  return rowToVariant({ ...fields, ...inserted, version: 1 })
}

/**
 * The unit of work of a PATCH of a variant: a JSON Merge Patch of its fields. The product is
 * locked first (every write of a product's variants locks it first, so two never wait on
 * each other in opposite orders), then the variant is found and its If-Match checked. A
 * real change raises the variant's version and its product's.
 *
 * On PostgreSQL a patch that leaves the position and the metafields alone is first tried as
 * one statement (see patchVariantInOneStatement), which also takes the store's rules lock
 * and reads what the product's search document needs; when it writes nothing, the
 * transaction path takes the rules lock, finds out why and answers it.
 */
export function updateVariantWork(
  storeId: string,
  productId: string,
  variantId: string,
  patch: UpdateVariantInput,
  ifMatch: string | undefined,
): Work<Variant> {
  return (db) =>
    inTransaction(db, async (tx) => {
      const patched = await patchInOneStatement(tx, storeId, productId, variantId, patch, ifMatch)
      if (patched) {
        await productsWritten(tx, storeId, patched.rules, {
          ids: [patched.row.product_id],
          documents: { kind: 'stored', product: patched.document },
        })
        return rowToVariant(patched.row)
      }
      const rules = await beginProductWrite(tx, storeId)
      const { variant, changed } = await updateVariantIn(
        tx,
        storeId,
        productId,
        variantId,
        patch,
        ifMatch,
      )
      if (changed) {
        await productsWritten(tx, storeId, rules, {
          ids: [variant.productId],
          documents: { kind: 'written', ids: [variant.productId], locked: true },
        })
      }
      return variant
    })
}

/** PostgreSQL's one-statement PATCH, for a patch it can take (undefined: it did not write). */
async function patchInOneStatement(
  tx: Executor,
  storeId: string,
  productId: string,
  variantId: string,
  patch: UpdateVariantInput,
  ifMatch: string | undefined,
): Promise<PatchedVariantInOneStatement | undefined> {
  const takes = patch.position === undefined && patch.metafields === undefined
  if (!takes || !isUuid(productId) || !isUuid(variantId)) return undefined
  const options = patch.options === undefined ? undefined : (patch.options ?? {})
  try {
    return await patchVariantInOneStatement(tx, {
      storeId,
      productId: productId.toLowerCase(),
      variantId: variantId.toLowerCase(),
      changes: sentColumns(patch),
      options: options && { text: JSON.stringify(options), key: optionsKey(options) },
      versions: ifMatchVersions(ifMatch),
      updatedAt: nowIso(),
      event: pendingEvent('variant.updated'),
    })
  } catch (error) {
    throw conflictError(error) ?? error
  }
}

/** The transaction path of a variant's PATCH: lock, find, check, write what changed. */
async function updateVariantIn(
  db: Executor,
  storeId: string,
  productId: string,
  variantId: string,
  patch: UpdateVariantInput,
  ifMatch: string | undefined,
): Promise<{ variant: Variant; changed: boolean }> {
  const { product, current } = await lockVariant(db, storeId, productId, variantId, ifMatch)
  const next = mergeVariant(current, patch)
  const merged = await mergeVariantMetafields(db, storeId, current, patch.metafields)
  if (merged !== undefined) next.metafields = JSON.stringify(merged.values)
  if (sameFields(current, next)) return { variant: rowToVariant(current), changed: false }
  const now = nowIso()
  let updated: VariantFields
  try {
    updated = await updateVariantRow(db, storeId, current.id, [
      next.name,
      next.sku,
      next.barcode,
      next.price_e4,
      next.compare_at_price_e4,
      next.options,
      optionsKey(JSON.parse(next.options) as Record<string, string>),
      next.position,
      next.weight_grams,
      now,
      next.metafields,
    ])
  } catch (error) {
    throw (await skuFirstConflict(db, storeId, current.id, next.sku, error)) ?? error
  }
  if (merged?.changed) {
    await indexMetafields(db, { storeId, recordId: current.id, productId: product }, merged)
  }
  await touchProductForVariants(db, storeId, product, now)
  await appendEvent(db, storeId, { type: 'variant.updated', object: updated, previous: current })
  return { variant: rowToVariant(updated), changed: true }
}

/** A PATCH's `metafields` merged into the variant's (null removes every value). */
async function mergeVariantMetafields(
  db: Executor,
  storeId: string,
  current: VariantFields,
  sent: MetafieldValues | null | undefined,
): Promise<MergedMetafields | undefined> {
  if (sent === undefined) return undefined
  const stored = storedMetafields(current.metafields)
  const patch = sent ?? Object.fromEntries(Object.keys(stored).map((key) => [key, null]))
  return mergeMetafields(db, storeId, 'variant', stored, patch)
}

/** The unit of work of a DELETE of a variant; the product's next default position follows. */
export function deleteVariantWork(
  storeId: string,
  productId: string,
  variantId: string,
  ifMatch: string | undefined,
): Work<Deleted> {
  return (db) =>
    inTransaction(db, async (tx) => {
      const rules = await beginProductWrite(tx, storeId)
      const { product, current } = await lockVariant(tx, storeId, productId, variantId, ifMatch)
      await deleteVariantRow(tx, storeId, current.id)
      await unindexRecord(tx, storeId, current.id, storedMetafields(current.metafields))
      await touchProductForVariants(tx, storeId, product, nowIso())
      await appendEvent(tx, storeId, { type: 'variant.deleted', object: current })
      await productsWritten(tx, storeId, rules, {
        ids: [product],
        documents: { kind: 'written', ids: [product], locked: true },
      })
      return { id: current.id, deleted: true }
    })
}

/** The product (locked) and the variant a write is about: 404, then 412, as the contract orders. */
async function lockVariant(
  db: Executor,
  storeId: string,
  productId: string,
  variantId: string,
  ifMatch: string | undefined,
): Promise<{ product: string; current: VariantFields }> {
  if (!isUuid(variantId)) throw variantNotFound()
  const product = await lockProduct(db, storeId, productId)
  const current = await findVariant(db, storeId, product.id, variantId.toLowerCase())
  if (current === undefined) throw variantNotFound()
  if (!ifMatchAllows(ifMatch, current.version)) throw preconditionFailed()
  return { product: product.id, current }
}

export async function getVariant(
  database: Database,
  storeId: string,
  productId: string,
  variantId: string,
): Promise<Variant> {
  if (!isUuid(productId) || !isUuid(variantId)) throw variantNotFound()
  const row = await findVariant(
    database.kysely,
    storeId,
    productId.toLowerCase(),
    variantId.toLowerCase(),
  )
  if (row === undefined) throw variantNotFound()
  return rowToVariant(row)
}

export async function listVariants(
  database: Database,
  storeId: string,
  id: string,
): Promise<Variant[]> {
  return (await getProduct(database, storeId, id)).variants
}

/** The store's variant with this sku (compared after trimming), as a list of one or none. */
export async function findVariantsBySku(
  database: Database,
  storeId: string,
  sku: string,
): Promise<Variant[]> {
  const row = await findVariantBySku(database.kysely, storeId, sku.trim())
  return row === undefined ? [] : [rowToVariant(row)]
}
