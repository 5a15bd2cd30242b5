/**
 * Where a product write's time goes, in process (app.inject): per request, the statements it
 * runs (count and time, by statement) for one scenario, on one dialect.
 *
 *   tsx bench/write-profile.ts <sqlite|postgres> <create|patch|patch-variant>[-coll] [requests per round]
 *
 * Plain writes and writes with 20 metafield values in turn (4 rounds each); with -coll, in a store of 1,000 smart collections.
 * patch-variant: a PATCH of one variant of each product, its price (plain) and its price and
 * sku in turn (the rounds shown as `mf`).
 *
 * BENCH_POSTGRES_URL: the admin URL (a scratch database is made and dropped).
 */
import { createRequire } from 'node:module'
import pg from 'pg'
import type BetterSqlite3 from 'better-sqlite3'
import { sqliteDriverPackage } from '../src/db/sqlite-driver.js'
import {
  addSmartCollections,
  call as callStore,
  openStore,
  productBody,
  rate,
} from './in-process-store.js'
import { METAFIELD_DEFINITIONS, metafieldValues } from './scenarios.js'
import { createContext, type Dialect } from './servers.js'
import { loadBenchConfig, runMain } from './support.js'

const [dialect, scenario, countArg] = process.argv.slice(2) as [Dialect, string, string?]
const COUNT = Number(countArg ?? 300)
const ROUNDS = 4
const create = scenario.startsWith('create')
const patchVariant = scenario.startsWith('patch-variant')

const allTimings = {
  plain: new Map<string, { n: number; ms: number }>(),
  mf: new Map<string, { n: number; ms: number }>(),
}
let timingsOf: 'plain' | 'mf' = 'plain'
let recording = false
function record(text: string, ms: number) {
  if (!recording) return
  const key = text.replace(/\s+/g, ' ').slice(0, 110)
  const timings = allTimings[timingsOf]
  const t = timings.get(key) ?? { n: 0, ms: 0 }
  t.n++
  t.ms += ms
  timings.set(key, t)
}
// Time every statement: pg's query and better-sqlite3's statement runs.
const pgQuery = pg.Client.prototype.query as (...args: unknown[]) => unknown
pg.Client.prototype.query = function (this: unknown, ...args: unknown[]) {
  const text = typeof args[0] === 'string' ? args[0] : (args[0] as { text: string }).text
  const started = performance.now()
  const result = pgQuery.apply(this, args) as Promise<unknown>
  if (result && typeof (result as Promise<unknown>).then === 'function') {
    return result.then((r) => {
      record(text, performance.now() - started)
      return r
    })
  }
  return result
} as typeof pg.Client.prototype.query
const SqliteDatabase = createRequire(import.meta.url)(sqliteDriverPackage) as typeof BetterSqlite3
const prepare = SqliteDatabase.prototype.prepare
SqliteDatabase.prototype.prepare = function (this: BetterSqlite3.Database, source: string) {
  const statement = prepare.call(this, source)
  for (const method of ['all', 'run', 'get', 'iterate'] as const) {
    const original = statement[method] as (...a: unknown[]) => unknown
    ;(statement as unknown as Record<string, unknown>)[method] = function (...a: unknown[]) {
      const started = performance.now()
      const out = original.apply(statement, a)
      record(source, performance.now() - started)
      return out
    }
  }
  return statement
} as typeof prepare
const exec = SqliteDatabase.prototype.exec
SqliteDatabase.prototype.exec = function (this: BetterSqlite3.Database, source: string) {
  const started = performance.now()
  const out = exec.call(this, source)
  record(source, performance.now() - started)
  return out
}

await runMain('write-profile', async (cleanup) => {
  const store = await openStore(createContext(cleanup, loadBenchConfig()), dialect)
  const call = (method: string, path: string, body?: unknown) =>
    callStore(store, method, path, body)
  for (const definition of METAFIELD_DEFINITIONS) {
    await call('POST', '/metafield-definitions', definition)
  }
  if (scenario.endsWith('-coll')) await addSmartCollections(store, 1000)
  const body = (i: number, mf: boolean) => ({
    ...productBody(i),
    description: 'A product made by the load benchmark.',
    status: 'active',
    ...(mf ? { metafields: metafieldValues(i) } : {}),
  })
  const ids: string[] = []
  const variants: string[] = []
  for (let i = 0; i < 300; i++) {
    const id = (await call('POST', '/products', body(i, false))).data.id
    ids.push(id)
    if (patchVariant) {
      const variant = { name: `Variant ${i}`, sku: `V-${i}`, options: { Size: 'M' } }
      variants.push(
        `${id}/variants/${(await call('POST', `/products/${id}/variants`, variant)).data.id}`,
      )
    }
  }
  const one = (i: number, mf: boolean) =>
    create
      ? call('POST', '/products', body(i, mf))
      : patchVariant
        ? call('PATCH', `/products/${variants[i % variants.length]}`, {
            price: (i * 7) % 1000,
            ...(mf ? { sku: `V-${i % variants.length}-${i}` } : {}),
          })
        : call('PATCH', `/products/${ids[i % ids.length]}`, {
            price: (i * 7) % 1000,
            ...(mf ? { metafields: metafieldValues(i + 1) } : {}),
          })
  for (let i = 0; i < 100; i++) await one(i, i % 2 === 0)
  const wall = { plain: 0, mf: 0 }
  let n = 0
  for (let round = 0; round < ROUNDS * 2; round++) {
    const mf = round % 4 === 1 || round % 4 === 2
    const variant = mf ? 'mf' : 'plain'
    timingsOf = variant
    recording = true
    wall[variant] += (COUNT / (await rate(COUNT, (i) => one(n + i, mf)))) * 1000
    n += COUNT
    recording = false
  }
  for (const variant of ['plain', 'mf'] as const) {
    const timings = allTimings[variant]
    const requests = COUNT * ROUNDS
    const rows = [...timings].sort((a, b) => b[1].ms - a[1].ms)
    const total = rows.reduce((s, [, t]) => s + t.ms, 0)
    console.log(
      `${dialect} ${scenario} ${variant}: ${(requests / (wall[variant] / 1000)).toFixed(0)} req/s, ${(wall[variant] / requests).toFixed(3)} ms/req wall; statements ${(total / requests).toFixed(3)} ms/req, ${(rows.reduce((s, [, t]) => s + t.n, 0) / requests).toFixed(1)} per req`,
    )
    for (const [text, t] of rows.slice(0, 22)) {
      console.log(
        `${(t.n / requests).toFixed(2).padStart(6)} x ${(t.ms / requests).toFixed(3).padStart(7)} ms  ${text}`,
      )
    }
  }
  console.log(`ratio mf/plain: ${(wall.plain / wall.mf).toFixed(2)}`)
  await store.close()
  return 0
})
