import { createHash } from 'node:crypto'
import type { Transaction } from 'kysely'
import type { Database } from '../db/database.js'
import { violatedUniqueConstraint } from '../db/driver-errors.js'
import type { DB, Executor, NewProductRow, NewVariantRow } from '../db/schema.js'
import { isUuid, newId, nowIso } from '../db/values.js'
import { AppError, productNotFound, validationFailed } from '../errors.js'
import { rowToProduct, rowToVariant } from './catalog.mappers.js'
import {
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
import {
  insertProduct,
  listProductRows,
  lockProductForNewVariant,
  markSlugTaken,
  reserveSlugSuffix,
  takeNextSlugSuffix,
  takeSlug,
} from './product.repository.js'
import { slugify, splitSuffix, withSuffix } from './slug.js'
import {
  findProductWithVariantRows,
  highestVariantPosition,
  insertVariant,
} from './variant.repository.js'

export function createProduct(
  database: Database,
  storeId: string,
  input: CreateProductInput,
): Promise<Product> {
  return database.write((tx) => createProductIn(tx, storeId, input))
}

/** The unit of work behind createProduct, run inside the transaction it is handed. */
export async function createProductIn(
  tx: Transaction<DB>,
  storeId: string,
  input: CreateProductInput,
): Promise<Product> {
  const now = nowIso()
  const row = {
    store_id: storeId,
    id: newId(),
    name: input.name,
    slug: await claimSlug(tx, storeId, slugify(input.name)),
    status: input.status ?? 'draft',
    description: input.description ?? null,
    price_e4: toStoredAmount(input.price ?? 0),
    compare_at_price_e4: toStoredAmountOrNull(input.compare_at_price),
    sku: input.sku ?? null,
    barcode: input.barcode ?? null,
    tax_rate: input.tax_rate ?? null,
    created_at: now,
    updated_at: now,
  } satisfies NewProductRow
  await insertProduct(tx, row)
  return rowToProduct(row)
}

/**
 * A slug unique in the store, from the one the name gives: `base` when free, else `base-N`
 * with the next N. Every slug handed out is recorded in slug_counters; one that looks
 * suffixed (`t-shirt-2`, from "T-Shirt 2") also reserves its suffix under its base, so a
 * later "T-Shirt" skips it. The cost is a few single-row statements however many products
 * share the name. Counter rows are locked shortest slug first (base, slug, suffixed slug),
 * so concurrent claims on PostgreSQL cannot deadlock.
 */
async function claimSlug(tx: Executor, storeId: string, base: string): Promise<string> {
  const looksSuffixed = splitSuffix(base)
  if (looksSuffixed) await reserveSlugSuffix(tx, storeId, looksSuffixed.base, looksSuffixed.n)
  if (await takeSlug(tx, storeId, base)) return base
  const slug = withSuffix(base, await takeNextSlugSuffix(tx, storeId, base))
  await markSlugTaken(tx, storeId, slug)
  return slug
}

export function addVariant(
  database: Database,
  storeId: string,
  productId: string,
  input: CreateVariantInput,
): Promise<Variant> {
  if (!isUuid(productId)) return Promise.reject(productNotFound())
  return database.write((tx) => addVariantIn(tx, storeId, productId.toLowerCase(), input))
}

/** The unit of work behind addVariant, run inside the transaction it is handed. */
export async function addVariantIn(
  tx: Transaction<DB>,
  storeId: string,
  productId: string,
  input: CreateVariantInput,
): Promise<Variant> {
  const product = await lockProductForNewVariant(tx, storeId, productId)
  if (!product) throw productNotFound()
  const position = input.position ?? (await highestVariantPosition(tx, storeId, productId)) + 1
  if (position > MAX_POSITION) {
    throw validationFailed([
      { field: 'position', message: `is required: the next position would pass ${MAX_POSITION}` },
    ])
  }
  const options = input.options ?? {}
  const now = nowIso()
  const row = {
    store_id: storeId,
    id: newId(),
    product_id: productId,
    name: input.name,
    sku: input.sku ?? null,
    barcode: input.barcode ?? null,
    price_e4: input.price == null ? product.price_e4 : toStoredAmount(input.price),
    compare_at_price_e4: toStoredAmountOrNull(input.compare_at_price),
    options: JSON.stringify(options),
    options_key: optionsKey(options),
    position,
    created_at: now,
    updated_at: now,
  } satisfies NewVariantRow
  try {
    await insertVariant(tx, row)
  } catch (error) {
    throw conflictError(error) ?? error
  }
  return rowToVariant(row)
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

function conflictError(error: unknown): AppError | undefined {
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
  const found = await findProductWithVariantRows(database.kysely, storeId, id.toLowerCase())
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
  const rows = await listProductRows(database.kysely, {
    storeId,
    status: query.status,
    after: query.cursor === undefined ? undefined : decodeCursor(query.cursor),
    limit: query.limit + 1,
  })
  const data = rows.slice(0, query.limit).map(rowToProduct)
  const last = data.at(-1)
  const nextCursor = rows.length > query.limit && last ? encodeCursor(last) : null
  return { data, nextCursor }
}
