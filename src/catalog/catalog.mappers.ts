import type { ProductRow } from '../db/schema.js'
import { toIso } from '../db/values.js'
import type { Product, ProductStatus, Variant } from './catalog.schemas.js'
import { fromStoredAmount, fromStoredAmountOrNull } from './money.js'
import type { VariantFields } from './variant.repository.js'

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
    // SQLite keeps the JSON as text; PostgreSQL's json column arrives parsed.
    options: typeof row.options === 'string' ? JSON.parse(row.options) : row.options,
    position: row.position,
    createdAt: toIso(row.created_at),
    updatedAt: toIso(row.updated_at),
  }
}
