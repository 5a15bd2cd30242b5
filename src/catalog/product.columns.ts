import type { NewProductRow } from '../db/schema.js'

// A new product row's values as the create statements take them (a fixed order, so that a
// statement compiled once binds them as arguments), and their columns by name.

/** A product row as the service makes it at creation, with the tag keys of its tags. */
export type NewProduct = Omit<NewProductRow, 'slug' | 'max_variant_position' | 'version'> & {
  /** JSON array of the lowercased tags: the rows of product_tags. */
  tag_keys: string
}

/** The values of a new product row but its slug, in the order of the insert statements. */
export function rowValues(row: NewProduct): RowValues {
  return [
    row.store_id,
    row.id,
    row.name,
    row.status,
    row.description ?? null,
    row.price_e4,
    row.compare_at_price_e4 ?? null,
    row.sku ?? null,
    row.barcode ?? null,
    row.tax_rate ?? null,
    row.vendor ?? null,
    row.product_type ?? null,
    row.tags,
    row.images,
    row.created_at,
    row.updated_at,
    row.metafields ?? '{}',
  ]
}

/** The values of the product's own fields that both a create and a PATCH write, in order. */
export type FieldValues = [
  description: string | null,
  priceE4: number,
  compareAtPriceE4: number | null,
  sku: string | null,
  barcode: string | null,
  taxRate: number | null,
  vendor: string | null,
  productType: string | null,
  tags: string,
  images: string,
]

/** The values of a product row but its slug, in the order of the insert statements. */
export type RowValues = [
  storeId: string,
  id: string,
  name: string,
  status: string,
  ...FieldValues,
  createdAt: string,
  updatedAt: string,
  metafields: string,
]

/** How many RowValues there are: a statement's own arguments follow them. */
export const ROW_VALUE_COUNT = 17

/** A product's columns but its slug, named. */
export function productColumns(values: readonly [...RowValues, ...string[]]) {
  const [storeId, id, name, status, description, priceE4, compareAtPriceE4, sku] = values
  const [, , , , , , , , barcode, taxRate, vendor, productType, tags, images] = values
  const [createdAt, updatedAt, metafields] = values.slice(14, 17) as [string, string, string]
  return {
    store_id: storeId,
    id,
    name,
    status,
    description,
    price_e4: priceE4,
    compare_at_price_e4: compareAtPriceE4,
    sku,
    barcode,
    tax_rate: taxRate,
    vendor,
    product_type: productType,
    tags,
    images,
    created_at: createdAt,
    updated_at: updatedAt,
    metafields,
  }
}
