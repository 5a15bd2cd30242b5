/**
 * The import of a Shopify product CSV, start to end: the file read as a stream, its rows
 * grouped by handle into products (product-mapping), the products handed in batches to a
 * real run's transactions (import-batches) or to a dry run's checks (import-dry-run), and
 * their outcomes added up into the summary. Below it, arrows pointing down only:
 * import-batches -> import-writer -> import-plan -> import-errors, import-outcome, and
 * import-dry-run -> import-plan.
 */
import type { Database } from '../db/database.js'
import { dialectOf } from '../db/dialect.js'
import { readCsvRecords, type CsvRecord } from './csv-records.js'
import { DEFAULT_BATCH, writeBatch, type BatchBound } from './import-batches.js'
import { checkBatch } from './import-dry-run.js'
import { refusedStrings } from './import-errors.js'
import type { ImportWarning } from './import-outcome.js'
import { DryRunState, ImportSkus, type DuplicateSkus } from './import-plan.js'
import { FileSlugs, mapProduct, type ImportError, type MappedProduct } from './product-mapping.js'
import { resolveMetafieldColumns } from './metafield-import.js'
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
  /** Rows imported otherwise than the file says (a sku dropped): the first maxErrors. */
  warnings: ImportWarning[]
  /** Variants imported without their sku, which another product keeps (all of them). */
  skusCleared: number
  /** Products skipped (none of their rows imported) for an error of one of their rows. */
  productsFailed: number
  /**
   * Of productsFailed, those with a duplicate_sku error (a sku another product, or an
   * earlier row, keeps), and their rows: what --duplicate-skus=clear would import.
   */
  productsSkippedForDuplicateSkus: number
  rowsSkippedForDuplicateSkus: number
  /** Errors found, all of them: `errors` lists the first maxErrors. */
  errorCount: number
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
  /**
   * A variant whose sku another product (or an earlier row of its own) keeps: its product
   * refused (`fail`, the default), or the variant imported without the sku and the row
   * reported in `warnings` (`clear`).
   */
  duplicateSkus?: DuplicateSkus
}

/** The summary kept of a refused file: one invalid_csv error, nothing else. */
function refused(message: string, row = 1): ImportSummary {
  return {
    ...emptySummary(),
    errors: [{ row, handle: '', field: null, error: 'invalid_csv', message }],
    errorCount: 1,
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
    warnings: [],
    skusCleared: 0,
    productsFailed: 0,
    productsSkippedForDuplicateSkus: 0,
    rowsSkippedForDuplicateSkus: 0,
    errorCount: 0,
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
  const skus = new ImportSkus(options.duplicateSkus)
  const report = (errors: ImportError[]) => {
    summary.errorCount += errors.length
    for (const error of errors) if (summary.errors.length < maxErrors) summary.errors.push(error)
  }

  let header: Header | undefined
  let group: { handle: string; records: CsvRecord[] } | undefined
  let pending: MappedProduct[] = []
  // The slugs and handles of the file's products imported so far (FileSlugs).
  const fileSlugs = new FileSlugs()

  const flush = async () => {
    while (pending.length > 0) {
      // Let the requests that arrived meanwhile be read first. Else the group commit, which
      // runs whatever is queued when a batch ends, runs the import's next batch at once and
      // the event loop sees no I/O until every pending product is written (on SQLite, API
      // requests waited hundreds of milliseconds during an import).
      await new Promise((resolve) => setImmediate(resolve))
      const outcomes = dry
        ? await checkBatch(database.kysely, storeId, pending, dry, skus)
        : await database.write((tx) => writeBatch(tx, storeId, pending, bound, skus), {
            alone: true,
          })
      pending.slice(0, outcomes.length).forEach((product, i) => {
        const outcome = outcomes[i]!
        summary.rowsProcessed += product.rows.length
        if (outcome.errors.length > 0) {
          summary.rowsFailed += product.rows.length
          summary.productsFailed++
          if (outcome.errors.some((error) => error.error === 'duplicate_sku')) {
            summary.productsSkippedForDuplicateSkus++
            summary.rowsSkippedForDuplicateSkus += product.rows.length
          }
          report(outcome.errors)
        } else {
          fileSlugs.keep(product)
          if (outcome.created) summary.productsCreated++
          if (outcome.updated) summary.productsUpdated++
          summary.variantsCreated += outcome.variantsCreated
          summary.variantsUpdated += outcome.variantsUpdated
          summary.skusCleared += outcome.warnings.filter((w) => w.field === 'sku').length
          for (const warning of outcome.warnings) {
            if (summary.warnings.length < maxErrors) summary.warnings.push(warning)
          }
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
      if (fileSlugs.waitsFor(product, pending)) await flush()
      const duplicate = product.errors.length === 0 ? fileSlugs.check(product) : undefined
      if (duplicate) product.errors.push(duplicate)
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
        summary.productsFailed++
        group = undefined
      }
      report([
        {
          row: item.row,
          handle: '',
          field: null,
          error: 'invalid_csv',
          message: `${item.message}; the file is not read from this row on`,
        },
      ])
      options.onUnreadable?.({ row: item.row, message: item.message })
      break
    }
    progress.bytes = item.bytes
    if (!header) {
      header = readHeader(item.fields)
      if (!header) return refused('the header row has no Handle (or URL handle) column')
      await resolveMetafieldColumns(database.kysely, storeId, header)
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
const IMPORTED_TABLES = ['products', 'variants', 'product_tags', 'slug_counters', 'events']

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
  if (written < ANALYZE_AFTER_RECORDS) return
  const refresh = dialectOf(database.kysely).refreshStatistics(IMPORTED_TABLES)
  if (refresh === undefined) return
  try {
    await refresh.execute(database.kysely)
  } catch {
    // The import is committed; statistics only speed reads up, and autovacuum refreshes them.
  }
}
