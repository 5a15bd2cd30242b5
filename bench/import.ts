/**
 * `npm run bench:import`: the Shopify CSV import of issue 16 (docs/benchmarks.md).
 *
 * - A generated file of 25,000 products of 4 variants (100,000 variants), each with 3 tags
 *   and 2 images, imported by `catalog import` (the CLI, as a user runs it) against a bare
 *   loader that writes the same rows with the raw driver in transactions of 500 products:
 *   products, variants, product_tags, slug_counters and the events, because the import must
 *   append them (contract part 3). Both read the file with csv-parse and start on a database
 *   migrated by `catalog migrate`; taken in turn, BENCH_IMPORT_ROUNDS times (2). Goal: the
 *   import at >= 0.5 of the bare loader's variants per second.
 * - Peak RSS of the importing process (VmHWM, sampled every 50 ms); with BENCH_LONG=1 also
 *   a 1,000,000-variant import (goal <= 200 MiB). Export: `catalog export`, variants/s.
 * - SQLite: API creates and reads (8 connections) against `catalog serve` without an import,
 *   then while the server's own HTTP job (POST /imports) imports the file: no request may
 *   fail, p99 during <= 5x p99 without.
 * - Issue 35 (bench/import-metafields.ts): the same file with 20 product metafield columns
 *   against it without them, in turn: >= 0.8 of the rate (goal). BENCH_METAFIELDS=0 skips it;
 *   `-- --metafields-only` runs only it.
 *
 * BENCH_POSTGRES_URL adds PostgreSQL. `-- --short`: 2,500 products, 1 round, 2 s windows,
 * under a minute, for CI. Results in bench/results/import-<time>.json and on stdout. Exits 1
 * when an import or an API request failed; the ratio goals are reported, not enforced.
 */
import { createHash } from 'node:crypto'
import {
  createReadStream,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs'
import { readFile } from 'node:fs/promises'
import { setTimeout as sleep } from 'node:timers/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import SqliteDatabase from '../src/db/sqlite-driver.js'
import { parse } from 'csv-parse'
import pg from 'pg'
import { uuidv7 } from 'uuidv7'
import { cliImport, writeCatalogueCsv } from './import-file.js'
import { importMetafields } from './import-metafields.js'
import { startLoadGenerator } from './load.js'
import { measureWindow } from './measure.js'
import { API, createProducts } from './scenarios.js'
import {
  BENCH_STORE,
  createContext,
  ROOT,
  scratchDatabase,
  settle,
  startService,
  type Context,
  type Dialect,
} from './servers.js'
import { apiClient, childEnv, loadBenchConfig, ratio, runCommand, runMain } from './support.js'

const short = process.argv.includes('--short') || process.env.BENCH_IMPORT_SHORT === '1'
/** `-- --metafields-only`: only the figure of 20 metafield columns against none. */
const metafieldsOnly = process.argv.includes('--metafields-only')
const config = loadBenchConfig()
const PRODUCTS = short ? 2_500 : 25_000
const VARIANTS = PRODUCTS * 4
const ROUNDS = short ? 1 : Number(process.env.BENCH_IMPORT_ROUNDS || 2)
const WINDOW_S = short ? 2 : 5
const log = (line: string) => console.error(`[${new Date().toISOString().slice(11, 19)}] ${line}`)

// ---------------------------------------------------------------------------------------
// The bare loader: what a loader written for this one file would insert (it knows the
// columns, it checks nothing), in the tables and columns of the migrated schema

type Rows = Record<
  'products' | 'variants' | 'product_tags' | 'slug_counters' | 'events',
  Record<string, unknown>[]
>
const noRows = (): Rows => ({
  products: [],
  variants: [],
  product_tags: [],
  slug_counters: [],
  events: [],
})
const money = (text: string) => (text === '' ? null : Math.round(Number(text) * 10_000))
/** The service's options key: a hash of the sorted pairs (one index checks its uniqueness). */
const optionsKey = (options: Record<string, string>) =>
  createHash('sha256')
    .update(JSON.stringify(Object.entries(options).sort(([a], [b]) => (a < b ? -1 : 1))))
    .digest('hex')

function bareRows(records: string[][], rows: Rows): void {
  const first = records[0]!
  const now = new Date().toISOString()
  const id = uuidv7()
  const tags = first[5]!.split(',').map((t) => t.trim())
  const images = records
    .filter((r) => r[16] !== '')
    .map((r) => ({ url: r[16], alt: r[18] || null }))
  const product = {
    store_id: BENCH_STORE,
    id,
    name: first[1],
    slug: first[0],
    status: first[19],
    description: first[2],
    price_e4: money(first[13]!),
    vendor: first[3],
    product_type: first[4],
    tags: JSON.stringify(tags),
    images: JSON.stringify(images),
    max_variant_position: records.length,
    version: 1 + records.length,
    created_at: now,
    updated_at: now,
  }
  const event = (type: string, object: object) =>
    rows.events.push({
      store_id: BENCH_STORE,
      id: uuidv7(),
      type,
      object: JSON.stringify(object),
      created_at: now,
    })
  rows.products.push(product)
  rows.slug_counters.push({ store_id: BENCH_STORE, slug: first[0], claims: 1, last_suffix: 1 })
  for (const tag of tags) {
    rows.product_tags.push({
      store_id: BENCH_STORE,
      product_id: id,
      tag_key: tag.toLowerCase(),
      status: product.status,
      created_at: now,
    })
  }
  event('product.created', product)
  records.forEach((r, i) => {
    const options = { [first[7]!]: r[8]!, [first[9]!]: r[10]! }
    const variant = {
      store_id: BENCH_STORE,
      id: uuidv7(),
      product_id: id,
      name: `${r[8]} / ${r[10]}`,
      sku: r[11],
      barcode: r[15],
      price_e4: money(r[13]!),
      compare_at_price_e4: money(r[14]!),
      options: JSON.stringify(options),
      options_key: optionsKey(options),
      position: i + 1,
      weight_grams: Number(r[12]),
      created_at: now,
      updated_at: now,
    }
    rows.variants.push(variant)
    event('variant.created', variant)
  })
}

/** Writes one batch of rows in one transaction. */
type Writer = { write(rows: Rows): Promise<void>; close(): Promise<void> }

function sqliteWriter(file: string): Writer {
  const db = new SqliteDatabase(file)
  db.pragma('journal_mode = WAL')
  db.pragma('synchronous = FULL') // as durable as the service's commits
  const statements = new Map<string, SqliteDatabase.Statement>()
  const insert = (table: string, row: Record<string, unknown>) => {
    if (!statements.has(table)) {
      const columns = Object.keys(row)
      statements.set(
        table,
        db.prepare(`insert into ${table} (${columns}) values (${columns.map((c) => `@${c}`)})`),
      )
    }
    statements.get(table)!.run(row)
  }
  const transaction = db.transaction((rows: Rows) => {
    for (const [table, list] of Object.entries(rows)) for (const row of list) insert(table, row)
  })
  return { write: async (rows) => transaction(rows), close: async () => void db.close() }
}

async function postgresWriter(url: string): Promise<Writer> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  const insert = async (table: string, rows: Record<string, unknown>[]) => {
    const columns = Object.keys(rows[0] ?? {})
    const perStatement = Math.floor(30_000 / Math.max(1, columns.length))
    for (let start = 0; start < rows.length; start += perStatement) {
      const piece = rows.slice(start, start + perStatement)
      const values = piece.map(
        (_, r) => `(${columns.map((_, c) => `$${r * columns.length + c + 1}`)})`,
      )
      await client.query(
        `insert into ${table} (${columns}) values ${values}`,
        piece.flatMap((row) => columns.map((c) => row[c])),
      )
    }
  }
  return {
    async write(rows) {
      await client.query('begin')
      for (const [table, list] of Object.entries(rows)) await insert(table, list)
      await client.query('commit')
    },
    close: () => client.end(),
  }
}

/** The file read with csv-parse, each product's rows grouped, written 500 products a transaction. */
async function bareLoad(dialect: Dialect, databaseUrl: string, file: string): Promise<void> {
  const writer =
    dialect === 'sqlite'
      ? sqliteWriter(databaseUrl.slice('sqlite:'.length))
      : await postgresWriter(databaseUrl)
  let rows = noRows()
  let group: string[][] = []
  const close = async () => {
    if (group.length > 0) bareRows(group, rows)
    group = []
    if (rows.products.length === 500) {
      await writer.write(rows)
      rows = noRows()
    }
  }
  const records = createReadStream(file).pipe(parse({ bom: true, from_line: 2 })) as AsyncIterable<
    string[]
  >
  for await (const record of records) {
    if (group.length > 0 && group[0]![0] !== record[0]) await close()
    group.push(record)
  }
  await close()
  if (rows.products.length > 0) await writer.write(rows)
  await writer.close()
}

// ---------------------------------------------------------------------------------------
// The import and the export, by the CLI

async function cliExport(context: Context, databaseUrl: string, dir: string) {
  const output = join(dir, 'export.csv')
  const started = performance.now()
  await runCommand(
    process.execPath,
    [context.cli, 'export', '--store', BENCH_STORE, '--output', output],
    {
      env: childEnv({ DATABASE_URL: databaseUrl }),
    },
  )
  const seconds = (performance.now() - started) / 1000
  const lines = readFileSync(output, 'utf8').split(/\r?\n/).filter(Boolean).length
  if (lines !== VARIANTS + 1) throw new Error(`the export has ${lines} lines, not ${VARIANTS + 1}`)
  return { seconds, variantsPerS: VARIANTS / seconds }
}

/** API creates and reads without an import, then during the server's own HTTP import (SQLite). */
async function apiDuringImport(context: Context, file: string) {
  const server = await startService(context, 'sqlite')
  const load = startLoadGenerator(context.cleanup)
  try {
    const api = apiClient(server.url, server.key)
    const productIds = await createProducts(api, 20)
    const arm = {
      server,
      specs: [
        { scenario: 'create-product' as const, targets: [{}] },
        {
          scenario: 'get-product' as const,
          targets: productIds.map((productId) => ({ productId })),
        },
      ],
    }
    const without = await measureWindow(arm, load, 8, 1, WINDOW_S)
    const started = performance.now()
    const posted = await fetch(`${server.url}${API}/imports`, {
      method: 'POST',
      headers: { authorization: `Bearer ${server.key}`, 'content-type': 'text/csv' },
      body: await readFile(file),
    })
    if (posted.status !== 202) throw new Error(`POST /imports answered ${posted.status}`)
    const { id } = ((await posted.json()) as { data: { id: string } }).data
    const status = async () =>
      (
        await api.json<{ data: { status: string; rowsFailed: number } }>(
          'GET',
          `${API}/imports/${id}`,
        )
      ).data
    const during = await measureWindow(arm, load, 8, 1, WINDOW_S)
    const stillRunning = (await status()).status === 'running'
    for (let now = await status(); ; now = await status()) {
      if (now.status === 'running') await sleep(200)
      else if (now.status !== 'succeeded' || now.rowsFailed !== 0)
        throw new Error(`the HTTP import ended ${JSON.stringify(now)}`)
      else break
    }
    return { without, during, importSeconds: (performance.now() - started) / 1000, stillRunning }
  } finally {
    await load.stop()
    await server.stop()
  }
}

// ---------------------------------------------------------------------------------------

async function main(context: Context): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'catalog-bench-import-'))
  context.cleanup.add(`remove ${dir}`, () => rmSync(dir, { recursive: true, force: true }))
  const startedAt = new Date().toISOString()
  const file = join(dir, 'products.csv')
  await writeCatalogueCsv(file, PRODUCTS)
  log(`file: ${PRODUCTS} products, ${VARIANTS} variants, ${statSync(file).size} bytes`)
  const figures = []
  let failedRequests = 0
  const lines: string[] = []
  const dialects = config.postgresUrl ? (['sqlite', 'postgres'] as const) : (['sqlite'] as const)
  for (const dialect of metafieldsOnly ? [] : dialects) {
    const imports = []
    const bare = []
    let exported
    for (let round = 0; round < ROUNDS; round++) {
      // In turn, so that the machine's drift falls on both alike.
      const forBare = await scratchDatabase(context, dialect)
      await runCommand(process.execPath, [context.cli, 'migrate'], {
        env: childEnv({ DATABASE_URL: forBare.url }),
      })
      await settle(context)
      const started = performance.now()
      await bareLoad(dialect, forBare.url, file)
      const seconds = (performance.now() - started) / 1000
      bare.push({ seconds, variantsPerS: VARIANTS / seconds })
      log(
        `${dialect} bare loader: ${seconds.toFixed(2)} s, ${(VARIANTS / seconds).toFixed(0)} variants/s`,
      )
      await forBare.remove()

      const forImport = await scratchDatabase(context, dialect)
      await settle(context)
      const run = await cliImport(context, forImport.url, file, VARIANTS)
      imports.push(run)
      log(
        `${dialect} catalog import: ${run.seconds.toFixed(2)} s, ${run.variantsPerS.toFixed(0)} variants/s, peak RSS ${run.peakRssMiB.toFixed(0)} MiB`,
      )
      if (round === ROUNDS - 1) exported = await cliExport(context, forImport.url, dir)
      await forImport.remove()
    }
    const sum = (runs: { seconds: number }[]) => runs.reduce((total, r) => total + r.seconds, 0)
    // From the sums of the rounds' times: each round weighs what it lasted.
    const rateRatio = ratio(sum(bare), sum(imports))
    const entry: Record<string, unknown> = { dialect, imports, bare, rateRatio, export: exported }
    lines.push(
      `${dialect}: import / bare loader ${rateRatio?.toFixed(2)} (goal >= 0.5); ` +
        `import ${(VARIANTS / (sum(imports) / ROUNDS)).toFixed(0)} variants/s, bare ${(VARIANTS / (sum(bare) / ROUNDS)).toFixed(0)}; ` +
        `peak RSS ${Math.max(...imports.map((r) => r.peakRssMiB)).toFixed(0)} MiB; export ${exported?.variantsPerS.toFixed(0)} variants/s`,
    )
    if (config.long) {
      const longFile = join(dir, 'long.csv')
      await writeCatalogueCsv(longFile, 250_000)
      const database = await scratchDatabase(context, dialect)
      const long = await cliImport(context, database.url, longFile, 1_000_000)
      entry.long = long
      lines.push(
        `${dialect}: peak RSS of a 1,000,000-variant import ${long.peakRssMiB.toFixed(0)} MiB (goal <= 200)`,
      )
      await database.remove()
      rmSync(longFile)
    }
    if (dialect === 'sqlite') {
      const during = await apiDuringImport(context, file)
      entry.during = during
      failedRequests += [during.without, during.during].reduce(
        (n, w) => n + w.non2xx + w.errors + w.warmup.non2xx + w.warmup.errors,
        0,
      )
      lines.push(
        `${dialect}: API p99 during / without an import ${ratio(during.during.p99Ms, during.without.p99Ms)?.toFixed(2)} (goal <= 5;` +
          ` ${during.during.p99Ms.toFixed(1)} / ${during.without.p99Ms.toFixed(1)} ms, ${during.during.non2xx + during.during.errors} failed)` +
          (during.stillRunning ? '' : ' WARNING: the import ended before the window did'),
      )
    }
    figures.push(entry)
  }
  // Issue 35: the same file with 20 product metafield columns, against it without them.
  for (const dialect of config.metafields ? dialects : []) {
    const { entry, line } = await importMetafields(context, dialect, {
      products: PRODUCTS,
      rounds: ROUNDS,
      dir,
      log,
    })
    figures.push({ dialect, section: 'metafields', ...entry })
    lines.push(line)
  }
  const stamp = startedAt.replace(/\.\d+Z$/, 'Z').replaceAll(':', '-')
  mkdirSync(join(ROOT, 'bench', 'results'), { recursive: true })
  const out = join(ROOT, 'bench', 'results', `import-${stamp}${short ? '-short' : ''}.json`)
  const report = {
    startedAt,
    command: `npm run bench:import${short ? ' -- --short' : ''}`,
    products: PRODUCTS,
    rounds: ROUNDS,
    long: config.long,
    figures,
  }
  writeFileSync(out, `${JSON.stringify(report, null, 2)}\n`)
  console.log(`${lines.join('\n')}\nresults: ${out}`)
  if (failedRequests > 0) log(`FAILED: ${failedRequests} API requests failed during the import`)
  return failedRequests > 0 ? 1 : 0
}

await runMain('bench:import', (cleanup) => main(createContext(cleanup, config)))
