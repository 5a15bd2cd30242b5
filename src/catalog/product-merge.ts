import type { UpdateProductInput } from './catalog.schemas.js'
import type { Product } from './catalog-records.schemas.js'
import { toStoredAmount, toStoredAmountOrNull } from './money.js'
import type { OneStatementChanges } from './product-patch.repository.js'
import { normalizeImages, uniqueTags } from './record-fields.js'

// The merge rule of a product's PATCH (JSON Merge Patch of its fields): a field sent replaces
// the stored one, null clears it, a field not sent keeps it. sentFields says, once, what each
// field sent becomes. The transaction path merges it here; PostgreSQL's one-statement PATCH
// sends the same values, as columns, to a statement that applies the rule in SQL
// (db/merge-patch-sql.ts).

/** The fields a merge patch may change. */
export type PatchableFields = Omit<Product, 'id' | 'version' | 'createdAt' | 'updatedAt'>

/** The fields a patch sends, as the product will hold them; a field not sent is undefined. */
export function sentFields(patch: UpdateProductInput): Partial<PatchableFields> {
  return {
    name: patch.name,
    slug: patch.slug,
    status: patch.status,
    description: patch.description,
    price: patch.price,
    compareAtPrice: patch.compare_at_price,
    sku: patch.sku,
    barcode: patch.barcode,
    taxRate: patch.tax_rate,
    vendor: patch.vendor,
    productType: patch.product_type,
    tags: patch.tags === undefined ? undefined : uniqueTags(patch.tags ?? []),
    images: patch.images === undefined ? undefined : normalizeImages(patch.images ?? []),
  }
}

/** The product's fields as `patch` leaves them (its metafields are merged on their own). */
export function mergeProduct(current: Product, patch: UpdateProductInput): PatchableFields {
  const { id: _id, version: _version, createdAt: _created, updatedAt: _updated, ...next } = current
  for (const [field, value] of Object.entries(sentFields(patch))) {
    if (value !== undefined) Object.assign(next, { [field]: value })
  }
  return next
}

/** The fields a patch sends, as the one-statement PATCH's columns take them. */
export function sentColumns(patch: UpdateProductInput): OneStatementChanges {
  const sent = sentFields(patch)
  return {
    name: sent.name,
    description: sent.description,
    status: sent.status,
    price_e4: sent.price === undefined ? undefined : toStoredAmount(sent.price),
    compare_at_price_e4:
      sent.compareAtPrice === undefined ? undefined : toStoredAmountOrNull(sent.compareAtPrice),
    sku: sent.sku,
    barcode: sent.barcode,
    tax_rate: sent.taxRate,
    vendor: sent.vendor,
    product_type: sent.productType,
    images: sent.images === undefined ? undefined : JSON.stringify(sent.images),
  }
}

/** Whether every field of `next` is what `current` holds: lists and images compared whole. */
export function sameFields(current: Product, next: PatchableFields): boolean {
  return (Object.keys(next) as (keyof PatchableFields)[]).every((field) =>
    field === 'tags' || field === 'images' || field === 'metafields'
      ? JSON.stringify(current[field]) === JSON.stringify(next[field])
      : Object.is(current[field], next[field]) || current[field] === next[field],
  )
}
