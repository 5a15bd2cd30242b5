/**
 * The scale figures of issues 3 and 14, each a ratio of two measurements in one run, on a
 * service whose store holds a million products seeded in bulk: (a) creates there against an
 * empty store, (b) the 10,001st product of one name against a fresh name, (c) page 1,000 of
 * the list against page 1, (e) pages filtered by tag, vendor and slug against the unfiltered
 * page of a one-page store; and (d) memory under a mix of every scenario (runSoak).
 */
import SqliteDatabase from '../src/db/sqlite-driver.js'
import {
  figureMaker,
  measureInTurn,
  ROUNDS,
  type Arm,
  type Figure,
  type Session,
} from './measure.js'
import { addVariants, API, createProducts, PAGE_SIZE, type Spec } from './scenarios.js'
import {
  BENCH_STORE,
  startService,
  withClient,
  type Dialect,
  type RunningServer,
} from './servers.js'
import { apiClient, ratio, readMemory, type ApiClient } from './support.js'

const SEEDED = 1_000_000
const SAME_NAME = 'Classic Crew Neck T-Shirt'
const DEEP_PAGE = 1_000

export async function runScale(session: Session, dialect: Dialect): Promise<Figure[]> {
  const { context, found, log } = session
  const servers: RunningServer[] = []
  const figures: Figure[] = []
  const figure = figureMaker('scale', dialect)
  const add = (...args: Parameters<typeof figure>) => figures.push(figure(...args))
  const inTurn = async (arms: Arm[], what: string[], rounds = ROUNDS) => {
    const merged = await measureInTurn(session, arms, rounds)
    merged.forEach((window, i) => found.watch(`scale (${dialect}), ${what[i]}`, window))
    return merged
  }
  try {
    const empty = await startService(context, dialect)
    servers.push(empty)
    const startedAt = performance.now()
    const million = await startService(context, dialect, { seed: (url) => seed(url, SEEDED) })
    servers.push(million)
    log(
      `  seeded ${SEEDED.toLocaleString('en')} products in ${((performance.now() - startedAt) / 1000).toFixed(0)} s`,
    )
    const api = apiClient(million.url, million.key)
    await checkSeededSlugs(api)

    // (a) The two stores' rates differ by a few percent at most, less than this machine's
    // speed moves in seconds: twice the rounds of the other comparisons.
    const creates: Spec[] = [{ scenario: 'create-product', targets: [{}] }]
    const [emptyStore, millionStore] = await inTurn(
      [
        { server: empty, specs: creates },
        { server: million, specs: creates },
      ],
      ['create on an empty store', 'create on a 1M store'],
      2 * ROUNDS,
    )
    add(
      '(a) create req/s, 1M store / empty store',
      ratio(millionStore!.reqPerS, emptyStore!.reqPerS),
      'x',
      { op: '>=', value: 0.9 },
    )
    add('    create req/s, 1M store', millionStore!.reqPerS, 'req/s')

    // (b) One request at a time, the two kinds in turn.
    await createProducts(api, 10_000, SAME_NAME)
    const one = (specs: Spec[]): Arm => ({ server: million, specs, connections: 1 })
    const [sameName, freshName] = await inTurn(
      [one([{ ...creates[0]!, name: SAME_NAME }]), one(creates)],
      ['same name, one at a time', 'fresh name, one at a time'],
    )
    add(
      '(b) create p50, fresh name / 10,001st same name',
      ratio(freshName!.p50Ms, sameName!.p50Ms),
      'x',
      { op: '>=', value: 0.9 },
    )
    add('    p50 ms, same name', sameName!.p50Ms, 'ms')
    const [concurrent] = await inTurn(
      [{ server: million, specs: [{ ...creates[0]!, name: SAME_NAME }] }],
      ['same name at full load'],
    )
    add(
      '    same name at full load, req/s / unique names',
      ratio(concurrent!.reqPerS, millionStore!.reqPerS),
      'x',
    )

    // (c)
    let cursor = ''
    for (let page = 1; page < DEEP_PAGE; page++) {
      const { nextCursor } = await api.json<{ nextCursor: string }>(
        'GET',
        `${API}/products?limit=${PAGE_SIZE}${cursor}`,
      )
      cursor = `&cursor=${encodeURIComponent(nextCursor)}`
    }
    const page = (query = ''): Spec[] => [{ scenario: 'list-page', targets: [{ query }] }]
    const [first, deep] = await inTurn(
      [one(page()), one(page(cursor))],
      ['page 1', `page ${DEEP_PAGE}`],
    )
    add(`(c) list p50, page ${DEEP_PAGE} / page 1`, ratio(deep!.p50Ms, first!.p50Ms), 'x', {
      op: '<=',
      value: 1.5,
    })

    // (e) The reference is the unfiltered page of a store of one page of products seeded as
    // the million are, so both pages carry the same rows. The tag and vendor each match some
    // 10,000 of the million, so a plan that sorts the matches shows.
    const reference = await startService(context, dialect, { seed: (url) => seed(url, PAGE_SIZE) })
    servers.push(reference)
    await checkFilteredPages(api, apiClient(reference.url, reference.key))
    const filtered = await inTurn(
      [
        { server: reference, specs: page(), connections: 1 },
        ...Object.values(FILTERS).map((query) => one(page(query))),
      ],
      ['unfiltered one-page store', ...Object.keys(FILTERS)],
    )
    for (const [i, name] of Object.keys(FILTERS).entries()) {
      add(
        `(e) list p50, 1M store by ${name} / one-page store`,
        ratio(filtered[i + 1]!.p50Ms, filtered[0]!.p50Ms),
        'x',
        { op: '<=', value: 1.5 },
      )
    }
    log(`  ${figures.map((f) => `${f.name.trim()}: ${f.value?.toFixed(2)}`).join('\n  ')}`)
    return figures
  } finally {
    await Promise.all(servers.map((server) => server.stop()))
  }
}

/**
 * (d) Peak RSS after 100,000 requests of a mix of every scenario and, with BENCH_LONG=1,
 * after 1,000,000, with the growth between the two.
 */
export async function runSoak(session: Session, dialect: Dialect): Promise<Figure[]> {
  const { context, load, config, found, log } = session
  const server = await startService(context, dialect)
  try {
    const api = apiClient(server.url, server.key)
    const variantTargets = await createProducts(api, 200)
    const read = await createProducts(api, 100)
    const variants = await addVariants(api, read, 3)
    const products = read.map((productId) => ({ productId }))
    const specs: Spec[] = [
      { scenario: 'create-product', targets: [{}] },
      { scenario: 'add-variant', targets: variantTargets.map((productId) => ({ productId })) },
      { scenario: 'get-product', targets: products },
      { scenario: 'list-page', targets: [{}] },
      { scenario: 'patch-product', targets: products },
      { scenario: 'patch-variant', targets: variants },
    ]
    const figure = figureMaker('memory', dialect)
    const figures: Figure[] = []
    let done = 0
    const peaks: number[] = []
    for (const total of config.long ? [100_000, 1_000_000] : [100_000]) {
      const result = await load.load({
        targets: [{ url: server.url, key: server.key }],
        specs,
        connections: config.connections,
        until: { requests: total - done },
      })
      done = total
      found.check(`soak (${dialect}) to ${total} requests`, result)
      const { peakMiB } = readMemory(server.pid)
      peaks.push(peakMiB)
      log(
        `  after ${total.toLocaleString('en')} requests: peak RSS ${peakMiB.toFixed(1)} MiB (${result.reqPerS.toFixed(0)} req/s)`,
      )
      figures.push(
        figure(`(d) peak RSS after ${total.toLocaleString('en')} requests`, peakMiB, 'MiB', {
          op: '<=',
          value: 150,
        }),
      )
    }
    if (peaks.length > 1) {
      const growth = (ratio(peaks[1], peaks[0]) ?? NaN) * 100 - 100
      figures.push(figure('(d) peak RSS growth, 100k to 1M', growth, '%', { op: '<=', value: 10 }))
    }
    return figures
  } finally {
    await server.stop()
  }
}

// ---------------------------------------------------------------------------------------
// Seeding, straight into a migrated database: a million rows through the API would take
// longer than the rest of the benchmark. The rows are what the service itself writes for
// store `bench`: a unique slug per product and the slug_counters row of its first claim, a
// vendor and two tags per product with their product_tags rows (lowercased, at the
// product's created_at). checkSeededSlugs and checkFilteredPages fail the run when they are
// no longer what the service writes.

/** Seeded products are older than any the benchmark creates through the API. */
const SEED_EPOCH = '2020-01-01T00:00:00.000Z'
/** Product i's vendor is one of 100, its first tag one of 97 (~10,000 products each in 1M). */
const VENDORS = 100
const COMMON_TAGS = 97
/** Its second tag is shared by 1,000 products in a row. */
const BATCH = 1000
/** A slug's first claim, as the service counts it (src/catalog's slug claim). */
const FIRST_CLAIM = [1, 1]
const COUNTER_COLUMNS = 'store_id, slug, claims, last_suffix'
const PRODUCT_COLUMNS =
  'store_id, id, name, slug, status, price_e4, created_at, updated_at, vendor, tags'
/** The tag spelled in other case than stored (the filter ignores case); one slug mid-store. */
const FILTERS = {
  tag: `&tag=${encodeURIComponent('TAG 07')}`,
  vendor: `&vendor=${encodeURIComponent('Vendor 07')}`,
  slug: '&slug=seed-0500000-product',
}
const TAG_ROWS = (tagsOf: string) => `
  insert into product_tags (store_id, product_id, tag_key, status, created_at)
  select p.store_id, p.id, lower(k.value), p.status, p.created_at from products p, ${tagsOf} k`

/** Product i: "Seed 0000001 product", slug seed-0000001-product, one second after i - 1. */
function seedRow(i: number): unknown[] {
  const digits = String(i).padStart(7, '0')
  const at = new Date(Date.parse(SEED_EPOCH) + i * 1000).toISOString()
  const two = (n: number) => String(n).padStart(2, '0')
  const tags = [
    `Tag ${two(i % COMMON_TAGS)}`,
    `Batch ${String(Math.floor(i / BATCH)).padStart(4, '0')}`,
  ]
  const id = `00000000-0000-7000-8000-${i.toString(16).padStart(12, '0')}`
  return [
    BENCH_STORE,
    id,
    `Seed ${digits} product`,
    `seed-${digits}-product`,
    'active',
    199_900,
    at,
    at,
    `Vendor ${two(i % VENDORS)}`,
    JSON.stringify(tags),
  ]
}

async function seed(databaseUrl: string, count: number): Promise<void> {
  if (!databaseUrl.startsWith('sqlite:')) return seedPostgres(databaseUrl, count)
  const db = new SqliteDatabase(databaseUrl.slice('sqlite:'.length))
  try {
    db.pragma('cache_size = -262144')
    const marks = (columns: number) => `(${Array(columns).fill('?').join(', ')})`
    const product = db.prepare(`insert into products (${PRODUCT_COLUMNS}) values ${marks(10)}`)
    const counter = db.prepare(`insert into slug_counters (${COUNTER_COLUMNS}) values ${marks(4)}`)
    db.transaction(() => {
      for (let i = 1; i <= count; i++) {
        const row = seedRow(i)
        product.run(row)
        counter.run(BENCH_STORE, row[3], ...FIRST_CLAIM)
      }
      db.exec(TAG_ROWS('json_each(p.tags)'))
    })()
  } finally {
    db.close()
  }
}

/** The same rows as seedRow's, made in SQL. */
async function seedPostgres(url: string, count: number): Promise<void> {
  await withClient(url, async (client) => {
    await client.query('begin')
    await client.query(
      `insert into products (${PRODUCT_COLUMNS})
       select $1, ('00000000-0000-7000-8000-' || lpad(to_hex(i), 12, '0'))::uuid,
              'Seed ' || lpad(i::text, 7, '0') || ' product', 'seed-' || lpad(i::text, 7, '0') || '-product',
              'active', 199900, at.t, at.t, 'Vendor ' || lpad((i % $4)::text, 2, '0'),
              json_build_array('Tag ' || lpad((i % $5)::text, 2, '0'), 'Batch ' || lpad((i / $6)::text, 4, '0'))
       from generate_series(1, $2::int) as i,
            lateral (select $3::timestamptz + i * interval '1 second' as t) as at`,
      [BENCH_STORE, count, SEED_EPOCH, VENDORS, COMMON_TAGS, BATCH],
    )
    await client.query(TAG_ROWS('json_array_elements_text(p.tags)'))
    await client.query(
      `insert into slug_counters (${COUNTER_COLUMNS})
       select $1, 'seed-' || lpad(i::text, 7, '0') || '-product', $3, $4 from generate_series(1, $2::int) as i`,
      [BENCH_STORE, count, ...FIRST_CLAIM],
    )
    await client.query('commit')
    // What autovacuum would have done by the time a store had grown this large: without
    // statistics the planner may pick plans no settled database would use.
    await client.query('vacuum analyze products, slug_counters, product_tags')
  })
}

/** A product named like the first seeded one must get the next suffix, or the seed is stale. */
async function checkSeededSlugs(api: ApiClient): Promise<void> {
  const response = await api.send('POST', `${API}/products`, {
    name: 'Seed 0000001 product',
    price: 1,
  })
  const slug =
    response.status === 200
      ? (JSON.parse(response.text) as { data: { slug: string } }).data.slug
      : undefined
  if (slug !== 'seed-0000001-product-2') {
    throw new Error(
      `seeded rows do not match the service's schema: got ${response.status} ${slug ?? response.text.slice(0, 200)}` +
        ', not slug seed-0000001-product-2 (bench/scale.ts must write what the service writes)',
    )
  }
}

/** A filter that matched nothing would be fast and prove nothing: each must find its rows. */
async function checkFilteredPages(million: ApiClient, reference: ApiClient): Promise<void> {
  type Page = { data: { slug: string; vendor: string | null; tags: string[] }[] }
  const pageOf = async (api: ApiClient, query: string) =>
    (await api.json<Page>('GET', `${API}/products?limit=${PAGE_SIZE}${query}`)).data
  const problems: string[] = []
  if ((await pageOf(reference, '')).length !== PAGE_SIZE)
    problems.push('the reference page is not full')
  for (const [name, query] of Object.entries(FILTERS)) {
    const page = await pageOf(million, query)
    const matches = (p: Page['data'][number]) =>
      name === 'tag'
        ? p.tags.includes('Tag 07')
        : name === 'vendor'
          ? p.vendor === 'Vendor 07'
          : p.slug === 'seed-0500000-product'
    if (page.length !== (name === 'slug' ? 1 : PAGE_SIZE) || !page.every(matches)) {
      problems.push(
        `${name} found ${page.length} products, ${page.filter(matches).length} matching`,
      )
    }
  }
  if (problems.length > 0) {
    throw new Error(`${problems.join('; ')}: bench/scale.ts must write what the service writes`)
  }
}
