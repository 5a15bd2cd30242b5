import { keepingMemberships, leaveEveryCollection } from '../collections/membership.js'
import {
  indexMetafields,
  mergeMetafields,
  type MergedMetafields,
  type MetafieldValues,
} from '../attributes/metafield-values.js'
import { inTransaction, type Database } from '../db/database.js'
import { violatedUniqueConstraint } from '../db/driver-errors.js'
import type { Executor, ProductRow } from '../db/schema.js'
import { isUuid, newId, nowIso } from '../db/values.js'
import { AppError, productNotFound } from '../errors.js'
import { appendEvent, pendingEvent } from '../events/outbox.js'
import { ifMatchAllows, ifMatchVersions } from '../http/conditional.js'
import { rowToProduct, rowToVariant } from './catalog.mappers.js'
import { type CreateProductInput, type UpdateProductInput } from './catalog.schemas.js'
import { type Product, type ProductWithVariants } from './catalog-records.schemas.js'
import { toStoredAmount, toStoredAmountOrNull } from './money.js'
import {
  claimSlugSetByHand,
  deleteProductRow,
  findProductForUpdate,
  insertProductWithSlugSetByHand,
  insertProductWithUniqueSlug,
  patchProductInOneStatement,
  replaceProductTags,
  updateProductRow,
  type OneStatementChanges,
  type ProductChanges,
} from './product.repository.js'
import { normalizeImages, tagKey, tagKeysJson, uniqueTags } from './record-fields.js'
import { slugify } from './slug.js'
import { checkTransition, statusesBarredFrom } from './transitions.js'
import { findProductWithVariants } from './variant.repository.js'
import { withNewProductDocument, withSearchDocuments } from '../search/search-documents.js'

// The list moved to search (src/search/search.service.ts); its callers import it from here too.
export { listProducts } from '../search/search.service.js'

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

function duplicateSlug(): AppError {
  return new AppError('duplicate_slug', 'Another product in your store already has this slug.')
}

export function createProduct(
  database: Database,
  storeId: string,
  input: CreateProductInput,
): Promise<Product> {
  return database.writeAtomic(createProductWork(storeId, input))
}

/**
 * The unit of work behind createProduct, for a caller that runs it in its own write. With
 * `slug` (an import's handle), the product gets that slug as if set by hand: 409
 * duplicate_slug when another product of the store has it.
 */
export function createProductWork(
  storeId: string,
  input: CreateProductInput,
  slug?: string,
): Work<Product> {
  return keepingMemberships(
    storeId,
    withNewProductDocument(
      storeId,
      (product) => ({ ...product, product_type: product.productType }),
      (db) => createProductIn(db, storeId, input, slug),
    ),
    (product) => product.id,
    true,
  )
}

/**
 * The row of a new product but its slug, as a create writes it, in the column order its
 * product.created event shows (an import's batch builds its rows with this too).
 */
export function newProductRow(
  storeId: string,
  input: CreateProductInput,
  tags: string[],
  now: string,
) {
  return {
    store_id: storeId,
    id: newId(),
    name: input.name,
    status: input.status ?? 'draft',
    description: input.description ?? null,
    price_e4: toStoredAmount(input.price ?? 0),
    compare_at_price_e4: toStoredAmountOrNull(input.compare_at_price),
    sku: input.sku ?? null,
    barcode: input.barcode ?? null,
    tax_rate: input.tax_rate ?? null,
    vendor: input.vendor ?? null,
    product_type: input.product_type ?? null,
    tags: JSON.stringify(tags),
    images: JSON.stringify(normalizeImages(input.images ?? [])),
    created_at: now,
    updated_at: now,
    metafields: '{}',
  }
}

/**
 * A create with `metafields` checks them against the store's product definitions and writes
 * their filter index in the product's transaction; one without is the plain create.
 */
async function createProductIn(
  db: Executor,
  storeId: string,
  input: CreateProductInput,
  slugSetByHand?: string,
): Promise<Product> {
  const sent = input.metafields ?? {}
  if (Object.keys(sent).length === 0) return createProductRow(db, storeId, input, slugSetByHand)
  return inTransaction(db, async (tx) => {
    const merged = await mergeMetafields(tx, storeId, 'product', {}, sent)
    const product = await createProductRow(tx, storeId, input, slugSetByHand, merged.values)
    await indexMetafields(tx, { storeId, recordId: product.id, productId: product.id }, merged)
    return product
  })
}

async function createProductRow(
  db: Executor,
  storeId: string,
  input: CreateProductInput,
  slugSetByHand?: string,
  metafields?: MetafieldValues,
): Promise<Product> {
  const tags = uniqueTags(input.tags ?? [])
  const row = {
    ...newProductRow(storeId, input, tags, nowIso()),
    ...(metafields && { metafields: JSON.stringify(metafields) }),
  }
  const slug =
    slugSetByHand === undefined
      ? await insertProductWithUniqueSlug(
          db,
          { ...row, tag_keys: tagKeysJson(tags) },
          slugify(input.name),
          pendingEvent('product.created'),
        )
      : await inTransaction(db, async (tx) => {
          try {
            await insertProductWithSlugSetByHand(
              tx,
              { ...row, tag_keys: tagKeysJson(tags) },
              slugSetByHand,
            )
          } catch (error) {
            if (violatedUniqueConstraint(error) !== 'products_slug_key') throw error
            throw duplicateSlug()
          }
          const object = { ...row, slug: slugSetByHand, max_variant_position: 0, version: 1 }
          await appendEvent(tx, storeId, { type: 'product.created', object })
          return slugSetByHand
        })
  return rowToProduct({ ...row, slug, max_variant_position: 0, version: 1 })
}

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
  return keepingMemberships(
    storeId,
    withSearchDocuments(
      storeId,
      (product) => [product.id],
      updateProductUnit(storeId, id, patch, ifMatch),
      true,
    ),
    (product) => product.id,
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
  let updated: ProductRow
  try {
    updated = await updateProductRow(db, storeId, row.id, storedChanges(next, nowIso()))
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
  await appendEvent(db, storeId, { type: 'product.updated', object: updated, previous: row })
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

/** The unit of work of a DELETE of a product: its variants go with it. */
export function deleteProductWork(
  storeId: string,
  id: string,
  ifMatch: string | undefined,
): Work<Deleted> {
  return keepingMemberships(
    storeId,
    withSearchDocuments(
      storeId,
      (deleted) => [deleted.id],
      async (db) => {
        const row = await lockProduct(db, storeId, id, ifMatch)
        await leaveEveryCollection(db, storeId, row.id)
        await deleteProductRow(db, storeId, row.id)
        await appendEvent(db, storeId, { type: 'product.deleted', object: row })
        return { id: row.id, deleted: true }
      },
      true,
    ),
    () => undefined,
  )
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

export async function getProduct(
  database: Database,
  storeId: string,
  id: string,
): Promise<ProductWithVariants> {
  if (!isUuid(id)) throw productNotFound()
  const found = await findProductWithVariants(database.kysely, storeId, id.toLowerCase())
  if (!found) throw productNotFound()
  return { ...rowToProduct(found.product), variants: found.variants.map(rowToVariant) }
}
