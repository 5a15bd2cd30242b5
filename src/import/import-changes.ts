import { normalizeImages, uniqueTags } from '../catalog/record-fields.js'
import type { Product, Variant } from '../catalog/catalog-records.schemas.js'
import type { UpdateProductInput, UpdateVariantInput } from '../catalog/catalog.schemas.js'
import type { MappedVariant } from './product-mapping.js'
import { optionsKey } from '../catalog/variant-merge.js'

/**
 * What of a product or variant of the file would change the stored one: an import writes
 * only these fields, and a product none of whose fields change is not written at all.
 */

/** The fields of a PATCH that would change the stored product: empty when none would. */
export function productChanges(current: Product, fields: UpdateProductInput): UpdateProductInput {
  const patch: UpdateProductInput = {}
  const differs = <T>(a: T, b: T) => a !== b
  if (fields.name !== undefined && differs(fields.name, current.name)) patch.name = fields.name
  if (fields.status !== undefined && differs(fields.status, current.status))
    patch.status = fields.status
  if (fields.price !== undefined && differs(fields.price, current.price)) patch.price = fields.price
  const nullable = [
    ['description', 'description'],
    ['compare_at_price', 'compareAtPrice'],
    ['sku', 'sku'],
    ['barcode', 'barcode'],
    ['tax_rate', 'taxRate'],
    ['vendor', 'vendor'],
    ['product_type', 'productType'],
  ] as const
  for (const [field, out] of nullable) {
    const value = fields[field]
    if (value !== undefined && differs(value ?? null, current[out]))
      (patch as Record<string, unknown>)[field] = value
  }
  if (fields.tags !== undefined) {
    const tags = uniqueTags(fields.tags ?? [])
    if (JSON.stringify(tags) !== JSON.stringify(current.tags)) patch.tags = tags
  }
  if (fields.images !== undefined) {
    const images = normalizeImages(fields.images ?? [])
    if (JSON.stringify(images) !== JSON.stringify(current.images)) patch.images = images
  }
  const metafields = changedMetafields(current.metafields, fields.metafields)
  if (metafields) patch.metafields = metafields
  return patch
}

/** The values of the file that differ from the stored ones (a merge patch); none: undefined. */
function changedMetafields(
  stored: Record<string, unknown>,
  sent: Record<string, unknown> | null | undefined,
): Record<string, unknown> | undefined {
  if (!sent) return undefined
  const changed = Object.entries(sent).filter(
    ([key, value]) => JSON.stringify(value) !== JSON.stringify(stored[key]),
  )
  return changed.length > 0 ? Object.fromEntries(changed) : undefined
}

/** The fields of a variant's PATCH that would change the stored variant: empty when none. */
export function variantChanges(current: Variant, variant: MappedVariant): UpdateVariantInput {
  const patch: UpdateVariantInput = {}
  const input = variant.input
  const sets = variant.sets
  if (sets.has('name') && input.name !== current.name) patch.name = input.name
  if (sets.has('sku') && (input.sku ?? null) !== current.sku) patch.sku = input.sku ?? null
  if (sets.has('barcode') && (input.barcode ?? null) !== current.barcode)
    patch.barcode = input.barcode ?? null
  if (sets.has('price') && input.price != null && input.price !== current.price)
    patch.price = input.price
  if (sets.has('compare_at_price') && (input.compare_at_price ?? null) !== current.compareAtPrice)
    patch.compare_at_price = input.compare_at_price ?? null
  if (sets.has('weight_grams') && (input.weight_grams ?? null) !== current.weightGrams)
    patch.weight_grams = input.weight_grams ?? null
  if (sets.has('options') && optionsKey(input.options ?? {}) !== optionsKey(current.options))
    patch.options = input.options ?? {}
  const metafields = changedMetafields(current.metafields, input.metafields)
  if (metafields) patch.metafields = metafields
  return patch
}
