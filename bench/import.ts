/**
 * Issue 16's benchmark of the Shopify CSV import: `npm run bench:import`.
 *
 * - A generated file of 25,000 products of 4 variants (100,000 variants), each with 3 tags
 *   and 2 images, imported by `catalog import` (the CLI, straight to the database, as a user
 *   runs it), against a bare loader that writes the same rows with the raw driver
 *   (better-sqlite3 / pg) in transactions of 500 products: products, variants, product_tags,
 *   slug_counters and the events, because the import must append them (contract part 3),
 *   so the ratio is the engine's cost, not that of rows the bare loader would skip. Both read
 *   the file with csv-parse and start on a database migrated by `catalog migrate`. Taken in
 *   turn, `BENCH_IMPORT_ROUNDS` times (2), each on a fresh database. Goal: import >= 0.5 of
 *   the bare loader's variants per second, on each database.
 * - Peak RSS of the importing process: VmHWM of /proc/<pid>/status, sampled every 50 ms
 *   until it exits. With BENCH_LONG=1, also a 1,000,000-variant import (goal <= 200 MiB).
 * - Export: `catalog export` of the imported store, variants per second.
 * - SQLite: API creates and reads (8 connections, half each) against `catalog serve`, in a
 *   window without an import, then in a window while the same file is imported by the
 *   server's own HTTP job (POST /imports), which is how an import shares the SQLite writer
 *   with the API (the CLI is another process, a second writer). Goal: no request fails,
 *   p99 during <= 5x p99 without.
 *
 * BENCH_POSTGRES_URL adds PostgreSQL. BENCH_IMPORT_SHORT=1 (`npm run bench:import --
 * --short`): 2,500 products, 1 round, 2 s windows, under a minute, for CI. Results in
 * bench/results/import-<time>.json and on stdout. Exits 1 when an import or an API request
 * failed; the goals are reported, not enforced, as in `npm run bench`.
 */
import { once } from 'node:events'
import {
  createReadStream,
  createWriteStream,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs'
import { readFile, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import SqliteDatabase from '../src/db/sqlite-driver.js'
import { parse } from 'csv-parse'
import pg from 'pg'
import { PRODUCT_COLUMNS } from '../src/catalog/product.repository.js'
import { VARIANT_INSERT_COLUMNS } from '../src/catalog/variant.repository.js'
import { optionsKey } from '../src/catalog/variant.service.js'
import { newId } from '../src/db/values.js'
import { exportHeader } from '../src/import/shopify-columns.js'
import { cleanUpOnSignals, createCleanup, type Cleanup } from './cleanup.js'
import { loadBenchConfig } from './config.js'
import { startLoadGenerator } from './load-job.js'
import { measureWindow, type WindowFigures } from './measure.js'
import { postgresFacts } from './postgres.js'
import { readMemory } from './proc.js'
import { runCommand, spawnChild } from './processes.js'
import { goal, type Goal } from './report.js'
import { API, type RequestSpec } from './requests.js'
import { BENCH_STORE } from './seed.js'
import { ratio } from './stats.js'
import {
  scratchDatabase,
  settle,
  startScriptNodeFlags,
  startService,
  type Dialect,
  type TargetContext,
} from './targets.js'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const CLI = join(ROOT, 'dist/cli/main.js')
const VARIANTS_PER_PRODUCT = 4
const BARE_BATCH = 500

const FAILED_REQUESTS = 'API requests failed during the import'

const short = process.argv.includes('--short') || process.env.BENCH_IMPORT_SHORT === '1'
const config = loadBenchConfig()
const PRODUCTS = short ? 2_500 : 25_000
const LONG_PRODUCTS = 250_000
const ROUNDS = short ? 1 : Number(process.env.BENCH_IMPORT_ROUNDS ?? 2)
const WINDOW_S = short ? 2 : 5

// ---------------------------------------------------------------------------------------
// The file

/** A handle of letters only: one ending in digits would be read as a suffixed slug. */
function handleOf(n: number): string {
  let letters = ''
  do {
    letters = String.fromCharCode(97 + (n % 26)) + letters
    n = Math.floor(n / 26)
  } while (n > 0)
  return `bench-product-${letters}`
}

/**
 * Shopify's classic columns with two options, as the export writes them, without the
 * export's own: productRows and the bare loader index them by these positions.
 */
const HEADER = exportHeader(2).slice(0, 20)
if (HEADER[0] !== 'Handle' || HEADER[19] !== 'Status') throw new Error('the header has moved')
const SIZES = ['S', 'M', 'L', 'XL']
const COLORS = ['Red', 'Blue', 'Green', 'Black', 'White']

/** The rows of product n: 4 variants (Size x one Color), 3 tags, 2 images. */
function productRows(n: number): string[][] {
  const handle = handleOf(n)
  const color = COLORS[n % COLORS.length]!
  return SIZES.map((size, i) => [
    handle,
    i === 0 ? `Bench product ${handle.slice(14)}` : '',
    i === 0 ? `<p>Product ${n}, made for the import benchmark.</p>` : '',
    i === 0 ? `Vendor ${n % 50}` : '',
    i === 0 ? `Type ${n % 20}` : '',
    i === 0 ? `bench, tag-${n % 100}, colour ${color}` : '',
    i === 0 ? 'true' : '',
    i === 0 ? 'Size' : '',
    size,
    i === 0 ? 'Color' : '',
    color,
    `SKU-${n}-${size}`,
    String(200 + i * 50),
    `${19 + i}.99`,
    i === 0 ? '29.99' : '',
    `BAR${String(n * 4 + i).padStart(10, '0')}`,
    i < 2 ? `https://cdn.example.com/products/${n}/${i + 1}.jpg` : '',
    i < 2 ? String(i + 1) : '',
    i < 2 ? `Bench product ${n}, view ${i + 1}` : '',
    i === 0 ? 'active' : '',
  ])
}

function csvLine(fields: string[]): string {
  return `${fields.map((f) => (/[",\n\r]/.test(f) ? `"${f.replaceAll('"', '""')}"` : f)).join(',')}\r\n`
}

/** Writes the file of `products` products, with backpressure. */
async function writeCatalogueCsv(path: string, products: number): Promise<void> {
  const out = createWriteStream(path)
  out.write(csvLine(HEADER))
  for (let n = 0; n < products; n++) {
    if (!out.write(productRows(n).map(csvLine).join(''))) await once(out, 'drain')
  }
  out.end()
  await once(out, 'finish')
}

// ---------------------------------------------------------------------------------------
// The bare loader

interface BareTables {
  products: unknown[][]
  variants: unknown[][]
  tags: unknown[][]
  slugs: unknown[][]
  events: unknown[][]
}

/** The tables' columns, as the service writes them (its repositories' lists). */
const COLUMNS = {
  products: PRODUCT_COLUMNS,
  variants: VARIANT_INSERT_COLUMNS,
  tags: ['store_id', 'product_id', 'tag_key', 'status', 'created_at'],
  slugs: ['store_id', 'slug', 'claims', 'last_suffix'],
  events: ['store_id', 'id', 'type', 'object', 'created_at'],
} as const

/** A row as the JSON object of its columns: an event's object. */
function asJson(table: 'products' | 'variants', row: unknown[]): string {
  return JSON.stringify(Object.fromEntries(COLUMNS[table].map((column, i) => [column, row[i]])))
}

const money = (text: string) => (text === '' ? null : Math.round(Number(text) * 10_000))

/**
 * The rows one product's records make, by the file's fixed layout (it knows the columns, it
 * checks nothing): what a loader written for this one file would insert.
 */
function bareRows(records: string[][], tables: BareTables): void {
  const first = records[0]!
  const now = new Date().toISOString()
  const id = newId()
  const tags = first[5]!.split(',').map((t) => t.trim())
  const images = records
    .filter((r) => r[16] !== '')
    .map((r) => ({ url: r[16], alt: r[18] === '' ? null : r[18] }))
  // In PRODUCT_COLUMNS' order.
  const product = [
    BENCH_STORE,
    id,
    first[1],
    first[0],
    first[19],
    first[2],
    money(first[13]!),
    null,
    null,
    null,
    null,
    first[3],
    first[4],
    JSON.stringify(tags),
    JSON.stringify(images),
    records.length,
    1 + records.length,
    now,
    now,
  ]
  tables.products.push(product)
  tables.slugs.push([BENCH_STORE, first[0], 1, 1])
  for (const tag of tags) tables.tags.push([BENCH_STORE, id, tag.toLowerCase(), product[4], now])
  tables.events.push([BENCH_STORE, newId(), 'product.created', asJson('products', product), now])
  records.forEach((r, i) => {
    const optionValues = { [first[7]!]: r[8]!, [first[9]!]: r[10]! }
    const options = JSON.stringify(optionValues)
    const variant = [
      BENCH_STORE,
      newId(),
      id,
      `${r[8]} / ${r[10]}`,
      r[11],
      r[15],
      money(r[13]!),
      money(r[14]!),
      options,
      optionsKey(optionValues),
      i + 1,
      Number(r[12]),
      now,
      now,
    ]
    tables.variants.push(variant)
    tables.events.push([BENCH_STORE, newId(), 'variant.created', asJson('variants', variant), now])
  })
}

/** A writer of one batch of rows in one transaction. */
type BatchWriter = (tables: BareTables) => Promise<void>

function sqliteWriter(file: string): { write: BatchWriter; close(): void } {
  const db = new SqliteDatabase(file)
  db.pragma('journal_mode = WAL')
  // As durable as the service's commits (src/db/database.ts): each one synced.
  db.pragma('synchronous = FULL')
  const statements = Object.fromEntries(
    Object.entries(COLUMNS).map(([table, columns]) => {
      const name = table === 'tags' ? 'product_tags' : table === 'slugs' ? 'slug_counters' : table
      return [
        table,
        db.prepare(
          `insert into ${name} (${columns.join(', ')}) values (${columns.map(() => '?').join(', ')})`,
        ),
      ]
    }),
  ) as Record<keyof BareTables, SqliteDatabase.Statement>
  const transaction = db.transaction((tables: BareTables) => {
    for (const table of Object.keys(COLUMNS) as (keyof BareTables)[]) {
      for (const row of tables[table]) statements[table].run(row)
    }
  })
  return { write: async (tables) => transaction(tables), close: () => db.close() }
}

async function postgresWriter(
  url: string,
): Promise<{ write: BatchWriter; close(): Promise<void> }> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  const insert = async (table: keyof BareTables, rows: unknown[][]) => {
    const columns = COLUMNS[table]
    const name = table === 'tags' ? 'product_tags' : table === 'slugs' ? 'slug_counters' : table
    const perStatement = Math.floor(30_000 / columns.length)
    for (let start = 0; start < rows.length; start += perStatement) {
      const piece = rows.slice(start, start + perStatement)
      const values = piece.map(
        (_, r) => `(${columns.map((_, c) => `$${r * columns.length + c + 1}`).join(', ')})`,
      )
      await client.query(
        `insert into ${name} (${columns.join(', ')}) values ${values.join(', ')}`,
        piece.flat(),
      )
    }
  }
  return {
    write: async (tables) => {
      await client.query('begin')
      for (const table of Object.keys(COLUMNS) as (keyof BareTables)[])
        await insert(table, tables[table])
      await client.query('commit')
    },
    close: () => client.end(),
  }
}

/** The bare loader: the file read with csv-parse, products grouped, written 500 a transaction. */
async function bareLoad(dialect: Dialect, databaseUrl: string, file: string): Promise<void> {
  const writer =
    dialect === 'sqlite'
      ? sqliteWriter(databaseUrl.slice('sqlite:'.length))
      : await postgresWriter(databaseUrl)
  const empty = (): BareTables => ({ products: [], variants: [], tags: [], slugs: [], events: [] })
  let tables = empty()
  let group: string[][] = []
  let products = 0
  const close = async () => {
    if (group.length > 0) bareRows(group, tables)
    group = []
    if (++products % BARE_BATCH === 0) {
      await writer.write(tables)
      tables = empty()
    }
  }
  let header = true
  for await (const record of createReadStream(file).pipe(parse({ bom: true })) as AsyncIterable<
    string[]
  >) {
    if (header) {
      header = false
      continue
    }
    if (group.length > 0 && group[0]![0] !== record[0]) await close()
    group.push(record)
  }
  await close()
  if (tables.products.length > 0) await writer.write(tables)
  await writer.close()
}

// ---------------------------------------------------------------------------------------
// The import, the export

interface ImportRun {
  seconds: number
  variantsPerS: number
  peakRssMiB: number
}

/** `catalog import` as a user runs it; its VmHWM sampled until it exits. */
async function cliImport(
  cleanup: Cleanup,
  databaseUrl: string,
  file: string,
  variants: number,
): Promise<ImportRun> {
  const started = performance.now()
  const child = spawnChild(
    cleanup,
    'catalog import',
    process.execPath,
    [CLI, 'import', file, '--store', BENCH_STORE, '--json'],
    {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      DATABASE_URL: databaseUrl,
      LOG_LEVEL: 'warn',
    },
  )
  let peak = 0
  const sample = () => {
    try {
      peak = Math.max(peak, readMemory(child.pid).peakMiB)
    } catch {
      // it has exited
    }
  }
  const timer = setInterval(sample, 50)
  let stdout = ''
  child.process.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()))
  const code = await child.exited
  clearInterval(timer)
  const seconds = (performance.now() - started) / 1000
  if (code !== 0) throw new Error(`catalog import exited ${code}:\n${child.output()}`)
  const summary = JSON.parse(stdout) as { variantsCreated: number; rowsFailed: number }
  if (summary.variantsCreated !== variants || summary.rowsFailed !== 0) {
    throw new Error(`catalog import did not create every variant: ${stdout.slice(0, 500)}`)
  }
  return { seconds, variantsPerS: variants / seconds, peakRssMiB: peak }
}

async function cliExport(databaseUrl: string, variants: number, dir: string) {
  const output = join(dir, 'export.csv')
  const started = performance.now()
  await runCommand(process.execPath, [CLI, 'export', '--store', BENCH_STORE, '--output', output], {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, DATABASE_URL: databaseUrl },
  })
  const seconds = (performance.now() - started) / 1000
  const lines = readFileSync(output, 'utf8').split(/\r?\n/).filter(Boolean).length
  if (lines !== variants + 1) throw new Error(`the export has ${lines} lines, not ${variants + 1}`)
  return { seconds, variantsPerS: variants / seconds, bytes: (await stat(output)).size }
}

/** A database migrated by `catalog migrate`: the import's and the bare loader's alike. */
async function migratedDatabase(context: TargetContext, dialect: Dialect) {
  const database = await scratchDatabase(context, dialect)
  await runCommand(process.execPath, [CLI, 'migrate'], {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, DATABASE_URL: database.url },
  })
  return database
}

// ---------------------------------------------------------------------------------------
// The API during an import (SQLite)

interface DuringImport {
  without: WindowFigures
  during: WindowFigures
  importSeconds: number
  importStillRunningAfterWindow: boolean
}

async function apiDuringImport(context: TargetContext, file: string): Promise<DuringImport> {
  const server = await startService(context, 'sqlite')
  const load = startLoadGenerator(context.cleanup)
  try {
    const headers = { authorization: `Bearer ${server.key}`, 'content-type': 'application/json' }
    const productIds: string[] = []
    for (let i = 0; i < 20; i++) {
      const res = await fetch(`${server.url}${API}/products`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ name: `Reader ${i} product`, price: 5 }),
      })
      productIds.push(((await res.json()) as { data: { id: string } }).data.id)
    }
    const specs: RequestSpec[] = [{ kind: 'create-product' }, { kind: 'get-product', productIds }]
    const window = { ...config, warmupS: 1, durationS: WINDOW_S, connections: 8 }
    const without = await measureWindow(server, load, window, specs)
    const started = performance.now()
    const posted = await fetch(`${server.url}${API}/imports`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'text/csv' },
      body: await readFile(file),
    })
    if (posted.status !== 202) throw new Error(`POST /imports answered ${posted.status}`)
    const { id } = ((await posted.json()) as { data: { id: string } }).data
    const status = async () => {
      const res = await fetch(`${server.url}${API}/imports/${id}`, { headers })
      return ((await res.json()) as { data: { status: string; rowsFailed: number } }).data
    }
    const during = await measureWindow(server, load, window, specs)
    const stillRunning = (await status()).status === 'running'
    for (;;) {
      const now = await status()
      if (now.status !== 'running') {
        if (now.status !== 'succeeded' || now.rowsFailed !== 0)
          throw new Error(`the HTTP import ended ${JSON.stringify(now)}`)
        break
      }
      await new Promise((resolve) => setTimeout(resolve, 200))
    }
    return {
      without,
      during,
      importSeconds: (performance.now() - started) / 1000,
      importStillRunningAfterWindow: stillRunning,
    }
  } finally {
    await load.stop()
    await server.stop()
  }
}

// ---------------------------------------------------------------------------------------

interface DialectFigures {
  dialect: Dialect
  imports: ImportRun[]
  bare: { seconds: number; variantsPerS: number }[]
  rateRatio: number | null
  export: { seconds: number; variantsPerS: number; bytes: number }
  long?: ImportRun
  during?: DuringImport
  goals: Goal[]
}

async function main() {
  const cleanup = createCleanup()
  cleanUpOnSignals(cleanup)
  const dir = mkdtempSync(join(tmpdir(), 'catalog-bench-import-'))
  cleanup.add(`remove ${dir}`, () => rmSync(dir, { recursive: true, force: true }))
  const context: TargetContext = {
    cleanup,
    serviceCli: CLI,
    serviceNodeFlags: startScriptNodeFlags(join(ROOT, 'package.json')),
    baselineScript: '',
    postgresUrl: config.postgresUrl,
  }
  const dialects: Dialect[] = config.postgresUrl ? ['sqlite', 'postgres'] : ['sqlite']
  const startedAt = new Date().toISOString()
  const log = (line: string) => console.error(`[${new Date().toISOString().slice(11, 19)}] ${line}`)
  try {
    const file = join(dir, 'products.csv')
    const variants = PRODUCTS * VARIANTS_PER_PRODUCT
    await writeCatalogueCsv(file, PRODUCTS)
    log(`file: ${PRODUCTS} products, ${variants} variants, ${(await stat(file)).size} bytes`)
    const figures: DialectFigures[] = []
    for (const dialect of dialects) {
      const imports: ImportRun[] = []
      const bare: { seconds: number; variantsPerS: number }[] = []
      let exported: DialectFigures['export'] | undefined
      for (let round = 0; round < ROUNDS; round++) {
        // In turn, so that the machine's drift falls on both alike.
        const forBare = await migratedDatabase(context, dialect)
        await settle(context)
        const started = performance.now()
        await bareLoad(dialect, forBare.url, file)
        const seconds = (performance.now() - started) / 1000
        bare.push({ seconds, variantsPerS: variants / seconds })
        log(
          `${dialect} bare loader: ${seconds.toFixed(2)} s, ${(variants / seconds).toFixed(0)} variants/s`,
        )
        await forBare.remove()

        const forImport = await scratchDatabase(context, dialect)
        await settle(context)
        const run = await cliImport(cleanup, forImport.url, file, variants)
        imports.push(run)
        log(
          `${dialect} catalog import: ${run.seconds.toFixed(2)} s, ${run.variantsPerS.toFixed(0)} variants/s, peak RSS ${run.peakRssMiB.toFixed(0)} MiB`,
        )
        if (round === ROUNDS - 1) {
          exported = await cliExport(forImport.url, variants, dir)
          log(
            `${dialect} catalog export: ${exported.seconds.toFixed(2)} s, ${exported.variantsPerS.toFixed(0)} variants/s`,
          )
        }
        await forImport.remove()
      }
      const sum = (runs: { seconds: number }[]) => runs.reduce((total, r) => total + r.seconds, 0)
      // Rates from the sums of the rounds' times: each round weighs what it lasted.
      const rateRatio = ratio(sum(bare), sum(imports))
      const entry: DialectFigures = {
        dialect,
        imports,
        bare,
        rateRatio,
        export: exported!,
        goals: [goal('import / bare loader, variants per second', '>=', 0.5, rateRatio)],
      }
      if (config.long) {
        const longFile = join(dir, 'long.csv')
        await writeCatalogueCsv(longFile, LONG_PRODUCTS)
        const database = await scratchDatabase(context, dialect)
        entry.long = await cliImport(cleanup, database.url, longFile, LONG_PRODUCTS * 4)
        log(
          `${dialect} 1,000,000 variants: ${entry.long.seconds.toFixed(0)} s, peak RSS ${entry.long.peakRssMiB.toFixed(0)} MiB`,
        )
        await database.remove()
        rmSync(longFile)
      }
      entry.goals.push(
        goal(
          'peak RSS of a 1,000,000-variant import',
          '<=',
          200,
          entry.long?.peakRssMiB ?? null,
          ' MiB',
        ),
      )
      if (dialect === 'sqlite') {
        entry.during = await apiDuringImport(context, file)
        const { without, during } = entry.during
        log(
          `sqlite API p99 without an import ${without.p99Ms.toFixed(1)} ms, during ${during.p99Ms.toFixed(1)} ms (${during.responses} responses, ${during.non2xx} non-2xx, ${during.errors} errors)`,
        )
        entry.goals.push(
          goal(
            FAILED_REQUESTS,
            '<=',
            0,
            during.non2xx + during.errors + without.non2xx + without.errors,
          ),
          goal('API p99 during / without an import', '<=', 5, ratio(during.p99Ms, without.p99Ms)),
        )
      }
      figures.push(entry)
    }
    const report = {
      startedAt,
      finishedAt: new Date().toISOString(),
      command: `npm run bench:import${short ? ' -- --short' : ''}${config.long ? ' (BENCH_LONG=1)' : ''}`,
      products: PRODUCTS,
      variants,
      rounds: ROUNDS,
      postgres: config.postgresUrl ? await postgresFacts(config.postgresUrl) : undefined,
      figures,
    }
    const stamp = startedAt.replace(/\.\d+Z$/, 'Z').replaceAll(':', '-')
    const out = join(ROOT, 'bench/results', `import-${stamp}${short ? '-short' : ''}.json`)
    writeFileSync(out, `${JSON.stringify(report, null, 2)}\n`)
    console.log(summaryLines(figures).join('\n'))
    console.log(`results: ${out}`)
    // As npm run bench: a failed request (or an import that failed, thrown above) fails the
    // run; the ratio goals are reported, since this machine's load decides them from run to
    // run and the short mode cannot meet them.
    const failed = figures.flatMap((f) =>
      f.goals.filter((g) => g.figure === FAILED_REQUESTS && g.met === false),
    )
    if (failed.length > 0) process.exitCode = 1
  } finally {
    await cleanup.runAll()
  }
}

function summaryLines(figures: DialectFigures[]): string[] {
  const lines: string[] = []
  const mean = (runs: { variantsPerS: number }[]) =>
    runs.reduce((total, r) => total + r.variantsPerS, 0) / runs.length
  for (const f of figures) {
    lines.push(
      `${f.dialect}: import ${mean(f.imports).toFixed(0)} variants/s, bare loader ${mean(f.bare).toFixed(0)} variants/s, ratio ${f.rateRatio?.toFixed(2)}; peak RSS ${Math.max(...f.imports.map((r) => r.peakRssMiB)).toFixed(0)} MiB; export ${f.export.variantsPerS.toFixed(0)} variants/s`,
    )
    if (f.during) {
      lines.push(
        `${f.dialect}: API p99 ${f.during.without.p99Ms.toFixed(1)} ms without an import, ${f.during.during.p99Ms.toFixed(1)} ms during (${f.during.importStillRunningAfterWindow ? 'import still running at the window end' : 'WARNING: the import ended before the window did'})`,
      )
    }
    for (const g of f.goals) {
      lines.push(
        `  goal ${g.figure} ${g.op} ${g.value}${g.unit}: ${g.met === null ? 'not measured' : g.met ? 'met' : 'NOT MET'}`,
      )
    }
  }
  return lines
}

const fileOnly = process.argv.indexOf('--write-file')
if (fileOnly >= 0) {
  // `tsx bench/import.ts --write-file <path> [products]`: the file alone, to import by hand.
  await writeCatalogueCsv(
    process.argv[fileOnly + 1]!,
    Number(process.argv[fileOnly + 2] ?? PRODUCTS),
  )
} else {
  await main()
}
