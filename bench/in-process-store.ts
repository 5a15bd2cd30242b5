/**
 * A migrated store of one dialect with the app on it, driven in process (app.inject), for the
 * benchmarks that time the service without HTTP: bench/collections.ts, bench/write-profile.ts.
 * Its database is a scratch one of servers.ts, removed by close or by the run's cleanup.
 */
import { buildApp } from '../src/app.js'
import { createApiKey } from '../src/auth/api-key.service.js'
import { createDatabase, type Database } from '../src/db/database.js'
import { migrateToLatest } from '../src/db/migrate.js'
import { API } from './scenarios.js'
import { BENCH_STORE, scratchDatabase, type Context, type Dialect } from './servers.js'

export interface Store {
  database: Database
  app: ReturnType<typeof buildApp>
  key: string
  close(): Promise<void>
}

export async function openStore(context: Context, dialect: Dialect): Promise<Store> {
  const scratch = await scratchDatabase(context, dialect)
  const database = createDatabase(scratch.url)
  await migrateToLatest(database)
  const { key } = await createApiKey(database, { store: BENCH_STORE, scopes: ['read', 'write'] })
  // No rate limit: the figures are the service's, not the budget's.
  const app = buildApp({ database, rateLimit: { perMinute: 0 } })
  await app.ready()
  return {
    database,
    app,
    key,
    close: async () => {
      await app.close()
      await database.close()
      await scratch.remove()
    },
  }
}

/** One request to the store's app; anything but 200 throws. */
export async function call(store: Store, method: string, url: string, body?: unknown) {
  const res = await store.app.inject({
    method: method as 'GET',
    url: `${API}${url}`,
    headers: {
      authorization: `Bearer ${store.key}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
  })
  if (res.statusCode !== 200) throw new Error(`${method} ${url}: ${res.statusCode} ${res.body}`)
  return res.json()
}

/** Requests per second of `count` calls of `make(i)`, 8 at a time. */
export async function rate(count: number, make: (i: number) => Promise<unknown>) {
  let next = 0
  const started = performance.now()
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (next < count) await make(next++)
    }),
  )
  return count / ((performance.now() - started) / 1000)
}

/**
 * The rules of the i-th smart collection: one field each, in turn, so that a product matches a
 * handful of the 1,000 (its vendor's, its tag's, its name's, its price's), as a shop's do.
 */
export function smartRules(i: number) {
  const kinds = [
    { field: 'vendor', relation: 'equals', value: `Vendor ${i}` },
    { field: 'tag', relation: 'equals', value: `tag-${i}` },
    { field: 'price', relation: 'equals', value: i },
    { field: 'name', relation: 'ends_with', value: `word${i}` },
    { field: 'option.Color', relation: 'equals', value: `colour-${i}` },
  ]
  return [kinds[i % kinds.length]]
}

/** Makes `count` smart collections (smartRules). */
export async function addSmartCollections(store: Store, count: number) {
  for (let i = 0; i < count; i++) {
    await call(store, 'POST', '/collections', { title: `Smart ${i}`, rules: smartRules(i) })
  }
}

/** The i-th product's create body: a vendor, tag, name and price that some rules match. */
export const productBody = (i: number) => ({
  name: `Product word${i % 1500}`,
  vendor: `Vendor ${i % 1500}`,
  tags: [`tag-${i % 1500}`, 'bench'],
  price: i % 1000,
})
