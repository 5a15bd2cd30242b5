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
import { importCatalog, type ImportSummary } from '../import/import.service.js'
import { createMissingDefinitions } from '../import/metafield-import.js'
import { CommandError, UsageError, type Output } from './output.js'

export const IMPORT_HELP = `Usage: catalog import FILE.csv --store STORE [--dry-run] [--json]
                      [--duplicate-skus=fail|clear] [--create-definitions]

Imports a Shopify product CSV (classic or 2025 column names) into the store: products
matched by handle, variants by sku, then by options, created or updated; nothing deleted.
Each product is imported whole or not at all; a bad row is reported and its product skipped.

--dry-run   read and check everything, write nothing, print what a real run would do
--json      print the summary as one JSON object on stdout
--duplicate-skus=fail|clear
            a variant whose sku another product (or an earlier row) keeps: fail (the
            default) skips its product with a duplicate_sku error; clear imports the
            variant without the sku and lists the row under Warnings
--create-definitions
            first create the metafield definitions the store lacks for the file's
            "Label (product|variant.metafields.NS.KEY)" columns: a list of text when a
            value holds "; ", else text (multi-line when a value holds a line break);
            without it such a column is stored only when its definition exists

On a terminal, a progress bar on stderr. Exit 0 when every row was imported, 1 when some
failed or the file was refused, 2 for usage errors.`

export const EXPORT_HELP = `Usage: catalog export --store STORE [--output FILE]

Writes the store's catalogue as a Shopify product CSV (classic columns, then the export's
own: Product Price, Product Compare At Price, Product SKU, Product Barcode, Product Tax Rate,
Variant Name) to FILE, or to stdout. catalog import reads it back.`

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
    // Each batch's rows outlive a few young collections and die in the old generation, which
    // V8 lets grow to several times the live data before collecting it: 281 MiB of RSS for
    // 1,000,000 variants. Growing it by half at most keeps that run under 200 MiB
    // (docs/decisions/0023-import-batches.md). Read by V8 at each collection, so it applies now.
    setFlagsFromString('--heap-growing-percent=50')
    if (values['create-definitions'] && !dryRun) {
      await createMissingDefinitions(database, store, createReadStream(file))
    }
    const bar = process.stderr.isTTY ? progressBar(size) : undefined
    let summary: ImportSummary
    try {
      summary = await importCatalog(database, store, createReadStream(file), {
        dryRun,
        duplicateSkus,
        onProgress: (progress) => bar?.update(progress.bytes, { rows: progress.rowsProcessed }),
      })
      bar?.update(size, { rows: summary.rowsProcessed })
    } finally {
      bar?.stop()
    }
    output.out(values.json ? JSON.stringify(summary) : formatSummary(summary, store, dryRun))
    return summary.rowsFailed === 0 && summary.errors.length === 0 ? 0 : 1
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

function formatSummary(summary: ImportSummary, store: string, dryRun: boolean): string {
  const lines = [
    dryRun
      ? `Dry run for store "${store}": nothing was written. A real run would give:`
      : `Imported into store "${store}":`,
    `  rows processed:    ${summary.rowsProcessed}`,
    `  products created:  ${summary.productsCreated}, updated: ${summary.productsUpdated}`,
    `  variants created:  ${summary.variantsCreated}, updated: ${summary.variantsUpdated}`,
    `  rows failed:       ${summary.rowsFailed}`,
    `  columns not stored: ${summary.columnsNotStored.length === 0 ? 'none' : summary.columnsNotStored.join(', ')}`,
  ]
  if (summary.skusCleared > 0) lines.push(`  skus cleared:      ${summary.skusCleared}`)
  if (summary.warnings.length > 0) {
    lines.push('Warnings (a sku cleared, a handle made into a slug):')
    for (const warning of summary.warnings) {
      lines.push(
        `  row ${warning.row}, handle ${warning.handle}, ${warning.field}: ${warning.message}`,
      )
    }
  }
  if (summary.errors.length > 0) {
    lines.push('Errors:')
    for (const error of summary.errors) {
      const where = [`row ${error.row}`, error.handle && `handle ${error.handle}`, error.field]
        .filter(Boolean)
        .join(', ')
      lines.push(`  ${where}: ${error.message} (${error.error})`)
    }
  }
  return lines.join('\n')
}

/** Parses `catalog export` fully before the database is opened. */
export function parseExportCommand(args: string[]): Command {
  const { values, positionals } = parse('export', args, {
    store: { type: 'string' },
    output: { type: 'string' },
  })
  if (positionals.length > 0) throw new UsageError('catalog export: takes no file argument')
  const store = storeOption('export', values.store)
  return async (database) => {
    await migrateToLatest(database)
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
