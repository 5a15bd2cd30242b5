/**
 * The search benchmark (issue 34): loads a large store (names from a vocabulary of a few
 * thousand words, 50 vendors, 200 tags, Color x Size options, 2 variants each) straight into
 * the tables, builds the search documents with the real migration (timed, peak RSS of its own
 * process), then times the issue's queries through the service's list (one client, in
 * process: latency of the service's statements, no HTTP) beside a plain LIKE/ILIKE scan of
 * the same store; then, over HTTP on that store, the service's throughput at 32 clients and
 * the write cost of the document, each against bare routes (search-http.ts).
 *
 *   npx tsx bench/search.ts --dialect sqlite --products 1000000
 *   npx tsx bench/search.ts --dialect postgres --products 1000000   (BENCH_POSTGRES_URL)
 *   npx tsx bench/search.ts --short                                   (CI: 5,000, both if set)
 *   --keep leaves the loaded store (its URL is printed) for EXPLAIN and profiling
 *   (search-breakdown.ts); --no-latency, --no-http skip those parts
 *   --store <URL> times the latency table again on a kept store (its --products given), after
 *   applying the migrations it lacks (timed): before and after a change, back to back;
 *   --metafields times only issue 35's queries (filters and facets of attributes)
 */
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { sql } from 'kysely'
import pg from 'pg'
import { createDefinitionWork } from '../src/attributes/metafield-definition.service.js'
import { newVariantFields } from '../src/catalog/variant.service.js'
import { createDatabase, type Database } from '../src/db/database.js'
import { inTransaction } from '../src/db/transactions.js'
import { migrateToLatest } from '../src/db/migrate.js'
import { listProducts } from '../src/search/search.service.js'
import type { CapturedSearch } from './baseline-search.js'
import { buildServiceOnce, runSearchHttp } from './search-http.js'
import { ROOT, startScriptNodeFlags } from './servers.js'
import { newProductRow } from '../src/catalog/product-create-work.js'

type Dialect = 'sqlite' | 'postgres'
const STORE = 'bench'
const args = process.argv.slice(2)
const arg = (name: string) => {
  const i = args.indexOf(`--${name}`)
  return i >= 0 ? args[i + 1] : undefined
}

/** Deterministic pseudo-random numbers (mulberry32). */
function random(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** A vocabulary of 3,000 made-up words (syllables), some with accents. */
function vocabulary(size = 3000): string[] {
  const syllables = [
    'ka',
    'lo',
    'mi',
    'ré',
    'su',
    'ta',
    'vé',
    'no',
    'pa',
    'zi',
    'co',
    'lu',
    'bé',
    'dra',
    'fen',
    'gor',
    'hal',
    'jin',
    'kru',
    'mel',
  ]
  const next = random(7)
  const words = new Set<string>()
  while (words.size < size) {
    const n = 2 + Math.floor(next() * 2)
    let word = ''
    for (let i = 0; i < n; i++) word += syllables[Math.floor(next() * syllables.length)]
    words.add(word)
  }
  return [...words]
}

const WORDS = vocabulary()
const VENDORS = Array.from({ length: 50 }, (_, i) => `Vendor ${i}`)
const TAGS = Array.from({ length: 200 }, (_, i) => `tag-${i}`)
const COLORS = ['Red', 'Blue', 'Green', 'Black', 'White', 'Grey', 'Navy', 'Beige']
const SIZES = ['XS', 'S', 'M', 'L', 'XL']

/**
 * The store's filterable product attributes (issue 35), each on a share of the products with
 * a skewed spread (the first values common): a material of 20 (the most common on about 18 %
 * of products, MATERIALS[5] on about 4 %, the last on 2 %), a year of 26, a boolean (true on
 * about 3 in 10), a list of 1 to 3 of 30 features.
 */
const MATERIALS = [
  'Cotton',
  'Polyester',
  'Wool',
  'Linen',
  'Silk',
  'Denim',
  'Leather',
  'Nylon',
  'Cashmere',
  'Viscose',
  'Bamboo',
  'Hemp',
  'Suede',
  'Velvet',
  'Satin',
  'Fleece',
  'Tweed',
  'Corduroy',
  'Jersey',
  'Chiffon',
]
const FEATURES = Array.from({ length: 30 }, (_, i) => `feature-${i}`)
const ATTRIBUTES = [
  { key: 'material', type: 'single_line_text_field', share: 0.8 },
  { key: 'year', type: 'number_integer', share: 0.6 },
  { key: 'organic', type: 'boolean', share: 0.9 },
  { key: 'features', type: 'list.single_line_text_field', share: 0.5 },
] as const
type AttributeKey = (typeof ATTRIBUTES)[number]['key']

function attributeValue(key: AttributeKey, next: () => number): unknown {
  const skewed = (n: number) => Math.floor(n * next() ** 2)
  switch (key) {
    case 'material':
      return MATERIALS[skewed(MATERIALS.length)]
    case 'year':
      return 2025 - skewed(26)
    case 'organic':
      return next() < 0.3
    case 'features': {
      const count = 1 + Math.floor(next() * 3)
      return [...new Set(Array.from({ length: count }, () => FEATURES[skewed(FEATURES.length)]!))]
    }
  }
}

/** The attributes' definitions (filterable, not searchable), by key: their ids. */
async function defineAttributes(database: Database): Promise<Map<AttributeKey, string>> {
  const ids = new Map<AttributeKey, string>()
  for (const { key, type } of ATTRIBUTES) {
    const definition = await inTransaction(database.kysely, (tx) =>
      createDefinitionWork(STORE, {
        owner: 'product',
        namespace: 'bench',
        key,
        type,
        name: key,
        filterable: true,
      })(tx),
    )
    ids.set(key, definition.id)
  }
  return ids
}

async function openDatabase(dialect: Dialect): Promise<{ url: string; drop: () => Promise<void> }> {
  if (dialect === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'bench-search-'))
    return {
      url: `sqlite:${join(dir, 'catalog.db')}`,
      drop: async () => rmSync(dir, { recursive: true, force: true }),
    }
  }
  const base = process.env.BENCH_POSTGRES_URL
  if (!base) throw new Error('BENCH_POSTGRES_URL is not set')
  const schema = `bench_search_${process.pid}`
  const admin = async (text: string) => {
    const client = new pg.Client({ connectionString: base })
    await client.connect()
    try {
      await client.query(text)
    } finally {
      await client.end()
    }
  }
  await admin(`create schema ${schema}`)
  const url = new URL(base)
  url.searchParams.set('options', `-c search_path=${schema}`)
  return { url: url.toString(), drop: () => admin(`drop schema ${schema} cascade`) }
}

/** Loads `count` products with 2 variants each, a batch per transaction, newest last. */
async function load(database: Database, count: number): Promise<void> {
  const definitions = await defineAttributes(database)
  const next = random(34)
  const nextAttribute = random(35)
  const pick = <T>(list: readonly T[]) => list[Math.floor(next() * list.length)]!
  // Words skewed (the first ones common, as in real names): WORDS[17] is in about 1 % of products.
  const word = () => WORDS[Math.floor(next() * next() * WORDS.length)]!
  const start = Date.parse('2026-01-01T00:00:00.000Z')
  const batch = 500
  for (let from = 0; from < count; from += batch) {
    const products: Record<string, unknown>[] = []
    const variants: Record<string, unknown>[] = []
    const tags: Record<string, unknown>[] = []
    const values: Record<string, unknown>[] = []
    for (let i = from; i < Math.min(count, from + batch); i++) {
      const name = `${word()} ${word()} ${word()}`
      const productTags = [pick(TAGS), pick(TAGS)].filter((t, j, all) => all.indexOf(t) === j)
      const at = new Date(start + i * 1000).toISOString()
      const row = newProductRow(
        STORE,
        {
          name,
          description: `${word()} ${word()} ${word()} ${word()}`,
          vendor: pick(VENDORS),
          product_type: `Type ${Math.floor(next() * 20)}`,
          price: Math.round(next() * 20000) / 100,
          tags: productTags,
          sku: `SKU-${i}`,
        },
        productTags,
        at,
      )
      const metafields: Record<string, unknown> = {}
      for (const { key, share } of ATTRIBUTES) {
        if (nextAttribute() >= share) continue
        const value = attributeValue(key, nextAttribute)
        metafields[`bench.${key}`] = value
        for (const item of Array.isArray(value) ? value : [value])
          values.push({
            store_id: STORE,
            definition_id: definitions.get(key),
            value: JSON.stringify(item),
            product_id: row.id,
            record_id: row.id,
          })
      }
      products.push({
        ...row,
        slug: `p-${i}`,
        max_variant_position: 2,
        version: 3,
        metafields: JSON.stringify(metafields),
      })
      for (const t of productTags)
        tags.push({
          store_id: STORE,
          product_id: row.id,
          tag_key: t,
          status: row.status,
          created_at: at,
        })
      const color = pick(COLORS)
      for (const [position, size] of [pick(SIZES), pick(SIZES.filter(() => true))].entries()) {
        const fields = newVariantFields(
          STORE,
          row.id,
          {
            name: `${color} / ${size}`,
            sku: `SKU-${i}-${position}`,
            options: { Color: color, Size: `${size}${position}` },
          },
          at,
        )
        variants.push({ ...fields, price_e4: row.price_e4, position: position + 1 })
      }
    }
    await database.kysely.transaction().execute(async (tx) => {
      await tx
        .insertInto('products')
        .values(products as never)
        .execute()
      await tx
        .insertInto('product_tags')
        .values(tags as never)
        .execute()
      for (let i = 0; i < variants.length; i += 250)
        await tx
          .insertInto('variants')
          .values(variants.slice(i, i + 250) as never)
          .execute()
      for (let i = 0; i < values.length; i += 500)
        await tx
          .insertInto('metafield_values')
          .values(values.slice(i, i + 500) as never)
          .execute()
    })
  }
}

interface QueryCase {
  label: string
  query: Record<string, unknown>
  like?: string[]
}

function queries(): QueryCase[] {
  // A word in about 1 % of products: each name has 3 of 3,000 words, descriptions 4: any word is
  // in about 0.23 % of products; a tag is in 1 % (2 of 200), and so is its word.
  const word = WORDS[17]!
  const facets = 'vendor,tag,option.Color'
  const cases: QueryCase[] = [
    { label: 'a word', query: { q: word }, like: [word] },
    { label: 'two words', query: { q: `${WORDS[0]} ${WORDS[1]}` }, like: [WORDS[0]!, WORDS[1]!] },
    { label: 'a prefix', query: { q: word.slice(0, 4) }, like: [word.slice(0, 4)] },
    { label: 'a sku', query: { q: 'SKU-4242-1' }, like: ['SKU-4242-1'] },
    { label: 'a miss', query: { q: 'zzzqqq' }, like: ['zzzqqq'] },
  ]
  const all: QueryCase[] = []
  for (const c of cases) {
    all.push(c)
    all.push({ label: `${c.label}, by price`, query: { ...c.query, sort: 'price' } })
    all.push({ label: `${c.label}, 3 facets`, query: { ...c.query, facets } })
  }
  all.push({ label: 'no q, vendor + 3 facets', query: { vendor: 'Vendor 3', facets } })
  all.push({ label: 'no q, by price', query: { sort: 'price' } })
  // Issue 35: filters and facets of filterable attributes. Material 5 is on about 4 % of
  // products (40,000 of 1,000,000); with the word, about 400.
  const material = { 'metafield.bench.material': MATERIALS[5] }
  const facet = 'metafield.bench.material'
  all.push(
    { label: 'material', query: material },
    { label: 'material, by price', query: { ...material, sort: 'price' } },
    { label: 'rare material', query: { 'metafield.bench.material': MATERIALS[19] } },
    { label: 'year', query: { 'metafield.bench.year': '2020' } },
    { label: 'organic', query: { 'metafield.bench.organic': 'true' } },
    { label: 'a feature (list)', query: { 'metafield.bench.features': FEATURES[10] } },
    { label: 'material + a word', query: { ...material, q: word } },
    { label: 'material + a word, by price', query: { ...material, q: word, sort: 'price' } },
    { label: 'a word, material facet', query: { q: word, facets: facet } },
    {
      label: 'a word, year + material + features facets',
      query: {
        q: word,
        facets: 'metafield.bench.year,metafield.bench.material,metafield.bench.features',
      },
    },
    {
      label: 'material + a word, 3 facets + material',
      query: {
        ...material,
        q: word,
        facets: `${facets},${facet}`,
      },
    },
    { label: 'vendor, material facet', query: { vendor: 'Vendor 3', facets: facet } },
    {
      label: 'material, 3 facets + material',
      query: { ...material, facets: `${facets},${facet}` },
    },
    { label: 'no filter, material facet', query: { facets: facet } },
  )
  return all
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!
}

async function time(runs: number, work: () => Promise<unknown>) {
  for (let i = 0; i < 3; i++) await work()
  const times: number[] = []
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now()
    await work()
    times.push(performance.now() - t0)
  }
  times.sort((a, b) => a - b)
  return { p50: percentile(times, 50), p95: percentile(times, 95), p99: percentile(times, 99) }
}

/** The same match as a plain scan: every word in name or description, newest first. */
async function likeScan(database: Database, words: string[]) {
  const op = database.dialect === 'postgres' ? sql.raw('ilike') : sql.raw('like')
  const conditions = words.map(
    (w) =>
      sql`(p.name ${op} ${`%${w}%`} or p.description ${op} ${`%${w}%`} or p.sku ${op} ${`%${w}%`})`,
  )
  return sql`select * from products p where p.store_id = ${STORE} and ${sql.join(conditions, sql` and `)}
    order by p.created_at desc, p.id desc limit 51`.execute(database.kysely)
}

async function pageFifty(database: Database, query: Record<string, unknown>) {
  let cursor: string | undefined
  for (let page = 1; page < 50; page++) {
    const answer = await listProducts(database, STORE, {
      ...query,
      limit: 50,
      ...(cursor && { cursor }),
    })
    if (!answer.nextCursor) return
    cursor = answer.nextCursor
  }
  return listProducts(database, STORE, { ...query, limit: 50, cursor })
}

/**
 * The statements the service runs for `query`, compiled, with their values: what the bare
 * search route (baseline-search.ts) runs, with q put into the match in place of `word`.
 */
async function captureStatements(
  database: Database,
  query: Record<string, unknown>,
  word: string,
): Promise<CapturedSearch> {
  const executor = database.kysely.getExecutor()
  const statements: CapturedSearch['statements'] = []
  const kysely = database.kysely.withPlugin({
    transformQuery: ({ node, queryId }) => {
      const { sql, parameters } = executor.compileQuery(node, queryId)
      statements.push({ sql, parameters: [...parameters] })
      return node
    },
    transformResult: async ({ result }) => result,
  })
  await listProducts({ ...database, kysely }, STORE, { ...query, limit: 50 })
  const match = statements[0]?.parameters.find((p) => typeof p === 'string' && p.includes(word))
  if (typeof match !== 'string') throw new Error(`no match of ${word} among the values`)
  return { statements, match, word }
}

/** The issue's queries one at a time through the service's list, beside a LIKE scan. */
async function latencyTable(database: Database, count: number, runs: number) {
  const dialect = database.dialect
  console.log(
    `\n| ${dialect} (${count.toLocaleString('en')} products) | matches | p50 ms | p95 ms | p99 ms | ${dialect === 'postgres' ? 'ILIKE' : 'LIKE'} p50 ms | ratio |`,
  )
  console.log('| --- | --- | --- | --- | --- | --- | --- |')
  // --metafields: issue 35's queries alone.
  const metafieldsOnly = args.includes('--metafields')
  for (const c of queries().filter(
    (c) => !metafieldsOnly || JSON.stringify(c.query).includes('metafield.'),
  )) {
    const first = await listProducts(database, STORE, { ...c.query, limit: 50 })
    const t = await time(runs, () => listProducts(database, STORE, { ...c.query, limit: 50 }))
    let like = ''
    let ratio = ''
    if (c.like) {
      const l = await time(Math.max(3, Math.floor(runs / 20)), () => likeScan(database, c.like!))
      like = l.p50.toFixed(1)
      ratio = `${(l.p50 / t.p50).toFixed(0)}x`
    }
    const matched = first.data.length === 50 ? '50+' : String(first.data.length)
    console.log(
      `| ${c.label} | ${matched} | ${t.p50.toFixed(1)} | ${t.p95.toFixed(1)} | ${t.p99.toFixed(1)} | ${like} | ${ratio} |`,
    )
  }
  if (metafieldsOnly) return
  const deep = await time(Math.max(3, Math.floor(runs / 20)), () =>
    pageFifty(database, { q: 'tag 17', sort: 'price' }),
  )
  console.log(
    `| page 50 of a word by price (walked from page 1: 50 requests) | | ${deep.p50.toFixed(1)} | ${deep.p95.toFixed(1)} | | | |`,
  )
}

/**
 * The child: what the two search migrations do to a loaded store, in the order an upgrade runs
 * them: 2026-11-30T00 (its documents, then on PostgreSQL the GIN index), then 2026-11-30T05
 * (the documents' sort and filter keys, its triggers and indexes). The keys' migration is
 * undone first, as its triggers would otherwise run for each document of T00.
 */
const MIGRATION_CHILD = `
const url = process.argv[1]
const { createDatabase } = await import('./dist/db/database.js')
const { backfillSearchDocuments } = await import('./dist/db/migrations/2026-11-30T00-search-backfill.js')
const { sql } = await import('kysely')
const database = createDatabase(url)
const postgres = database.dialect === 'postgres'
const keys = await import(\`./dist/db/migrations/\${database.dialect}/2026-11-30T05-search-keys.js\`)
// SQLite's 2026-11-30T07 dropped a trigger of T05: undone first, done again after T05.
const written = postgres ? undefined : await import('./dist/db/migrations/sqlite/2026-11-30T07-search-keys-written.js')
await written?.down(database.kysely)
await keys.down(database.kysely)
const t0 = performance.now()
await backfillSearchDocuments(database.kysely, postgres ? '::uuid' : '')
if (postgres) await sql\`create index product_search_words on product_search using gin (document)\`.execute(database.kysely)
await keys.up(database.kysely)
await written?.up(database.kysely)
await database.close()
console.log(JSON.stringify({ seconds: (performance.now() - t0) / 1000, maxRssMiB: process.resourceUsage().maxRSS / 1024 }))
`

async function main() {
  const short = args.includes('--short')
  const count = Number(arg('products') ?? (short ? 5000 : 200_000))
  const dialects: Dialect[] = arg('dialect')
    ? [arg('dialect') as Dialect]
    : process.env.BENCH_POSTGRES_URL
      ? ['sqlite', 'postgres']
      : ['sqlite']
  const runs = Number(arg('runs') ?? (short ? 20 : 200))
  const kept = arg('store')
  if (kept !== undefined) {
    const database = createDatabase(kept)
    const t0 = performance.now()
    const applied = await migrateToLatest(database)
    if (applied.length > 0) {
      console.log(
        `${database.dialect}: ${applied.join(', ')} took ${((performance.now() - t0) / 1000).toFixed(1)} s`,
      )
      await sql`analyze`.execute(database.kysely)
    }
    await latencyTable(database, count, runs)
    await database.close()
    return
  }
  // The migration's child runs dist/.
  await buildServiceOnce((line) => console.error(line))
  for (const dialect of dialects) {
    const { url, drop } = await openDatabase(dialect)
    try {
      let database = createDatabase(url)
      await migrateToLatest(database)
      // Later migrations stay (the loader writes today's rows); the index the search migration
      // builds after its documents goes, and the child builds both.
      if (dialect === 'postgres')
        await sql`drop index product_search_words`.execute(database.kysely)
      const t0 = performance.now()
      await load(database, count)
      console.log(
        `${dialect}: loaded ${count.toLocaleString('en')} products, ${2 * count} variants in ${((performance.now() - t0) / 1000).toFixed(0)} s`,
      )
      await database.close()
      const child = spawnSync(
        process.execPath,
        // Plain node over dist/ with npm start's V8 flags, as `catalog serve` migrates at its
        // start: the peak RSS is the migration's, not this harness's (tsx and autocannon
        // alone hold over 200 MiB).
        [
          ...startScriptNodeFlags(join(ROOT, 'package.json')),
          '--input-type=module',
          '-e',
          MIGRATION_CHILD,
          url,
        ],
        { encoding: 'utf8', cwd: ROOT },
      )
      if (child.status !== 0) throw new Error(child.stderr)
      const migration = JSON.parse(child.stdout.trim().split('\n').at(-1)!)
      console.log(
        `${dialect}: the search migrations' work (documents, keys, indexes) took ${migration.seconds.toFixed(1)} s, peak RSS ${migration.maxRssMiB.toFixed(0)} MiB`,
      )
      database = createDatabase(url)
      if (dialect === 'postgres') await sql`analyze`.execute(database.kysely)
      else await sql`analyze`.execute(database.kysely)
      if (!args.includes('--no-latency')) await latencyTable(database, count, runs)
      // Issue 34's throughput and write figures, over HTTP: a word in about 1 % of products,
      // three facets, by price.
      const query = { q: WORDS[17]!, sort: 'price', facets: 'vendor,tag,option.Color' }
      const captured = await captureStatements(database, query, WORDS[17]!)
      await database.close()
      if (!args.includes('--no-http'))
        await runSearchHttp(dialect, url, captured, new URLSearchParams(query).toString())
    } finally {
      // --keep: leave the loaded store for EXPLAIN and profiling.
      if (args.includes('--keep')) console.log(`${dialect}: kept ${url}`)
      else await drop()
    }
  }
}

await main()
