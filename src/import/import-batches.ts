/**
 * A real run's transactions: one per batch (BatchBound), cut into chunks by the time they
 * take; each chunk's stored products read at once, then each product written in a savepoint
 * of its own, or a run of new products written together (import-writer).
 */
import { CompiledQuery, type Transaction } from 'kysely'
import type { Database } from '../db/database.js'
import { violatedUniqueConstraint } from '../db/driver-errors.js'
import type { DB } from '../db/schema.js'
import { failed, unchanged, type Outcome } from './import-outcome.js'
import {
  planProduct,
  planStoredProduct,
  storedMatch,
  writesNothing,
  type ImportSkus,
  type ProductPlan,
  type StoredProduct,
} from './import-plan.js'
import { insertable, insertNewProducts, writePlan } from './import-writer.js'
import type { MappedProduct } from './product-mapping.js'
import { findProductsOfHandles } from '../catalog/product-bulk.repository.js'
import { findSkuHolders, findVariantsOfProducts } from '../catalog/variant-bulk.repository.js'

/**
 * How much one transaction of an import holds. SQLite has one writer: while a batch runs,
 * API writes queue and reads wait for it, so a batch ends once it has run `maxMs` (the
 * product in progress is finished first) or written `maxProducts`. On PostgreSQL a batch
 * locks only the rows it writes; the same bound keeps transactions short.
 */
export interface BatchBound {
  maxProducts: number
  maxMs: number
}

export const DEFAULT_BATCH: Record<Database['dialect'], BatchBound> = {
  sqlite: { maxProducts: 500, maxMs: 20 },
  postgres: { maxProducts: 500, maxMs: 200 },
}

/**
 * The bound of an HTTP import (POST /imports), which runs in the API's process: on SQLite it
 * shares the event loop as well as the writer with the requests, which wait for its batch
 * (and its commit) whole, so its batches end after 5 ms. `catalog import` is another process,
 * whose batches only hold the file's write lock: it keeps 20 ms and the rate of fewer commits.
 */
export const JOB_BATCH: Record<Database['dialect'], BatchBound> = {
  sqlite: { maxProducts: 500, maxMs: 5 },
  postgres: DEFAULT_BATCH.postgres,
}

const SAVEPOINT = CompiledQuery.raw('savepoint import_product')
const RELEASE = CompiledQuery.raw('release import_product')
const ROLLBACK = CompiledQuery.raw('rollback to import_product')

/**
 * One transaction of the import: the products in chunks (writeChunk), until the batch's
 * bound is reached. Returns one outcome per product written; the caller goes on with the
 * rest. Run again from the start if PostgreSQL aborts the transaction (deadlock), so it
 * keeps nothing outside.
 *
 * A chunk is as many products as the time left should take, by the time the products so far
 * took (8 for the first), so the bound is overrun by about one product, as when they were
 * written one by one.
 */
export async function writeBatch(
  tx: Transaction<DB>,
  storeId: string,
  products: MappedProduct[],
  bound: BatchBound,
  skus: ImportSkus,
): Promise<Outcome[]> {
  const started = performance.now()
  const outcomes: Outcome[] = []
  const limit = Math.min(products.length, bound.maxProducts)
  while (outcomes.length < limit) {
    const spent = performance.now() - started
    if (outcomes.length > 0 && spent >= bound.maxMs) break
    const perProduct = outcomes.length > 0 ? spent / outcomes.length : undefined
    const size =
      perProduct === undefined
        ? FIRST_CHUNK
        : Math.max(1, Math.floor((bound.maxMs - spent) / Math.max(perProduct, 0.001)))
    const chunk = products.slice(outcomes.length, Math.min(limit, outcomes.length + size))
    outcomes.push(...(await writeChunk(tx, storeId, chunk, skus)))
  }
  return outcomes
}

const FIRST_CHUNK = 8

/**
 * A chunk of products, read at once: the stored products of its handles (one query), their
 * variants (one), the holders of its skus (one). Then, in file order:
 * - a product already stored that the file does not change writes nothing;
 * - a new product that shares neither its slug nor a sku with another product of the chunk
 *   or of the store joins a run of such products, written together (insertNewProducts: a
 *   few multi-row statements for the run, whatever its length), in a savepoint;
 * - any other product (an update, a conflict to report) is imported alone, with reads of
 *   its own, in a savepoint, as before.
 * A run the database refuses (a slug or sku taken meanwhile by a request of the API) is
 * rolled back and its products imported one by one, which finds and reports the refusal.
 */
async function writeChunk(
  tx: Transaction<DB>,
  storeId: string,
  chunk: MappedProduct[],
  skus: ImportSkus,
): Promise<Outcome[]> {
  const readable = chunk.filter((product) => product.errors.length === 0)
  const slugCount = countBy(readable.map((product) => product.slug))
  const found = await findProductsOfHandles(
    tx,
    storeId,
    readable.filter((product) => product.slugMade).map((product) => product.handle),
    [...slugCount.keys()],
  )
  // Each product's stored one (storedMatch), by its index in the chunk.
  const storedById = new Map<string, StoredProduct>()
  const stored = new Map<number, StoredProduct>()
  for (const [index, product] of chunk.entries()) {
    const row = product.errors.length === 0 ? storedMatch(product, found) : undefined
    if (!row) continue
    const entry = storedById.get(row.id) ?? { product: row, variants: [] }
    storedById.set(row.id, entry)
    stored.set(index, entry)
  }
  for (const variant of await findVariantsOfProducts(tx, storeId, [...storedById.keys()])) {
    storedById.get(variant.product_id)!.variants.push(variant)
  }
  // How many products of the chunk name each sku (once per product), and who holds it.
  const skuCount = countBy(readable.flatMap((product) => [...new Set(skusOf(product))]))
  const holders = new Map(
    (await findSkuHolders(tx, storeId, [...skuCount.keys()])).map((h) => [h.sku, h.product_id]),
  )

  const outcomes: Outcome[] = []
  // Each outcome as it is known, and the skus its product keeps, which a later product's
  // message about one of them names.
  const settle = (index: number, outcome: Outcome) => {
    outcomes[index] = outcome
    skus.keep(chunk[index]!, outcome)
  }
  let run: { index: number; product: MappedProduct; plan: ProductPlan }[] = []
  const writeRun = async () => {
    if (run.length === 0) return
    await tx.executeQuery(SAVEPOINT)
    try {
      await insertNewProducts(tx, storeId, run)
      await tx.executeQuery(RELEASE)
      for (const { index, plan } of run) {
        settle(index, {
          ...unchanged(),
          created: true,
          variantsCreated: plan.variants.length,
          warnings: plan.warnings,
        })
      }
    } catch (error) {
      await tx.executeQuery(ROLLBACK)
      await tx.executeQuery(RELEASE)
      if (violatedUniqueConstraint(error) === undefined) throw error
      for (const { index, product } of run) {
        settle(index, await importProductAlone(tx, storeId, product, skus))
      }
    }
    run = []
  }

  for (const [index, product] of chunk.entries()) {
    if (product.errors.length > 0) {
      settle(index, failed(product.errors))
      continue
    }
    const existing = stored.get(index)
    // A new product whose slug is to be claimed (a handle made into a slug), or whose slug a
    // product of the store not its own has, is imported alone (writePlan claims or reports).
    const shared =
      slugCount.get(product.slug)! > 1 ||
      (!existing && (product.slugMade || found.bySlug.has(product.slug))) ||
      skusOf(product).some((sku) => skuCount.get(sku)! > 1 || holders.has(sku))
    if (!shared) {
      // No other product holds its skus: none is looked up.
      const plan = await planProduct(tx, storeId, product, existing, undefined, skus, false)
      if (!('variants' in plan)) {
        settle(index, plan)
        continue
      }
      if (existing && writesNothing(plan)) {
        settle(index, { ...unchanged(), warnings: plan.warnings })
        continue
      }
      if (!existing && insertable(plan)) {
        run.push({ index, product, plan })
        continue
      }
    }
    await writeRun()
    settle(index, await importProductAlone(tx, storeId, product, skus))
  }
  await writeRun()
  return outcomes
}

/** One product imported with reads of its own, whole or not at all: a savepoint. */
async function importProductAlone(
  tx: Transaction<DB>,
  storeId: string,
  product: MappedProduct,
  skus: ImportSkus,
): Promise<Outcome> {
  await tx.executeQuery(SAVEPOINT)
  try {
    const outcome = await importProduct(tx, storeId, product, skus)
    await tx.executeQuery(outcome.errors.length > 0 ? ROLLBACK : RELEASE)
    if (outcome.errors.length > 0) await tx.executeQuery(RELEASE)
    return outcome
  } catch (error) {
    await tx.executeQuery(ROLLBACK)
    await tx.executeQuery(RELEASE)
    throw error
  }
}

/** Imports one product, reading what the store holds of it first (see writeChunk). */
async function importProduct(
  tx: Transaction<DB>,
  storeId: string,
  product: MappedProduct,
  skus: ImportSkus,
): Promise<Outcome> {
  const plan = await planStoredProduct(tx, storeId, product, undefined, skus)
  return 'variants' in plan ? writePlan(tx, storeId, product, plan) : plan
}

function countBy(keys: string[]): Map<string, number> {
  const counts = new Map<string, number>()
  for (const key of keys) counts.set(key, (counts.get(key) ?? 0) + 1)
  return counts
}

function skusOf(product: MappedProduct): string[] {
  return product.variants.flatMap((variant) => (variant.input.sku ? [variant.input.sku] : []))
}
