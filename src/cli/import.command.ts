import { createReadStream, createWriteStream } from 'node:fs'
import { stat } from 'node:fs/promises'
import { Readable, Writable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { parseArgs } from 'node:util'
import { setFlagsFromString } from 'node:v8'
import cliProgress from 'cli-progress'
import { isValidStoreId } from '../auth/api-key.service.js'
import type { Database } from '../db/database.js'
import { migrateToLatest } from '../db/migrate.js'
import { exportCatalog } from '../import/export.service.js'
import { DUPLICATE_SKUS, type DuplicateSkus } from '../import/import-plan.js'
import { importHints, interruptedReason, isRefusal, runCliImport } from '../import/import-jobs.js'
import {
  emptySummary,
  importCatalog,
  type ImportProgress,
  type ImportSummary,
} from '../import/import.service.js'
import { CommandError, UsageError, type Output } from './output.js'
import { expectStore } from './stores.js'

/** Errors, and warnings, the text summary lists (--json gives every one kept, up to 1,000). */
const TEXT_LIST = 50

export const IMPORT_HELP = `Usage: catalog import FILE.csv --store STORE [--dry-run] [--json]
                      [--duplicate-skus=fail|clear] [--create-definitions] [--new-store]

Imports a Shopify product CSV (classic or 2025 column names) into the store: products
matched by handle, variants by sku, then by options, created or updated; nothing deleted.
Each product is imported whole or not at all; a bad row is reported and its product skipped
(rows failed counts all of its rows). A file with no header row or no Handle (URL handle)
column is refused whole: nothing is imported.

The import is recorded like one sent to POST /imports: GET /imports lists it, with its
summary and errors (a --dry-run is not recorded). Ctrl-C (SIGINT) or SIGTERM stops it after
the batch being written: the products imported so far are whole, the record says failed
with the reason, and running the same file again finishes the job.

--store     the store to import into; one that does not exist (no API key, even revoked,
            names it and it holds no product) is refused, naming the stores that exist
--new-store import into a store that does not exist yet
--dry-run   read and check everything, write nothing, print what a real run would do
--json      print the summary as one JSON object on stdout (every error, up to 1,000; the
            text lists the first ${TEXT_LIST}), with the import's id and hints
--duplicate-skus=fail|clear
            a variant whose sku another product (or an earlier row) keeps: fail (the
            default) skips its product with a duplicate_sku error; clear imports the
            variant without the sku and lists the row under Warnings. Real Shopify exports
            often share skus: the summary says how many products the default skipped
--create-definitions
            first create the metafield definitions the store lacks for the file's
            "Label (product|variant.metafields.NS.KEY)" columns: a list of text when a
            value holds "; ", else text (multi-line when a value holds a line break);
            without it such a column is stored only when its definition exists

On a terminal, a progress bar on stderr. Exit 0 when every row was imported, 1 when some
failed, the file was refused, the store does not exist or the import was interrupted,
2 for usage errors.`

export const EXPORT_HELP = `Usage: catalog export --store STORE [--output FILE] [--new-store]

Writes the store's catalogue as a Shopify product CSV (classic columns, then the export's
own: Product Price, Product Compare At Price, Product SKU, Product Barcode, Product Tax Rate,
Variant Name) to FILE, or to stdout. catalog import reads it back.

A store that does not exist (no API key, even revoked, names it and it holds no product) is
refused (exit 1), naming the stores that exist; --new-store writes its (empty) catalogue.`

type Command = (database: Database, output: Output) => Promise<number>

function parse<O extends NonNullable<Parameters<typeof parseArgs>[0]>['options']>(
  command: string,
  args: string[],
  options: O,
) {
  try {
    return parseArgs({ args, options, allowPositionals: true, strict: true })
  } catch (error) {
    throw new UsageError(`catalog ${command}: ${(error as Error).message}`)
  }
}

function storeOption(command: string, store: string | undefined): string {
  if (store === undefined) throw new UsageError(`catalog ${command}: --store is required`)
  if (!isValidStoreId(store)) {
    throw new UsageError(
      `catalog ${command}: --store must be 1 to 64 letters, digits, ".", "_" or "-", starting with a letter or digit`,
    )
  }
  return store
}

/** Parses `catalog import` fully before the database is opened. */
export function parseImportCommand(args: string[]): Command {
  const { values, positionals } = parse('import', args, {
    store: { type: 'string' },
    'dry-run': { type: 'boolean' },
    json: { type: 'boolean' },
    'duplicate-skus': { type: 'string' },
    'create-definitions': { type: 'boolean' },
    'new-store': { type: 'boolean' },
  })
  if (positionals.length !== 1) throw new UsageError('catalog import: give exactly one CSV file')
  const file = positionals[0]!
  const store = storeOption('import', values.store)
  const dryRun = values['dry-run'] ?? false
  const duplicateSkus = (values['duplicate-skus'] ?? 'fail') as DuplicateSkus
  if (!DUPLICATE_SKUS.includes(duplicateSkus)) {
    throw new UsageError(
      `catalog import: --duplicate-skus must be fail or clear, not "${values['duplicate-skus']}"`,
    )
  }
  return async (database, output) => {
    let size: number
    try {
      size = (await stat(file)).size
    } catch (error) {
      throw new CommandError(`catalog import: cannot read ${file}: ${(error as Error).message}`)
    }
    await migrateToLatest(database)
    if (!values['new-store']) await expectStore(database.kysely, 'import', store)
    // Each batch's rows outlive a few young collections and die in the old generation, which
    // V8 lets grow to several times the live data before collecting it: 281 MiB of RSS for
    // 1,000,000 variants. Growing it by half at most keeps that run under 200 MiB
    // (docs/decisions/0023-import-batches.md). Read by V8 at each collection, so it applies now.
    setFlagsFromString('--heap-growing-percent=50')
    const bar = process.stderr.isTTY ? progressBar(size) : undefined
    const onProgress = (progress: ImportProgress) =>
      bar?.update(progress.bytes, { rows: progress.rowsProcessed })
    let result: ImportResult
    try {
      result = dryRun
        ? {
            summary: await importCatalog(database, store, createReadStream(file), {
              dryRun,
              duplicateSkus,
              onProgress,
            }),
            id: null,
            failureReason: null,
          }
        : await recordedImport(database, store, file, {
            duplicateSkus,
            createDefinitions: values['create-definitions'] ?? false,
            onProgress,
          })
      bar?.update(size, { rows: result.summary.rowsProcessed })
    } finally {
      bar?.stop()
    }
    const { summary, id, failureReason } = result
    const hints = importHints(summary, summary.errors.length, { source: 'cli', duplicateSkus })
    output.out(
      values.json
        ? JSON.stringify({ ...summary, hints, id, failureReason })
        : formatSummary(result, hints, store, dryRun),
    )
    if (result.interrupted) {
      output.err(
        `catalog import: interrupted (${result.interrupted}); import ${id} is recorded as failed. ` +
          'The products imported so far are whole: run the same file again to finish.',
      )
    }
    return failureReason === null && summary.rowsFailed === 0 && summary.errors.length === 0 ? 0 : 1
  }
}

interface ImportResult {
  summary: ImportSummary
  /** The import's record (null for a dry run, which is not recorded). */
  id: string | null
  failureReason: string | null
  /** The signal that stopped it, if one did. */
  interrupted?: string
}

/**
 * A real run, recorded as an import (see runCliImport). SIGINT and SIGTERM stop it after the
 * batch being written (the record failed with the reason); a repeat of the signal (a terminal
 * and npm each deliver one Ctrl-C) changes nothing, so it is not cut short before it is
 * recorded. The listeners live as long as the import, then the signals act as before.
 */
async function recordedImport(
  database: Database,
  store: string,
  file: string,
  options: {
    duplicateSkus: DuplicateSkus
    createDefinitions: boolean
    onProgress: (progress: ImportProgress) => void
  },
): Promise<ImportResult> {
  let interrupted: string | undefined
  const onSignal = (signal: string) => {
    interrupted ??= signal
  }
  process.on('SIGINT', onSignal)
  process.on('SIGTERM', onSignal)
  try {
    const end = await runCliImport(database, store, () => createReadStream(file), {
      duplicateSkus: options.duplicateSkus,
      createDefinitions: options.createDefinitions,
      stopReason: () => (interrupted === undefined ? undefined : interruptedReason(interrupted)),
      onProgress: options.onProgress,
    })
    return {
      summary: end.summary ?? emptySummary(),
      id: end.id,
      failureReason: end.failureReason,
      ...(interrupted !== undefined &&
        end.failureReason === interruptedReason(interrupted) && { interrupted }),
    }
  } finally {
    process.off('SIGINT', onSignal)
    process.off('SIGTERM', onSignal)
  }
}

/**
 * The bar: bytes read of the file's size give the share done and the time left; the rows
 * and their rate are shown beside. cli-progress draws on stderr, at most 10 times a second.
 */
function progressBar(size: number): cliProgress.SingleBar {
  const started = performance.now()
  const bar = new cliProgress.SingleBar(
    {
      stream: process.stderr,
      fps: 10,
      format: (options, params, payload: { rows: number }) => {
        const seconds = (performance.now() - started) / 1000
        const rate = seconds > 0 ? Math.round(payload.rows / seconds) : 0
        const bar = cliProgress.Format.BarFormat(params.progress, options)
        const eta = Number.isFinite(params.eta) ? `${params.eta}s` : '-'
        return `${bar} ${Math.floor(params.progress * 100)}% | ${payload.rows} rows | ${rate} rows/s | ${eta} left`
      },
    },
    cliProgress.Presets.shades_classic,
  )
  bar.start(Math.max(size, 1), 0, { rows: 0 })
  return bar
}

function formatSummary(
  result: ImportResult,
  hints: string[],
  store: string,
  dryRun: boolean,
): string {
  const { summary, id, failureReason } = result
  const recorded = id === null ? '' : ` (recorded as import ${id})`
  if (isRefusal(summary)) {
    const error = summary.errors[0]!
    return [
      dryRun
        ? `Dry run for store "${store}": a real run would refuse the file, importing nothing:`
        : `Refused: nothing was imported into store "${store}"${recorded}. The file was refused whole:`,
      `  row ${error.row}: ${error.message} (${error.error})`,
    ].join('\n')
  }
  const heading = dryRun
    ? `Dry run for store "${store}": nothing was written. A real run would give:`
    : result.interrupted
      ? `Interrupted (${result.interrupted}) part-way into store "${store}"${recorded}: imported so far:`
      : failureReason !== null
        ? `Imported into store "${store}" in part${recorded}: ${failureReason}`
        : `Imported into store "${store}"${recorded}:`
  const failed =
    summary.productsFailed > 0
      ? ` (every row of the ${count(summary.productsFailed, 'product')} skipped: a product with a bad row is not imported)`
      : ''
  const lines = [
    heading,
    `  rows processed:    ${summary.rowsProcessed}`,
    `  products created:  ${summary.productsCreated}, updated: ${summary.productsUpdated}`,
    `  variants created:  ${summary.variantsCreated}, updated: ${summary.variantsUpdated}`,
    `  rows failed:       ${summary.rowsFailed}${failed}`,
    `  columns not stored: ${summary.columnsNotStored.length === 0 ? 'none' : summary.columnsNotStored.join(', ')}`,
  ]
  if (summary.skusCleared > 0) lines.push(`  skus cleared:      ${summary.skusCleared}`)
  if (summary.warnings.length > 0) {
    lines.push(
      `Warnings (a sku cleared, a handle made into a slug)${listed(summary.warnings.length, summary.warnings.length)}:`,
    )
    for (const warning of summary.warnings.slice(0, TEXT_LIST)) {
      lines.push(
        `  row ${warning.row}, handle ${warning.handle}, ${warning.field}: ${warning.message}`,
      )
    }
  }
  if (summary.errors.length > 0) {
    lines.push(`Errors${listed(summary.errors.length, summary.errorCount)}:`)
    for (const error of summary.errors.slice(0, TEXT_LIST)) {
      const where = [`row ${error.row}`, error.handle && `handle ${error.handle}`, error.field]
        .filter(Boolean)
        .join(', ')
      lines.push(`  ${where}: ${error.message} (${error.error})`)
    }
  }
  for (const hint of hints) lines.push(`Hint: ${hint}`)
  return lines.join('\n')
}

/**
 * How many of a list the text shows, of how many found: `(30)`, or `(the first 50 of 279;
 * --json lists ...)` when it shows fewer than were found.
 */
function listed(kept: number, found: number): string {
  const shown = Math.min(kept, TEXT_LIST)
  if (shown === found) return ` (${found})`
  const json =
    kept > shown ? `; --json lists ${kept === found ? 'all of them' : `the first ${kept}`}` : ''
  return ` (the first ${shown} of ${found}${json})`
}

function count(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`
}

/** Parses `catalog export` fully before the database is opened. */
export function parseExportCommand(args: string[]): Command {
  const { values, positionals } = parse('export', args, {
    store: { type: 'string' },
    output: { type: 'string' },
    'new-store': { type: 'boolean' },
  })
  if (positionals.length > 0) throw new UsageError('catalog export: takes no file argument')
  const store = storeOption('export', values.store)
  return async (database) => {
    await migrateToLatest(database)
    // Before the output file is opened: a refused store leaves no empty file behind.
    if (!values['new-store']) await expectStore(database.kysely, 'export', store)
    const target: Writable =
      values.output === undefined ? process.stdout : createWriteStream(values.output)
    try {
      await pipeline(Readable.from(exportCatalog(database, store)), target, {
        end: values.output !== undefined,
      })
    } catch (error) {
      throw new CommandError(`catalog export: ${(error as Error).message}`)
    }
    return 0
  }
}
