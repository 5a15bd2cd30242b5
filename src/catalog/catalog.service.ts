import { createHash } from 'node:crypto'
import type { Database } from '../db/database.js'
import { violatedUniqueConstraint } from '../db/driver-errors.js'
import type { Executor } from '../db/schema.js'
import { isUuid, newId, nowIso } from '../db/values.js'
import { AppError, productNotFound, validationFailed } from '../errors.js'
import { rowToProduct, rowToVariant } from './catalog.mappers.js'
import {
  DEFAULT_PAGE_SIZE,
  MAX_POSITION,
  type CreateProductInput,
  type CreateVariantInput,
  type ListProductsQuery,
  type Product,
  type ProductWithVariants,
  type Variant,
} from './catalog.schemas.js'
import { decodeCursor, encodeCursor } from './cursor.js'
import { toStoredAmount, toStoredAmountOrNull } from './money.js'
import { listProductRows, insertProductWithUniqueSlug } from './product.repository.js'
import { slugify } from './slug.js'
import { findProductWithVariants, insertVariantIntoProduct } from './variant.repository.js'

export function createProduct(
  database: Database,
  storeId: string,
  input: CreateProductInput,
): Promise<Product> {
  return database.writeAtomic(createProductWork(storeId, input))
}

/** The unit of work behind createProduct, for a caller that runs it in its own write. */
export function createProductWork(
  storeId: string,
  input: CreateProductInput,
): (db: Executor) => Promise<Product> {
  return (db) => createProductIn(db, storeId, input)
}

/** The unit of work behind createProduct. */
async function createProductIn(
  db: Executor,
  storeId: string,
  input: CreateProductInput,
): Promise<Product> {
  const now = nowIso()
  const row = {
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
    created_at: now,
    updated_at: now,
  }
  const slug = await insertProductWithUniqueSlug(db, row, slugify(input.name))
  return rowToProduct({ ...row, slug, max_variant_position: 0 })
}

export function addVariant(
  database: Database,
  storeId: string,
  productId: string,
  input: CreateVariantInput,
): Promise<Variant> {
  if (!isUuid(productId)) return Promise.reject(productNotFound())
  return database.writeAtomic(addVariantWork(storeId, productId, input))
}

/** The unit of work behind addVariant, for a caller that runs it in its own write. */
export function addVariantWork(
  storeId: string,
  productId: string,
  input: CreateVariantInput,
): (db: Executor) => Promise<Variant> {
  return async (db) => {
    if (!isUuid(productId)) throw productNotFound()
    return addVariantIn(db, storeId, productId.toLowerCase(), input)
  }
}

/** The unit of work behind addVariant. */
async function addVariantIn(
  db: Executor,
  storeId: string,
  productId: string,
  input: CreateVariantInput,
): Promise<Variant> {
  const options = input.options ?? {}
  const now = nowIso()
  const fields = {
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
    created_at: now,
    updated_at: now,
  }
  let inserted: { price_e4: number; position: number } | undefined
  try {
    inserted = await insertVariantIntoProduct(db, fields)
  } catch (error) {
    throw conflictError(error) ?? error
  }
  if (!inserted) throw productNotFound()
  if (inserted.position > MAX_POSITION) throw positionOverflow()
  return rowToVariant({ ...fields, ...inserted })
}

function positionOverflow(): AppError {
  return validationFailed([
    { field: 'position', message: `is required: the next position would pass ${MAX_POSITION}` },
  ])
}

/**
 * What makes two option sets the same: the same names with the same values, in any order.
 * Hashed so the unique index stays small whatever the options' size.
 */
export function optionsKey(options: Record<string, string>): string | null {
  const entries = Object.entries(options).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
  if (entries.length === 0) return null
  return createHash('sha256').update(JSON.stringify(entries)).digest('hex')
}

/** A database refusal of the insert, as the contract's error; undefined for anything else. */
function conflictError(error: unknown): AppError | undefined {
  // PostgreSQL: a default position past the integer column's range.
  if ((error as { code?: unknown }).code === '22003') return positionOverflow()
  switch (violatedUniqueConstraint(error)) {
    case 'variants_sku_key':
      return new AppError('duplicate_sku', 'Another variant in your store already has this sku.')
    case 'variants_options_key':
      return new AppError(
        'duplicate_options',
        'Another variant of this product already has these options.',
      )
    default:
      return undefined
  }
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

export async function listVariants(
  database: Database,
  storeId: string,
  id: string,
): Promise<Variant[]> {
  return (await getProduct(database, storeId, id)).variants
}

export async function listProducts(
  database: Database,
  storeId: string,
  query: ListProductsQuery,
): Promise<{ data: Product[]; nextCursor: string | null }> {
  // The query schema's default fills limit in; the fallback is for the type only.
  const limit = query.limit ?? DEFAULT_PAGE_SIZE
  const rows = await listProductRows(database.kysely, {
    storeId,
    status: query.status,
    after: query.cursor === undefined ? undefined : decodeCursor(query.cursor),
    limit: limit + 1,
  })
  const data = rows.slice(0, limit).map(rowToProduct)
  const last = data.at(-1)
  const nextCursor = rows.length > limit && last ? encodeCursor(last) : null
  return { data, nextCursor }
}
