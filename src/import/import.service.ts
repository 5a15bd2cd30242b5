import { CompiledQuery, sql, type Transaction } from 'kysely'
import { rowToProduct, rowToVariant } from '../catalog/catalog.mappers.js'
import {
  CreateProductBody,
  CreateVariantBody,
  MAX_POSITION,
  TRIMMED_FIELDS,
  UpdateProductBody,
  type CreateProductInput,
  type Product,
  type UpdateProductInput,
  type UpdateVariantInput,
  type Variant,
} from '../catalog/catalog.schemas.js'
import { normalizeImages, tagKeysJson, uniqueTags } from '../catalog/record-fields.js'
import {
  findProductsBySlugs,
  insertProductsSetByHand,
  listProductRows,
  type ImportedProduct,
} from '../catalog/product.repository.js'
import { violatedUniqueConstraint } from '../db/driver-errors.js'
import { newId, nowIso } from '../db/values.js'
import { insertEvents, type NewEvent } from '../events/event.repository.js'
import { createProductWork, newProductRow, updateProductWork } from '../catalog/product.service.js'
import { statusesBarredFrom } from '../catalog/transitions.js'
import {
  findProductWithVariants,
  findSkuHolders,
  findVariantBySku,
  findVariantsOfProducts,
  insertVariantRows,
  type VariantFields,
} from '../catalog/variant.repository.js'
import {
  addVariantWork,
  DUPLICATE_OPTIONS_MESSAGE,
  DUPLICATE_SKU_MESSAGE,
  newVariantFields,
  optionsKey,
  updateVariantWork,
} from '../catalog/variant.service.js'
import type { Database } from '../db/database.js'
import type { DB, Executor, NewVariantRow, ProductRow } from '../db/schema.js'
import { AppError, type FieldProblem } from '../errors.js'
import { findRefusedString } from '../http/json-body.js'
import { createValidatorCompiler, toFieldProblems } from '../http/validation.js'
import { readCsvRecords, type CsvRecord } from './csv-records.js'
import {
  clip,
  mapProduct,
  type ImportError,
  type ImportErrorCode,
  type MappedProduct,
  type MappedVariant,
} from './product-mapping.js'
import { readHeader, type Header } from './shopify-columns.js'

/** What an import did (or, dry, would do): the contract's summary. */
export interface ImportSummary {
  rowsProcessed: number
  productsCreated: number
  productsUpdated: number
  variantsCreated: number
  variantsUpdated: number
  rowsFailed: number
  columnsNotStored: string[]
  errors: ImportError[]
}

export interface ImportProgress {
  /** Rows whose product was written (or checked, or refused): each product's all at once. */
  rowsProcessed: number
  /** Bytes of the file read so far. */
  bytes: number
}

export interface ImportOptions {
  /** Read and check everything, write nothing: the summary a real run would give. */
  dryRun?: boolean
  /** Told after each batch of products is written (or checked). */
  onProgress?: (progress: ImportProgress, summary: ImportSummary) => void | Promise<void>
  /** Errors kept in the summary (rowsFailed counts them all): 1,000 unless given. */
  maxErrors?: number
  /**
   * Told when the file stops being CSV after its header, from which row and why: the import
   * does not read it to its end (the summary's errors say so too, unless they are full).
   */
  onUnreadable?: (unreadable: { row: number; message: string }) => void
  batch?: Partial<BatchBound>
}

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

/** The summary kept of a refused file: one invalid_csv error, nothing else. */
function refused(message: string, row = 1): ImportSummary {
  return {
    ...emptySummary(),
    errors: [{ row, handle: '', field: null, error: 'invalid_csv', message }],
  }
}

export function emptySummary(): ImportSummary {
  return {
    rowsProcessed: 0,
    productsCreated: 0,
    productsUpdated: 0,
    variantsCreated: 0,
    variantsUpdated: 0,
    rowsFailed: 0,
    columnsNotStored: [],
    errors: [],
  }
}

/**
 * Imports a Shopify product CSV into a store: read as a stream, grouped by handle, mapped,
 * checked by the API's own schemas, and written through the services' units of work (so
 * every change is the change, and has the event, that the same request to the API makes).
 * Each product is written whole or not at all (a savepoint each); products are written in
 * batches, one transaction per batch (see BatchBound).
 */
export async function importCatalog(
  database: Database,
  storeId: string,
  input: AsyncIterable<Buffer | string>,
  options: ImportOptions = {},
): Promise<ImportSummary> {
  const dryRun = options.dryRun ?? false
  const maxErrors = options.maxErrors ?? 1000
  const bound = { ...DEFAULT_BATCH[database.dialect], ...options.batch }
  const summary = emptySummary()
  const progress: ImportProgress = { rowsProcessed: 0, bytes: 0 }
  const dry = dryRun ? new DryRunState() : undefined
  const report = (errors: ImportError[]) => {
    for (const error of errors) if (summary.errors.length < maxErrors) summary.errors.push(error)
  }

  let header: Header | undefined
  let group: { handle: string; records: CsvRecord[] } | undefined
  let pending: MappedProduct[] = []
  // The slugs of the file's products imported so far, each with its first row: a later
  // product of the file with one of them (its handle again after other rows, or another
  // handle made into the same slug) is duplicate_slug, as in a dry run, rather than
  // overwriting the earlier one (and being overwritten back by a second run). It grows with
  // the file, by one slug per product (about 14 MB for 250,000 products).
  const fileSlugs = new Map<string, number>()

  const flush = async () => {
    while (pending.length > 0) {
      // Let the requests that arrived meanwhile be read first. Else the group commit, which
      // runs whatever is queued when a batch ends, runs the import's next batch at once and
      // the event loop sees no I/O until every pending product is written (on SQLite, API
      // requests waited hundreds of milliseconds during an import).
      await new Promise((resolve) => setImmediate(resolve))
      const outcomes = dry
        ? await checkBatch(database.kysely, storeId, pending, dry)
        : await database.write((tx) => writeBatch(tx, storeId, pending, bound), { alone: true })
      pending.slice(0, outcomes.length).forEach((product, i) => {
        const outcome = outcomes[i]!
        summary.rowsProcessed += product.rows.length
        if (outcome.errors.length > 0) {
          summary.rowsFailed += product.rows.length
          report(outcome.errors)
        } else {
          fileSlugs.set(product.slug, product.rows[0]!)
          if (outcome.created) summary.productsCreated++
          if (outcome.updated) summary.productsUpdated++
          summary.variantsCreated += outcome.variantsCreated
          summary.variantsUpdated += outcome.variantsUpdated
        }
      })
      pending = pending.slice(outcomes.length)
      progress.rowsProcessed = summary.rowsProcessed
      await options.onProgress?.(progress, summary)
    }
  }
  const close = async () => {
    if (group && header) {
      const product = mapProduct(header, group.handle, group.records)
      product.errors.push(...refusedStrings(product))
      // An earlier product of the file with this slug may still be pending: its outcome first.
      if (pending.some((earlier) => earlier.slug === product.slug)) await flush()
      const earlier = fileSlugs.get(product.slug)
      if (earlier !== undefined && product.errors.length === 0) {
        product.errors.push({
          row: product.rows[0]!,
          handle: product.handle,
          field: product.columns.handle!,
          error: 'duplicate_slug',
          message: `the product of row ${earlier} has this handle's slug`,
        })
      }
      pending.push(product)
      if (pending.length >= bound.maxProducts) await flush()
    }
    group = undefined
  }

  for await (const item of readCsvRecords(input)) {
    if (item.kind === 'failure') {
      if (!header) return refused(item.message, item.row)
      // The product being read is whole when the unreadable row, as far as it was read,
      // names another handle: it is imported. Else that row may have been one of its own,
      // and it is not.
      const next = item.fields[header.index.handle!]?.trim()
      if (group && next !== undefined && next !== group.handle) await close()
      if (group) {
        summary.rowsProcessed += group.records.length
        summary.rowsFailed += group.records.length
        group = undefined
      }
      summary.errors.length < maxErrors &&
        summary.errors.push({
          row: item.row,
          handle: '',
          field: null,
          error: 'invalid_csv',
          message: `${item.message}; the file is not read from this row on`,
        })
      options.onUnreadable?.({ row: item.row, message: item.message })
      break
    }
    progress.bytes = item.bytes
    if (!header) {
      header = readHeader(item.fields)
      if (!header) return refused('the header row has no Handle (or URL handle) column')
      summary.columnsNotStored = header.notStored
      continue
    }
    const handle = (item.fields[header.index.handle!] ?? '').trim()
    if (handle === '') {
      await close()
      await flush()
      summary.rowsProcessed++
      summary.rowsFailed++
      report([
        {
          row: item.row,
          handle: '',
          field: header.names[header.index.handle!]!,
          error: 'validation_failed',
          message: 'is required: every row names its product',
        },
      ])
      continue
    }
    if (group?.handle !== handle) {
      await close()
      group = { handle, records: [] }
    }
    group.records.push(item)
  }
  if (!header) return refused('the file is empty, without even a header row')
  await close()
  await flush()
  if (!dryRun) await refreshPlannerStatistics(database, summary)
  return summary
}

/** Records an import must have written before PostgreSQL's statistics are refreshed. */
const ANALYZE_AFTER_RECORDS = 1000

/**
 * After a large import, PostgreSQL's planner statistics are refreshed (ANALYZE of the tables
 * an import writes), as its manual advises after a bulk load: until autovacuum's next look (a
 * minute or more away), a table that grew from nothing still looks empty, and the planner
 * then reads and sorts the whole store for each page of a list or an export. After importing
 * 10,000 products: a list page took 8.6 ms instead of 0.1 ms, the export 1.8 to 2.7 s
 * instead of 0.9 to 1.1 s. SQLite plans by its indexes without statistics.
 */
async function refreshPlannerStatistics(database: Database, summary: ImportSummary) {
  const written =
    summary.productsCreated +
    summary.productsUpdated +
    summary.variantsCreated +
    summary.variantsUpdated
  if (database.dialect !== 'postgres' || written < ANALYZE_AFTER_RECORDS) return
  try {
    await sql`analyze products, variants, product_tags, slug_counters, events`.execute(
      database.kysely,
    )
  } catch {
    // The import is committed; statistics only speed reads up, and autovacuum refreshes them.
  }
}

interface Outcome {
  created: boolean
  updated: boolean
  variantsCreated: number
  variantsUpdated: number
  errors: ImportError[]
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
async function writeBatch(
  tx: Transaction<DB>,
  storeId: string,
  products: MappedProduct[],
  bound: BatchBound,
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
    outcomes.push(...(await writeChunk(tx, storeId, chunk)))
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
): Promise<Outcome[]> {
  const readable = chunk.filter((product) => product.errors.length === 0)
  const slugCount = countBy(readable.map((product) => product.slug))
  const rows = await findProductsBySlugs(tx, storeId, [...slugCount.keys()])
  const stored = new Map<string, StoredProduct>(
    rows.map((product) => [product.slug, { product, variants: [] }]),
  )
  const storedById = new Map(rows.map((row) => [row.id, stored.get(row.slug)!]))
  for (const variant of await findVariantsOfProducts(tx, storeId, [...storedById.keys()])) {
    storedById.get(variant.product_id)!.variants.push(variant)
  }
  // How many products of the chunk name each sku (once per product), and who holds it.
  const skuCount = countBy(readable.flatMap((product) => [...new Set(skusOf(product))]))
  const holders = new Map(
    (await findSkuHolders(tx, storeId, [...skuCount.keys()])).map((h) => [h.sku, h.product_id]),
  )

  const outcomes: Outcome[] = []
  let run: { index: number; product: MappedProduct; plan: ProductPlan }[] = []
  const writeRun = async () => {
    if (run.length === 0) return
    await tx.executeQuery(SAVEPOINT)
    try {
      await insertNewProducts(tx, storeId, run)
      await tx.executeQuery(RELEASE)
      for (const { index, plan } of run) {
        outcomes[index] = { ...unchanged(), created: true, variantsCreated: plan.variants.length }
      }
    } catch (error) {
      await tx.executeQuery(ROLLBACK)
      await tx.executeQuery(RELEASE)
      if (violatedUniqueConstraint(error) === undefined) throw error
      for (const { index, product } of run) {
        outcomes[index] = await importProductAlone(tx, storeId, product)
      }
    }
    run = []
  }

  for (const [index, product] of chunk.entries()) {
    if (product.errors.length > 0) {
      outcomes[index] = failed(product.errors)
      continue
    }
    const shared =
      slugCount.get(product.slug)! > 1 ||
      skusOf(product).some((sku) => skuCount.get(sku)! > 1 || holders.has(sku))
    if (!shared) {
      const existing = stored.get(product.slug)
      const plan = await planProduct(tx, storeId, product, existing, undefined)
      if (!('variants' in plan)) {
        outcomes[index] = plan
        continue
      }
      if (existing && writesNothing(plan)) {
        outcomes[index] = unchanged()
        continue
      }
      if (!existing && insertable(plan)) {
        run.push({ index, product, plan })
        continue
      }
    }
    await writeRun()
    outcomes[index] = await importProductAlone(tx, storeId, product)
  }
  await writeRun()
  return outcomes
}

/** One product imported with reads of its own, whole or not at all: a savepoint. */
async function importProductAlone(
  tx: Transaction<DB>,
  storeId: string,
  product: MappedProduct,
): Promise<Outcome> {
  await tx.executeQuery(SAVEPOINT)
  try {
    const outcome = await importProduct(tx, storeId, product, undefined)
    await tx.executeQuery(outcome.errors.length > 0 ? ROLLBACK : RELEASE)
    if (outcome.errors.length > 0) await tx.executeQuery(RELEASE)
    return outcome
  } catch (error) {
    await tx.executeQuery(ROLLBACK)
    await tx.executeQuery(RELEASE)
    throw error
  }
}

function countBy(keys: string[]): Map<string, number> {
  const counts = new Map<string, number>()
  for (const key of keys) counts.set(key, (counts.get(key) ?? 0) + 1)
  return counts
}

function skusOf(product: MappedProduct): string[] {
  return product.variants.flatMap((variant) => (variant.input.sku ? [variant.input.sku] : []))
}

function unchanged(): Outcome {
  return { created: false, updated: false, variantsCreated: 0, variantsUpdated: 0, errors: [] }
}

/** Whether a plan of a stored product changes nothing: then nothing is written. */
function writesNothing(plan: ProductPlan): boolean {
  return (
    Object.keys(plan.patch).length === 0 &&
    plan.variants.every(({ target, patch }) => target && Object.keys(patch).length === 0)
  )
}

/**
 * Whether a new product can be written with others: what addVariantWork would refuse of it
 * (a position) leaves it to it.
 */
function insertable(plan: ProductPlan): boolean {
  return (
    plan.variants.length <= MAX_POSITION &&
    plan.variants.every(({ variant }) => variant.input.position === undefined)
  )
}

/**
 * New products with their variants, as createProductWork then addVariantWork for each variant
 * would leave them, written together: the rows as they stand after the last variant (version
 * 1 plus one per variant, positions 1, 2, 3..., a variant without a price at the product's),
 * and the events those units append, in their order, each row as it was at its change.
 */
async function insertNewProducts(
  tx: Transaction<DB>,
  storeId: string,
  run: { product: MappedProduct; plan: ProductPlan }[],
): Promise<void> {
  const now = nowIso()
  const products: ImportedProduct[] = []
  const variants: (NewVariantRow & { position: number; price_e4: number })[] = []
  const events: NewEvent[] = []
  const event = (type: string, object: Record<string, unknown>): NewEvent => ({
    storeId,
    id: newId(),
    type,
    createdAt: now,
    object: JSON.stringify(object),
    previous: null,
  })
  for (const { product, plan } of run) {
    const input = plan.createInput!
    const tags = uniqueTags(input.tags ?? [])
    // Its event's object is this row as JSON, as createProductWork's is.
    const row = newProductRow(storeId, input, tags, now)
    events.push(
      event('product.created', { ...row, slug: product.slug, max_variant_position: 0, version: 1 }),
    )
    for (const [i, { variant }] of plan.variants.entries()) {
      // As addVariantWork leaves it: the product's price by default, the next position.
      const added = newVariantFields(storeId, row.id, variant.input, now)
      const fields = { ...added, price_e4: added.price_e4 ?? row.price_e4, position: i + 1 }
      variants.push(fields)
      events.push(event('variant.created', { ...fields, version: 1 }))
    }
    const count = plan.variants.length
    products.push({
      row: { ...row, slug: product.slug, max_variant_position: count, version: 1 + count },
      tagKeys: JSON.parse(tagKeysJson(tags)) as string[],
    })
  }
  await insertProductsSetByHand(tx, storeId, products)
  await insertVariantRows(tx, variants)
  await insertEvents(tx, events)
}

/** A dry run's batch: the same checks, on reads only, with what the file holds kept here. */
async function checkBatch(
  db: Executor,
  storeId: string,
  products: MappedProduct[],
  dry: DryRunState,
): Promise<Outcome[]> {
  const outcomes: Outcome[] = []
  for (const product of products) {
    outcomes.push(
      product.errors.length > 0
        ? failed(product.errors)
        : await importProduct(db, storeId, product, dry),
    )
  }
  return outcomes
}

function failed(errors: ImportError[]): Outcome {
  return { created: false, updated: false, variantsCreated: 0, variantsUpdated: 0, errors }
}

/**
 * What the file's earlier products hold, for a dry run, which writes nothing that later
 * products' checks could meet: their skus, and the stored skus they give up (a real run
 * frees those for later products). It grows with the file; a real run keeps none (the
 * database holds what was written). Their slugs are kept by importCatalog, for both.
 */
class DryRunState {
  readonly skus = new Set<string>()
  readonly released = new Set<string>()
}

/** The compiled validators of the API's own schemas: one rule, one place. */
const compile = createValidatorCompiler()
const validators = {
  createProduct: compile({ schema: CreateProductBody, httpPart: 'body', method: 'POST', url: '' }),
  updateProduct: compile({ schema: UpdateProductBody, httpPart: 'body', method: 'PATCH', url: '' }),
  createVariant: compile({ schema: CreateVariantBody, httpPart: 'body', method: 'POST', url: '' }),
}

type Validator = (typeof validators)[keyof typeof validators]

/** Problems of `body` by the schema, after the trimming the API does before validation. */
function check(validator: Validator, body: Record<string, unknown>): FieldProblem[] {
  for (const field of TRIMMED_FIELDS) {
    const value = body[field]
    if (typeof value === 'string') body[field] = value.trim()
  }
  if (validator(body) === true) return []
  return toFieldProblems(
    (validator as unknown as { errors: Parameters<typeof toFieldProblems>[0] }).errors ?? [],
  )
}

/**
 * Plans (and, with `dry`, checks) one product: found by its slug, created or updated field
 * by field, its variants matched by sku, then by options, created or updated. A refusal of
 * the database (a sku another product took meanwhile, say) becomes the row's error; the
 * caller rolls the product back. Anything else (the database gone) is thrown.
 */
async function planProduct(
  db: Executor,
  storeId: string,
  product: MappedProduct,
  existing: StoredProduct | undefined,
  dry: DryRunState | undefined,
): Promise<ProductPlan | Outcome> {
  const { handle } = product
  const firstRow = product.rows[0]!
  const errors: ImportError[] = []

  // The product's own fields, by the rules of a create or of a PATCH.
  let createInput: CreateProductInput | undefined
  let patch: UpdateProductInput = {}
  const current = existing && rowToProduct(existing.product)
  if (!current) {
    const body = { ...product.fields } as Record<string, unknown>
    errors.push(...productErrors(product, check(validators.createProduct, body)))
    createInput = body as CreateProductInput
  } else {
    const body = { ...product.fields } as Record<string, unknown>
    errors.push(...productErrors(product, check(validators.updateProduct, body)))
    patch = productChanges(current, body as UpdateProductInput)
    if (patch.status && statusesBarredFrom(patch.status).includes(current.status)) {
      errors.push(statusRefused(firstRow, handle, product, current.status, patch.status))
    }
  }

  // The variants: checked, matched to stored ones, each a create, an update or nothing.
  const stored = (existing?.variants ?? []).map(rowToVariant)
  const matched = new Set<string>()
  const skusInProduct = new Map<string, number>()
  const optionsInProduct = new Map<string, number>()
  const plans: VariantPlan[] = []
  for (const variant of product.variants) {
    const problems = check(validators.createVariant, variant.input as Record<string, unknown>)
    if (problems.length > 0) {
      errors.push(...variantErrors(product, variant, problems))
      continue
    }
    const { sku } = variant.input
    const key = optionsKey(variant.input.options ?? {})
    if (sku) {
      const earlier = skusInProduct.get(sku)
      if (earlier !== undefined) {
        errors.push(
          conflict(
            variant.row,
            handle,
            product.variantColumns.sku!,
            'duplicate_sku',
            `the sku "${clip(sku)}" is already on row ${earlier}`,
          ),
        )
        continue
      }
      skusInProduct.set(sku, variant.row)
    }
    if (key !== null) {
      const earlier = optionsInProduct.get(key)
      if (earlier !== undefined) {
        errors.push(
          conflict(
            variant.row,
            handle,
            product.variantColumns.options!,
            'duplicate_options',
            `the same options as row ${earlier}`,
          ),
        )
        continue
      }
      optionsInProduct.set(key, variant.row)
    }
    let target = sku ? stored.find((v) => v.sku === sku) : undefined
    // A sku another product holds: in a real run the database's unique index refuses it (no
    // check-then-insert); a dry run writes nothing, so it looks, and says what a real run says.
    if (!target && sku && dry) {
      const held =
        dry.skus.has(sku) ||
        (!dry.released.has(sku) && (await findVariantBySku(db, storeId, sku)) !== undefined)
      if (held) {
        errors.push(
          conflict(
            variant.row,
            handle,
            product.variantColumns.sku!,
            'duplicate_sku',
            DUPLICATE_SKU_MESSAGE,
          ),
        )
        continue
      }
    }
    if (target) matched.add(target.id)
    plans.push({ variant, target, patch: {} })
  }
  // Then by options, among the stored variants no row's sku names: a variant a later row
  // finds by its sku is that row's, not an earlier row's whose options it has.
  for (const plan of plans) {
    const key = optionsKey(plan.variant.input.options ?? {})
    plan.target ??= stored.find((v) => !matched.has(v.id) && optionsKey(v.options) === key)
    if (plan.target) {
      matched.add(plan.target.id)
      plan.patch = variantChanges(plan.target, plan.variant)
    }
  }
  // The product's price is its first variant's, unless the export's Product Price column gives
  // it.
  const price = product.fields.price === undefined ? firstVariantPrice(stored, plans) : undefined
  if (price !== undefined) {
    if (createInput) createInput.price = price
    else if (current && price !== current.price) patch.price = price
  }
  if (errors.length > 0) return failed(uniqueErrors(errors))
  // Options the product's stored variants hold: a real run's database refuses the first
  // write that would repeat them (no check-then-write); a dry run looks, and says the same.
  const clash = dry && firstOptionsClash(stored, plans)
  if (clash) {
    return failed([
      conflict(
        clash.variant.row,
        handle,
        product.variantColumns.options!,
        'duplicate_options',
        DUPLICATE_OPTIONS_MESSAGE,
      ),
    ])
  }
  return { current, createInput, patch, variants: plans }
}

/**
 * The first of `plans` whose write the database would refuse as duplicate_options, the
 * variants written in order as writePlan writes them: a create, or an update that changes the
 * options, to options another variant of the product holds at that point.
 */
function firstOptionsClash(stored: Variant[], plans: VariantPlan[]): VariantPlan | undefined {
  const holders = new Map<string, Variant | VariantPlan>()
  for (const variant of stored) {
    const key = optionsKey(variant.options)
    if (key !== null) holders.set(key, variant)
  }
  for (const plan of plans) {
    const { target } = plan
    if (target && plan.patch.options === undefined) continue
    const holder = target ?? plan
    const key = optionsKey((target ? plan.patch.options : plan.variant.input.options) ?? {})
    if (key !== null && (holders.get(key) ?? holder) !== holder) return plan
    if (target) {
      const before = optionsKey(target.options)
      if (before !== null && holders.get(before) === target) holders.delete(before)
    }
    if (key !== null) holders.set(key, holder)
  }
  return undefined
}

/**
 * The strings of a product the API would refuse (a NUL, which PostgreSQL cannot store), each
 * on its column, by the API's own check (its JSON body parser's). Found as the product is
 * read, before any of its values is sent to the database (a sku to look up, say).
 */
function refusedStrings(product: MappedProduct): ImportError[] {
  const errors: ImportError[] = []
  const refused = findRefusedString(product.fields)
  if (refused !== undefined) errors.push(...productErrors(product, [refused]))
  for (const variant of product.variants) {
    const problem = findRefusedString(variant.input)
    if (problem !== undefined) errors.push(...variantErrors(product, variant, [problem]))
  }
  return errors
}

/**
 * Problems of the product's own fields as the rows' errors, each on its column: on its first
 * row, but an image's on the row that gives it (`images.3.alt`: the fourth by position).
 */
function productErrors(product: MappedProduct, problems: FieldProblem[]): ImportError[] {
  return problems.map((problem) => {
    const path = problem.field.split('.')
    const root = path[0]!
    const row = (root === 'images' && product.imageRows[Number(path[1])]) || product.rows[0]!
    // An image's alt text has a column of its own: `images.3.alt` is on `images.alt`'s.
    const leaf = path.filter((part) => !/^\d+$/.test(part)).join('.')
    return {
      row,
      handle: product.handle,
      field: product.columns[leaf] ?? product.columns[root] ?? problem.field,
      error: 'validation_failed',
      message: problem.message,
    }
  })
}

/** Problems of a variant as its row's errors, each on its column (see variantProblems). */
function variantErrors(
  product: MappedProduct,
  variant: MappedVariant,
  problems: FieldProblem[],
): ImportError[] {
  return variantProblems(product, variant, problems).map(({ column, message }) => ({
    row: variant.row,
    handle: product.handle,
    field: column,
    error: 'validation_failed',
    message,
  }))
}

/**
 * A variant's problems (by the API's schema), each on the column of the file it is about: an
 * option's name or value on its own column. A name made of the option values (the file gives
 * no Variant Name) is not a column of the file: its problem is reported once, on the first
 * value's column, and not at all when a value has a problem of its own (a value over 255
 * characters makes a name over 255 too: one error says it).
 */
function variantProblems(
  product: MappedProduct,
  variant: MappedVariant,
  problems: FieldProblem[],
): { column: string; message: string }[] {
  const options = variant.input.options ?? {}
  const slots = product.optionColumns.filter((slot) => Object.hasOwn(options, slot.name))
  const valuesColumn = slots[0]?.valueColumn ?? product.variantColumns.options!
  const found: { column: string; message: string }[] = []
  for (const { field, message } of problems) {
    const root = field.split('.')[0]!
    if (root === 'options') {
      // A value's problem is on `options.<name>`; a name's on `options`, as `key "<name>" ...`.
      const slot =
        slots.find((s) => field === `options.${s.name}`) ??
        slots.find((s) => field === 'options' && message.startsWith(`key "${s.name}" `)) ??
        slots.find((s) => field === 'options' && findRefusedString(s.name) !== undefined)
      const column = !slot ? valuesColumn : field === 'options' ? slot.nameColumn : slot.valueColumn
      found.push({ column, message })
    } else if (root === 'name' && variant.nameFromOptions) {
      if (problems.some((problem) => problem.field.split('.')[0] === 'options')) continue
      found.push({
        column: valuesColumn,
        message: `the option values joined by " / " (the variant's name) ${message}`,
      })
    } else {
      found.push({ column: product.variantColumns[root] ?? field, message })
    }
  }
  return found
}

/**
 * The price of the product's first variant (the lowest position) after the import, when the
 * file gives it: its stored first variant's row of the file, or, for a product without
 * variants yet, the file's first. Undefined when the file does not price that variant, which
 * leaves the product's price as it is (or the default of a create).
 */
function firstVariantPrice(stored: Variant[], plans: VariantPlan[]): number | undefined {
  const first = stored[0]
  const plan = first ? plans.find((p) => p.target?.id === first.id) : plans[0]
  if (!plan?.variant.sets.has('price')) return undefined
  return plan.variant.input.price ?? undefined
}

/**
 * Imports (or, with `dry`, checks) one product, reading what the store holds of it first:
 * the way of a product that a batch cannot take with others (see writeChunk).
 */
async function importProduct(
  db: Executor,
  storeId: string,
  product: MappedProduct,
  dry: DryRunState | undefined,
): Promise<Outcome> {
  const [existingRow] = await listProductRows(db, {
    storeId,
    filters: { slug: product.slug },
    limit: 1,
  })
  const existing = existingRow
    ? await findProductWithVariants(db, storeId, existingRow.id)
    : undefined
  const plan = await planProduct(db, storeId, product, existing, dry)
  if (!('variants' in plan)) return plan
  return dry ? countPlan(product, plan, dry) : writePlan(db, storeId, product, plan)
}

/** A product as stored: its row and its variants in order. */
interface StoredProduct {
  product: ProductRow
  variants: VariantFields[]
}

/** What a product's rows ask of the store: a create or a patch, and each variant's. */
interface ProductPlan {
  current: Product | undefined
  createInput: CreateProductInput | undefined
  patch: UpdateProductInput
  variants: VariantPlan[]
}

interface VariantPlan {
  variant: MappedVariant
  target: Variant | undefined
  patch: UpdateVariantInput
}

/** A dry run's outcome of a plan: what a real run would count; the file's skus kept. */
function countPlan(product: MappedProduct, plan: ProductPlan, dry: DryRunState): Outcome {
  const outcome: Outcome = {
    created: !plan.current,
    updated: Object.keys(plan.patch).length > 0,
    variantsCreated: 0,
    variantsUpdated: 0,
    errors: [],
  }
  for (const { target, patch, variant } of plan.variants) {
    if (!target) outcome.variantsCreated++
    else if (Object.keys(patch).length > 0) outcome.variantsUpdated++
    if (target?.sku && patch.sku !== undefined) dry.released.add(target.sku)
    if (variant.input.sku) dry.skus.add(variant.input.sku)
  }
  return outcome
}

/**
 * The writes of a plan: the services' units of work, in the caller's transaction. A refusal
 * of the database (a sku another product took meanwhile, say) becomes the row's error; the
 * caller rolls the product back. Anything else (the database gone) is thrown.
 */
async function writePlan(
  db: Executor,
  storeId: string,
  product: MappedProduct,
  plan: ProductPlan,
): Promise<Outcome> {
  const { slug } = product
  const firstRow = product.rows[0]!
  const { current, createInput, patch } = plan
  const plans = plan.variants
  const outcome: Outcome = {
    created: !current,
    updated: false,
    variantsCreated: 0,
    variantsUpdated: 0,
    errors: [],
  }

  let productId: string
  try {
    if (!current) {
      productId = (await createProductWork(storeId, createInput!, slug)(db)).id
    } else {
      productId = current.id
      if (Object.keys(patch).length > 0) {
        const after = await updateProductWork(storeId, current.id, patch, undefined)(db)
        outcome.updated = after.version !== current.version
      }
    }
  } catch (error) {
    return failed([refusal(error, firstRow, product, product.columns.handle!)])
  }
  for (const plan of plans) {
    try {
      if (!plan.target) {
        await addVariantWork(storeId, productId, plan.variant.input)(db)
        outcome.variantsCreated++
      } else if (Object.keys(plan.patch).length > 0) {
        const after = await updateVariantWork(
          storeId,
          productId,
          plan.target.id,
          plan.patch,
          undefined,
        )(db)
        if (after.version !== plan.target.version) outcome.variantsUpdated++
      }
    } catch (error) {
      return failed([refusal(error, plan.variant.row, product, null)])
    }
  }
  return outcome
}

/** The errors without repeats (a first variant's bad price is also the product's). */
function uniqueErrors(errors: ImportError[]): ImportError[] {
  const seen = new Set<string>()
  return errors.filter((error) => {
    const key = `${error.row}\u0000${error.field}\u0000${error.message}`
    if (seen.has(key)) return false
    seen.add(key)
    return true
  })
}

function conflict(
  row: number,
  handle: string,
  field: string | null,
  error: ImportErrorCode,
  message: string,
): ImportError {
  return { row, handle, field, error, message }
}

/** The column a conflict the database refuses is reported on, as the file names it. */
function refusalFields(product: MappedProduct): Partial<Record<string, string>> {
  return {
    duplicate_sku: product.variantColumns.sku!,
    duplicate_options: product.variantColumns.options!,
    duplicate_slug: product.columns.handle!,
  }
}

/** A refusal of a unit of work as the row's error; anything but an AppError is thrown on. */
function refusal(
  error: unknown,
  row: number,
  product: MappedProduct,
  field: string | null,
): ImportError {
  if (!(error instanceof AppError)) throw error
  const { handle } = product
  const code = error.code
  // The product was archived by someone else between the read and the write.
  if (code === 'invalid_transition') {
    const status = product.columns.status ?? 'Status'
    return { row, handle, field: status, error: 'validation_failed', message: error.message }
  }
  const fieldOf = refusalFields(product)
  if (
    code === 'duplicate_sku' ||
    code === 'duplicate_options' ||
    code === 'duplicate_slug' ||
    code === 'validation_failed'
  ) {
    const detail = error.details?.[0]
    return {
      row,
      handle,
      field: detail?.field ?? fieldOf[code] ?? field,
      error: code,
      message: detail ? detail.message : error.message,
    }
  }
  throw error
}

/**
 * A status the product may not go to from its stored one (archived to active), as the row's
 * error: the API answers it 409 invalid_transition, which is not an import code; for a file
 * it is a bad value of the Status column.
 */
function statusRefused(
  row: number,
  handle: string,
  product: MappedProduct,
  from: string,
  to: string,
): ImportError {
  return {
    row,
    handle,
    field: product.columns.status ?? 'Status',
    error: 'validation_failed',
    message: `cannot set ${to} on a product that is ${from}: an ${from} product goes back to draft first (import it once with Status draft, then ${to})`,
  }
}

/** The fields of a PATCH that would change the stored product: empty when none would. */
function productChanges(current: Product, fields: UpdateProductInput): UpdateProductInput {
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
  return patch
}

/** The fields of a variant's PATCH that would change the stored variant: empty when none. */
function variantChanges(current: Variant, variant: MappedVariant): UpdateVariantInput {
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
  return patch
}
