import { createHash, type Hash } from 'node:crypto'
import { createReadStream, createWriteStream } from 'node:fs'
import { mkdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createMissingDefinitions } from './metafield-import.js'
import { Transform, type Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import type { Database } from '../db/database.js'
import type { Executor } from '../db/schema.js'
import { newId, toIso } from '../db/values.js'
import { AppError } from '../errors.js'
import {
  beatImports,
  failStaleImports,
  findImport,
  finishImport,
  insertImport,
  listImportRows,
  updateImportCounts,
  type ImportCounts,
  type ImportListRow,
  type ImportRow,
  type ImportSource,
} from './import-job.repository.js'
import { JOB_BATCH, type BatchBound } from './import-batches.js'
import { importCatalog, type ImportProgress, type ImportSummary } from './import.service.js'
import type { ImportWarning } from './import-outcome.js'
import type { DuplicateSkus } from './import-plan.js'
import type { ImportError } from './product-mapping.js'
import { decodeCursor, pageOf } from '../http/page-cursor.js'

/**
 * The job reads its file 16 KiB at a time (streams read 64): each piece is parsed and its
 * products checked in one turn of the event loop, which the API's requests wait for.
 */
export const JOB_READ_BYTES = 16 * 1024

/** An import as GET /imports/:id shows it: its summary so far, and where it stands. */
export interface ImportRecord extends ImportSummary {
  id: string
  status: 'running' | 'succeeded' | 'failed'
  /** `http`: POST /imports; `cli`: catalog import. */
  source: ImportSource
  duplicateSkus: DuplicateSkus
  /** What to do about the summary, in words: see importHints. */
  hints: string[]
  failureReason: string | null
  createdAt: string
  finishedAt: string | null
}

/** An import as GET /imports lists it: its record without the errors and warnings (up to 1,000 each). */
export type ImportListItem = Omit<ImportRecord, 'errors' | 'warnings'>

export interface ImportPage {
  data: ImportListItem[]
  nextCursor: string | null
}

export interface ImportJobsOptions {
  /** Largest body accepted, in bytes (IMPORT_MAX_BYTES). */
  maxBytes: number
  /** Where bodies are kept while their import runs; a folder of the system's temp dir if unset. */
  directory?: string
  /** How often a process says its imports are alive, and looks for dead ones. */
  heartbeatMs?: number
  /** A running import not heard of for this long is marked failed. */
  staleMs?: number
  /** The clock, in milliseconds since the epoch. */
  now?: () => number
  /** Told about a background failure that no request sees. */
  onError?: (error: unknown) => void
}

/**
 * Writes the record of a new import (`insert`, given an executor) and resolves with the
 * record to answer. The default is a write of its own; under an Idempotency-Key it is the
 * keyed write, which answers a retry of the same file (`fileDigest`, SHA-256 hex) with the
 * record of the first request's import instead of running `insert`.
 */
export type KeepImport = (
  insert: (db: Executor) => Promise<ImportRecord>,
  fileDigest: string,
) => Promise<ImportRecord>

export interface ImportJobs {
  /** Largest body accepted, in bytes (IMPORT_MAX_BYTES). */
  readonly maxBytes: number
  /**
   * Keeps the body in a file of its own (streamed, counted: over maxBytes is 413), records
   * the import as running (through `keep` if given), and starts it in the background.
   * Resolves with its record; when `keep` answered an earlier import's record instead,
   * nothing starts and that record is the answer.
   */
  submit(
    storeId: string,
    body: Readable,
    keep?: KeepImport,
    choices?: { duplicateSkus?: DuplicateSkus; createDefinitions?: boolean },
  ): Promise<ImportRecord>
  get(storeId: string, id: string): Promise<ImportRecord | undefined>
  /** A page of the store's imports, newest first; `cursor` is a previous page's nextCursor. */
  list(storeId: string, query: { limit?: number; cursor?: string }): Promise<ImportPage>
  /** Marks failed the imports a stopped process left running; then looks again every beat. */
  start(): Promise<void>
  /** Stops the imports in progress (each marked failed, with the reason) and the timer. */
  stop(): Promise<void>
}

export const STOPPED_REASON =
  'The service stopped before the import finished; run it again (an import can be repeated safely).'

/** A `catalog import` whose process ended without saying so (killed, its machine stopped). */
export const CLI_STOPPED_REASON =
  'The catalog import process stopped before the import finished; run it again (an import can be repeated safely).'

/** A `catalog import` stopped by a signal (Ctrl-C is SIGINT). */
export function interruptedReason(signal: string): string {
  return `catalog import was interrupted (${signal}) before the import finished; run it again (an import can be repeated safely).`
}

const SERVICE_ERROR_REASON =
  'The import stopped on an error of the service; run it again (an import can be repeated safely).'

/** How often progress is written to the import's record, at most. */
const PROGRESS_INTERVAL_MS = 250

/** How often a process says its imports are alive, and how old a silent one's heartbeat gets. */
const HEARTBEAT_MS = 5000
const STALE_MS = 30_000

class ImportStopped extends Error {
  constructor(readonly reason: string) {
    super(reason)
  }
}

/** How an import ended, as its record says. */
export interface RecordedEnd {
  status: 'succeeded' | 'failed'
  failureReason: string | null
  /** Its summary: as of its end, or of its last committed batch when it was cut short. */
  summary: ImportSummary | undefined
}

interface RecordedRun {
  storeId: string
  id: string
  /** Opens the file, once for the definitions, once for the import. */
  open: () => Readable
  duplicateSkus?: DuplicateSkus | undefined
  createDefinitions?: boolean | undefined
  batch?: Partial<BatchBound>
  iso: () => string
  now: () => number
  /** Asked after each batch: a reason to stop there (the record then fails with it). */
  stopReason: () => string | undefined
  onProgress?: (progress: ImportProgress, summary: ImportSummary) => void
}

/**
 * Runs the import of a record already written as running, keeps its counts (at most every
 * 250 ms, and at its end) and ends it: succeeded once the file was read to its end, failed
 * when it was refused, stopped being CSV, was stopped (`stopReason`) or met an error (the
 * record is failed first, then the error is thrown on). Shared by the HTTP job and the CLI.
 */
async function runRecorded(database: Database, run: RecordedRun): Promise<RecordedEnd> {
  const { storeId, id, iso, now } = run
  let summary: ImportSummary | undefined
  // The import's summary as of its last committed batch: what a job cut short records.
  let committed: ImportSummary | undefined
  let lastWrite = now()
  // Where the file stopped being CSV, if it did: the import did not read it to its end.
  let unreadable: { row: number; message: string } | undefined
  try {
    if (run.createDefinitions) await createMissingDefinitions(database, storeId, run.open())
    summary = await importCatalog(database, storeId, run.open(), {
      ...(run.batch && { batch: run.batch }),
      duplicateSkus: run.duplicateSkus,
      onUnreadable: (found) => (unreadable = found),
      onProgress: async (progress, so) => {
        committed = so
        run.onProgress?.(progress, so)
        const stop = run.stopReason()
        if (stop !== undefined) throw new ImportStopped(stop)
        if (now() - lastWrite < PROGRESS_INTERVAL_MS) return
        lastWrite = now()
        await database.writeAtomic((db) => updateImportCounts(db, storeId, id, countsOf(so), iso()))
      },
    })
    const failureReason = isRefusal(summary)
      ? `The file was refused: ${summary.errors[0]!.message}.`
      : unreadable
        ? `The file is not CSV from row ${unreadable.row} on: ${unreadable.message}.`
        : null
    const status = failureReason === null ? 'succeeded' : 'failed'
    await database.writeAtomic((db) =>
      finishImport(
        db,
        storeId,
        id,
        { status, failure_reason: failureReason, finished_at: iso() },
        countsOf(summary!),
      ),
    )
    return { status, failureReason, summary }
  } catch (error) {
    const reason = error instanceof ImportStopped ? error.reason : SERVICE_ERROR_REASON
    try {
      await database.writeAtomic((db) =>
        finishImport(
          db,
          storeId,
          id,
          { status: 'failed', failure_reason: reason, finished_at: iso() },
          committed && countsOf(committed),
        ),
      )
    } catch (failure) {
      if (error instanceof ImportStopped) throw failure
    }
    if (!(error instanceof ImportStopped)) throw error
    return { status: 'failed', failureReason: reason, summary: committed }
  }
}

/**
 * A `catalog import` recorded as an import (GET /imports lists it, its summary and errors
 * kept) like an HTTP job: written as running, its heartbeat kept every 5 s while it runs (a
 * server's sweep fails an import not heard of for 30 s: a killed process's), failed with the
 * reason when `stopReason` says so after a batch (a signal). Imports left running by a
 * process gone for 30 s are failed first, as a server's start does. Resolves with the
 * import's id and how it ended; an error of the import is thrown on once recorded.
 */
export async function runCliImport(
  database: Database,
  storeId: string,
  open: () => Readable,
  options: {
    duplicateSkus?: DuplicateSkus
    createDefinitions?: boolean
    stopReason: () => string | undefined
    onProgress?: (progress: ImportProgress, summary: ImportSummary) => void
  },
): Promise<RecordedEnd & { id: string }> {
  const now = Date.now
  const iso = () => new Date(now()).toISOString()
  const instanceId = newId()
  const id = newId()
  await database.writeAtomic((db) =>
    failStaleImports(db, new Date(now() - STALE_MS).toISOString(), STALE_REASONS, iso()),
  )
  await database.writeAtomic((db) =>
    insertImport(db, {
      store_id: storeId,
      id,
      instance_id: instanceId,
      created_at: iso(),
      source: 'cli',
      duplicate_skus: options.duplicateSkus ?? 'fail',
    }),
  )
  const timer = setInterval(() => {
    database
      .writeAtomic((db) => beatImports(db, instanceId, iso()))
      .catch(() => {
        // A beat missed is one of six before the import looks stale; the next one tries again.
      })
  }, HEARTBEAT_MS)
  try {
    const end = await runRecorded(database, {
      storeId,
      id,
      open,
      duplicateSkus: options.duplicateSkus,
      createDefinitions: options.createDefinitions,
      iso,
      now,
      stopReason: options.stopReason,
      ...(options.onProgress && { onProgress: options.onProgress }),
    })
    return { ...end, id }
  } finally {
    clearInterval(timer)
  }
}

const STALE_REASONS = { http: STOPPED_REASON, cli: CLI_STOPPED_REASON }

/**
 * What to do about an import's summary, in words, for the way it was run (`source`): the
 * products skipped for skus other products keep, with the choice that imports them (when it
 * was not made), and errors past the ones kept.
 */
export function importHints(
  summary: Pick<
    ImportSummary,
    'productsSkippedForDuplicateSkus' | 'rowsSkippedForDuplicateSkus' | 'errorCount'
  >,
  errorsKept: number,
  run: { source: ImportSource; duplicateSkus?: DuplicateSkus | undefined },
): string[] {
  const hints: string[] = []
  const products = summary.productsSkippedForDuplicateSkus
  if (products > 0 && run.duplicateSkus !== 'clear') {
    const rows = summary.rowsSkippedForDuplicateSkus
    const skipped =
      `${count(products, 'product')} (${count(rows, 'row')}) ${products === 1 ? 'was' : 'were'} ` +
      'skipped for a sku another product keeps (duplicate_sku)'
    hints.push(
      run.source === 'cli'
        ? `${skipped}: run catalog import again with --duplicate-skus=clear to import ` +
            'them without those skus (each such row then listed under warnings).'
        : `${skipped}: send the file again to POST /imports?duplicate_skus=clear to import ` +
            'them without those skus (each such row then listed in warnings).',
    )
  }
  if (summary.errorCount > errorsKept) {
    hints.push(
      `errors lists the first ${errorsKept} of ${summary.errorCount} errors: ` +
        'correct those rows and run the import again to see the rest.',
    )
  }
  return hints
}

function count(n: number, noun: string): string {
  return `${n.toLocaleString('en-US')} ${noun}${n === 1 ? '' : 's'}`
}

/** The import jobs of one process: a component started and stopped by server.ts. */
export function createImportJobs(database: Database, options: ImportJobsOptions): ImportJobs {
  const now = options.now ?? Date.now
  const iso = () => new Date(now()).toISOString()
  const heartbeatMs = options.heartbeatMs ?? HEARTBEAT_MS
  const staleMs = options.staleMs ?? STALE_MS
  const directory = options.directory ?? join(tmpdir(), 'catalog-imports')
  const instanceId = newId()
  const running = new Map<string, Promise<void>>()
  let stopping = false
  let timer: NodeJS.Timeout | undefined

  const sweep = async () => {
    await database.writeAtomic((db) => beatImports(db, instanceId, iso()))
    await database.writeAtomic((db) =>
      failStaleImports(db, new Date(now() - staleMs).toISOString(), STALE_REASONS, iso()),
    )
  }

  const run = async (
    storeId: string,
    id: string,
    file: string,
    duplicateSkus: DuplicateSkus | undefined,
    createDefinitions = false,
  ) => {
    try {
      await runRecorded(database, {
        storeId,
        id,
        open: () => createReadStream(file, { highWaterMark: JOB_READ_BYTES }),
        duplicateSkus,
        createDefinitions,
        batch: JOB_BATCH[database.dialect],
        iso,
        now,
        stopReason: () => (stopping ? STOPPED_REASON : undefined),
      })
    } catch (error) {
      options.onError?.(error)
    } finally {
      await rm(file, { force: true })
    }
  }

  return {
    maxBytes: options.maxBytes,
    async submit(storeId, body, keep, choices) {
      if (stopping)
        throw new AppError('unavailable', 'The service is shutting down; retry shortly.')
      const id = newId()
      await mkdir(directory, { recursive: true })
      const file = join(directory, `${id}.csv`)
      const digest = createHash('sha256')
      try {
        await pipeline(body, byteLimit(options.maxBytes), digestOf(digest), createWriteStream(file))
      } catch (error) {
        await rm(file, { force: true })
        throw error
      }
      const insert = async (db: Executor) =>
        rowToRecord(
          await insertImport(db, {
            store_id: storeId,
            id,
            instance_id: instanceId,
            created_at: iso(),
            source: 'http',
            duplicate_skus: choices?.duplicateSkus ?? 'fail',
          }),
        )
      let record: ImportRecord
      try {
        record = keep
          ? await keep(insert, digest.digest('hex'))
          : await database.writeAtomic(insert)
      } catch (error) {
        await rm(file, { force: true })
        throw error
      }
      if (record.id !== id) {
        // An earlier request's import, answered again: this copy of its file is not needed.
        await rm(file, { force: true })
        return record
      }
      const job = run(
        storeId,
        id,
        file,
        choices?.duplicateSkus,
        choices?.createDefinitions,
      ).finally(() => running.delete(id))
      running.set(id, job)
      return record
    },
    async get(storeId, id) {
      const row = await findImport(database.kysely, storeId, id)
      return row && rowToRecord(row)
    },
    async list(storeId, query) {
      const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor)
      const limit = query.limit ?? 50
      const rows = await listImportRows(database.kysely, storeId, after, limit + 1)
      return pageOf(rows, limit, rowToListItem)
    },
    async start() {
      await sweep()
      timer = setInterval(() => {
        sweep().catch((error: unknown) => options.onError?.(error))
      }, heartbeatMs)
      timer.unref()
    },
    async stop() {
      stopping = true
      if (timer) clearInterval(timer)
      await Promise.all(running.values())
    },
  }
}

/** Whether the file was refused whole (a summary of one invalid_csv error and no rows). */
export function isRefusal(summary: ImportSummary): boolean {
  return (
    summary.rowsProcessed === 0 &&
    summary.errors.length === 1 &&
    summary.errors[0]!.error === 'invalid_csv'
  )
}

/**
 * Passes bytes through until `max`; past it, drops the rest and fails with 413 once the body
 * has ended. The request is read to its end rather than destroyed, so that the client gets
 * the 413 (a destroyed request stream takes the connection, and the answer, with it).
 */
function byteLimit(max: number): Transform {
  let seen = 0
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      seen += chunk.length
      done(null, seen > max ? undefined : chunk)
    },
    flush(done) {
      if (seen <= max) return done()
      done(fileTooLarge(max))
    },
  })
}

/** The refusal of a file over the size an import accepts. */
export function fileTooLarge(max: number): AppError {
  return new AppError(
    'payload_too_large',
    `The file is larger than the ${max} bytes an import accepts (IMPORT_MAX_BYTES).`,
  )
}

/** Passes bytes through unchanged, feeding them to `hash` on the way. */
function digestOf(hash: Hash): Transform {
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      hash.update(chunk)
      done(null, chunk)
    },
  })
}

/** Errors, and warnings, a record keeps. */
const MAX_KEPT = 1000

function countsOf(summary: ImportSummary): ImportCounts {
  return {
    rows_processed: summary.rowsProcessed,
    products_created: summary.productsCreated,
    products_updated: summary.productsUpdated,
    variants_created: summary.variantsCreated,
    variants_updated: summary.variantsUpdated,
    rows_failed: summary.rowsFailed,
    columns_not_stored: JSON.stringify(summary.columnsNotStored),
    errors: JSON.stringify(summary.errors.slice(0, MAX_KEPT)),
    warnings: JSON.stringify(summary.warnings.slice(0, MAX_KEPT)),
    skus_cleared: summary.skusCleared,
    products_failed: summary.productsFailed,
    duplicate_sku_products: summary.productsSkippedForDuplicateSkus,
    duplicate_sku_rows: summary.rowsSkippedForDuplicateSkus,
    error_count: summary.errorCount,
  }
}

function fromJson<T>(value: string | T): T {
  return typeof value === 'string' ? (JSON.parse(value) as T) : value
}

function rowToRecord(row: ImportRow): ImportRecord {
  const item = rowToListItem(row)
  const { failureReason, createdAt, finishedAt, hints: _hints, ...counts } = item
  const errors = fromJson(row.errors as string | ImportError[])
  const record = {
    ...counts,
    errors,
    warnings: fromJson(row.warnings as string | ImportWarning[]),
    hints: [] as string[],
    failureReason,
    createdAt,
    finishedAt,
  }
  record.hints = importHints(record, errors.length, record)
  return record
}

function rowToListItem(row: ImportListRow): ImportListItem {
  const item = {
    id: row.id,
    status: row.status as ImportRecord['status'],
    source: row.source as ImportSource,
    duplicateSkus: row.duplicate_skus as DuplicateSkus,
    rowsProcessed: row.rows_processed,
    productsCreated: row.products_created,
    productsUpdated: row.products_updated,
    variantsCreated: row.variants_created,
    variantsUpdated: row.variants_updated,
    rowsFailed: row.rows_failed,
    columnsNotStored: fromJson<string[]>(row.columns_not_stored),
    skusCleared: row.skus_cleared,
    productsFailed: row.products_failed,
    productsSkippedForDuplicateSkus: row.duplicate_sku_products,
    rowsSkippedForDuplicateSkus: row.duplicate_sku_rows,
    errorCount: row.error_count,
    hints: [] as string[],
    failureReason: row.failure_reason,
    createdAt: toIso(row.created_at),
    finishedAt: row.finished_at === null ? null : toIso(row.finished_at),
  }
  // Without the errors at hand, those kept are all of them up to 1,000.
  item.hints = importHints(item, Math.min(item.errorCount, MAX_KEPT), item)
  return item
}
