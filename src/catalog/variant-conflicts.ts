import { dialectOf } from '../db/dialect.js'
import { violatedUniqueConstraint } from '../db/driver-errors.js'
import type { Executor } from '../db/schema.js'
import { AppError, validationFailed } from '../errors.js'
import { MAX_POSITION } from './catalog.schemas.js'
import { findVariantBySku } from './variant-read.repository.js'

// A variant write's refusals by the database (unique sku, unique options, a position past the
// column's range), as the contract's errors.

/** A default position past MAX_POSITION: the client must give one. */
export function positionOverflow(): AppError {
  return validationFailed([
    { field: 'position', message: `is required: the next position would pass ${MAX_POSITION}` },
  ])
}

/**
 * conflictError, naming the sku when both the sku and the options are taken, on both
 * databases: where the database names the newest unique index first (the options', SQLite's
 * way, SqlDialect.newestUniqueIndexFirst), the sku is looked up.
 */
export async function skuFirstConflict(
  db: Executor,
  storeId: string,
  variantId: string,
  sku: string | null,
  error: unknown,
): Promise<AppError | undefined> {
  const conflict = conflictError(error)
  const { newestUniqueIndexFirst } = dialectOf(db)
  if (conflict?.code !== 'duplicate_options' || sku === null || !newestUniqueIndexFirst)
    return conflict
  const holder = await findVariantBySku(db, storeId, sku)
  return holder && holder.id !== variantId ? duplicateSku() : conflict
}

/** The message of duplicate_sku. */
const DUPLICATE_SKU_MESSAGE = 'Another variant in your store already has this sku.'

/** The message of duplicate_options, which an import's dry run also gives. */
export const DUPLICATE_OPTIONS_MESSAGE =
  'Another variant of this product already has these options.'

function duplicateSku(): AppError {
  return new AppError('duplicate_sku', DUPLICATE_SKU_MESSAGE)
}

/** A database refusal of a variant's write, as the contract's error; undefined for anything else. */
export function conflictError(error: unknown): AppError | undefined {
  // PostgreSQL: a default position past the integer column's range.
  if ((error as { code?: unknown }).code === '22003') return positionOverflow()
  switch (violatedUniqueConstraint(error)) {
    case 'variants_sku_key':
      return duplicateSku()
    case 'variants_options_key':
      return new AppError('duplicate_options', DUPLICATE_OPTIONS_MESSAGE)
    default:
      return undefined
  }
}
