import { sql } from 'kysely'
import type { VariantRow } from '../db/schema.js'

/** The columns a variant's insert writes, in the order of its values. */
export const VARIANT_INSERT_COLUMNS = [
  'store_id',
  'id',
  'product_id',
  'name',
  'sku',
  'barcode',
  'price_e4',
  'compare_at_price_e4',
  'options',
  'options_key',
  'position',
  'weight_grams',
  'created_at',
  'updated_at',
  'metafields',
] as const

/** A variant as the reads return it: every column the API shows. */
export type VariantFields = Omit<VariantRow, 'store_id' | 'options_key'>

/** The columns of VariantFields: what the reads return of each variant. */
export const VARIANT_READ_COLUMNS = [
  ...VARIANT_INSERT_COLUMNS.filter((column) => column !== 'store_id' && column !== 'options_key'),
  'version',
] as const

/** The order of a product's variants, on both dialects: by position, then creation. */
export const VARIANT_ORDER = sql`v.position, v.created_at, v.id`
