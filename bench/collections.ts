/**
 * `npm run bench:collections`: what smart collections cost (docs/benchmarks.md, issue 36).
 * One run, in process (app.inject, 8 requests in flight), per dialect:
 *
 * - product creates and PATCHes per second in a store with 1,000 smart collections, against
 *   the same in a store with none (the ratio is the figure);
 * - a rules change (a smart collection's create) over BENCH_COLL_PRODUCTS products of which a
 *   tenth match, with the process's peak RSS growth;
 * - `GET /collections/:id/products` page 1 against page 1,000, for each sort order;
 * - the count of the same rules' matches before saving (`POST /collections/preview`, 0053), the
 *   median of 5, against that rules change.
 *
 * Environment: BENCH_POSTGRES_URL (a server where a scratch database is made and dropped; without
 * it SQLite only), BENCH_COLL_WRITES (2,000), BENCH_COLL_PRODUCTS (200,000), BENCH_COLL_NONE=1
 * (only the rates of a store without collections: run it in a checkout of another commit too),
 * BENCH_COLL_PREVIEW=1 (only the preview against the rules change).
 */
import { sql } from 'kysely'
import type { Database } from '../src/db/database.js'
import {
  addSmartCollections,
  call,
  openStore,
  productBody,
  rate,
  type Store,
} from './in-process-store.js'
import { createContext, type Context, type Dialect } from './servers.js'
import { loadBenchConfig, runMain } from './support.js'

const WRITES = Number(process.env.BENCH_COLL_WRITES ?? 2000)
const PRODUCTS = Number(process.env.BENCH_COLL_PRODUCTS ?? 200_000)
const SMART = 1000
const PAGE = 20

async function writeRates(context: Context, dialect: Dialect, collections: number) {
  const store = await openStore(context, dialect)
  try {
    await addSmartCollections(store, collections)
    const ids: string[] = []
    // Warm up: statements compiled, caches filled.
    for (let i = 0; i < 50; i++) {
      ids.push((await call(store, 'POST', '/products', productBody(i))).data.id)
    }
    const creates = await rate(WRITES, async (i) => {
      ids.push((await call(store, 'POST', '/products', productBody(i))).data.id)
    })
    const patches = await rate(WRITES, (i) =>
      call(store, 'PATCH', `/products/${ids[i % ids.length]}`, { price: (i * 7) % 1000 }),
    )
    return { creates, patches }
  } finally {
    await store.close()
  }
}

/** Inserts `count` products straight into the table (a tenth priced under 10). */
async function fillProducts(database: Database, count: number) {
  const now = new Date().toISOString()
  const db = database.kysely
  if (database.dialect === 'postgres') {
    await sql`insert into products (store_id, id, name, slug, status, price_e4, tags, images,
        created_at, updated_at)
      select 'bench', gen_random_uuid(), 'Product ' || n, 'product-' || n,
        case when n % 3 = 0 then 'active' else 'draft' end,
        case when n % 10 = 0 then 50000 else 200000 end + (n % 997),
        '[]', '[]', ${now}::timestamptz - n * interval '1 millisecond', ${now}::timestamptz
      from generate_series(1, ${count}) as n`.execute(db)
    await sql`analyze products`.execute(db)
  } else {
    await sql`with recursive s(n) as (select 1 union all select n + 1 from s where n < ${count})
      insert into products (store_id, id, name, slug, status, price_e4, tags, images,
        created_at, updated_at)
      select 'bench', printf('%08x-0000-4000-8000-%012x', n, n), 'Product ' || n, 'product-' || n,
        case when n % 3 = 0 then 'active' else 'draft' end,
        case when n % 10 = 0 then 50000 else 200000 end + (n % 997),
        '[]', '[]', strftime('%Y-%m-%dT%H:%M:%fZ', ${now}, '-' || n || ' seconds'), ${now}
      from s`.execute(db)
  }
}

const UNDER_10 = [{ field: 'price', relation: 'less_than', value: 10 }]

/** The median time of 5 previews of the rules that the rules change below saves. */
async function previewMs(store: Store): Promise<number> {
  const times: number[] = []
  for (let i = 0; i < 5; i++) {
    const started = performance.now()
    await call(store, 'POST', '/collections/preview', { rules: UNDER_10 })
    times.push(performance.now() - started)
  }
  return times.sort((a, b) => a - b)[2]!
}

async function rulesChangeAndPages(context: Context, dialect: Dialect, onlyPreview = false) {
  const store = await openStore(context, dialect)
  try {
    await fillProducts(store.database, PRODUCTS)
    const previewMedianMs = await previewMs(store)
    const rss = process.memoryUsage().rss
    const started = performance.now()
    const collection = (
      await call(store, 'POST', '/collections', { title: 'Under 10', rules: UNDER_10 })
    ).data
    const rulesChangeMs = performance.now() - started
    const rssGrowthMb = (process.memoryUsage().rss - rss) / 1e6
    if (onlyPreview) {
      return { members: collection.productsCount, previewMedianMs, rulesChangeMs, rssGrowthMb }
    }
    const pages: Record<string, { page1Ms: number; page1000Ms: number }> = {}
    for (const sort of ['newest', 'oldest', 'name', '-name', 'price', '-price']) {
      await call(store, 'PATCH', `/collections/${collection.id}`, { sort_order: sort })
      let cursor: string | null = null
      let page1Ms = 0
      let page1000Ms = 0
      for (let page = 1; page <= 1000; page++) {
        const t = performance.now()
        const body = await call(
          store,
          'GET',
          `/collections/${collection.id}/products?limit=${PAGE}${cursor ? `&cursor=${cursor}` : ''}`,
        )
        const ms = performance.now() - t
        if (page <= 5) page1Ms += ms / 5
        if (page > 995) page1000Ms += ms / 5
        cursor = body.nextCursor
        if (cursor === null && page < 1000) throw new Error(`only ${page} pages`)
      }
      pages[sort] = { page1Ms, page1000Ms }
    }
    return { members: collection.productsCount, previewMedianMs, rulesChangeMs, rssGrowthMb, pages }
  } finally {
    await store.close()
  }
}

await runMain('bench:collections', async (cleanup) => {
  const config = loadBenchConfig()
  const context = createContext(cleanup, config)
  for (const dialect of config.postgresUrl
    ? (['sqlite', 'postgres'] as const)
    : ['sqlite' as const]) {
    if (process.env.BENCH_COLL_PREVIEW === '1') {
      const preview = await rulesChangeAndPages(context, dialect, true)
      console.log(JSON.stringify({ dialect, products: PRODUCTS, ...preview }))
      continue
    }
    const none = await writeRates(context, dialect, 0)
    if (process.env.BENCH_COLL_NONE === '1') {
      console.log(JSON.stringify({ dialect, writes: WRITES, none }))
      continue
    }
    const many = await writeRates(context, dialect, SMART)
    console.log(
      JSON.stringify({
        dialect,
        writes: WRITES,
        createsPerSecond: { none: Math.round(none.creates), smart1000: Math.round(many.creates) },
        createRatio: +(many.creates / none.creates).toFixed(2),
        patchesPerSecond: { none: Math.round(none.patches), smart1000: Math.round(many.patches) },
        patchRatio: +(many.patches / none.patches).toFixed(2),
      }),
    )
    const pages = await rulesChangeAndPages(context, dialect)
    console.log(JSON.stringify({ dialect, products: PRODUCTS, ...pages }, null, 1))
  }
  return 0
})
