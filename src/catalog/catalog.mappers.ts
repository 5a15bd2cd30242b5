import { storedMetafields } from '../attributes/values/metafield-types.js'
import type { ProductRow } from '../db/schema.js'
import { toIso } from '../db/values.js'
import type { ProductStatus } from './catalog.schemas.js'
import type { Product, Variant } from './catalog-records.schemas.js'
import { fromStoredAmount, fromStoredAmountOrNull } from './money.js'
import type { VariantFields } from './variant.columns.js'

export function rowToProduct(row: ProductRow): Product {
  return {
    id: row.id,
    name: row.name,
    slug: row.slug,
    status: row.status as ProductStatus,
    price: fromStoredAmount(row.price_e4),
    compareAtPrice: fromStoredAmountOrNull(row.compare_at_price_e4),
    sku: row.sku,
    description: row.description,
    barcode: row.barcode,
    taxRate: row.tax_rate,
    vendor: row.vendor,
    productType: row.product_type,
    tags: fromJson(row.tags),
    images: fromJson(row.images),
    metafields: storedMetafields(row.metafields),
    version: row.version,
    createdAt: toIso(row.created_at),
    updatedAt: toIso(row.updated_at),
  }
}

export function rowToVariant(row: VariantFields): Variant {
  return {
    id: row.id,
    productId: row.product_id,
    name: row.name,
    sku: row.sku,
    barcode: row.barcode,
    price: fromStoredAmount(row.price_e4),
    compareAtPrice: fromStoredAmountOrNull(row.compare_at_price_e4),
    options: fromJson(row.options),
    position: row.position,
    weightGrams: row.weight_grams,
    metafields: storedMetafields(row.metafields),
    version: row.version,
    createdAt: toIso(row.created_at),
    updatedAt: toIso(row.updated_at),
  }
}

/** A JSON column: SQLite keeps the text, PostgreSQL's json columns arrive parsed. */
function fromJson<T>(value: string | T): T {
  return typeof value === 'string' ? (JSON.parse(value) as T) : value
}
