/**
 * A migrated store of one dialect with the app on it, driven in process (app.inject), for the
 * benchmarks that time the service without HTTP: bench/collections.ts, bench/write-profile.ts.
 * SQLite in a temp dir; PostgreSQL in a scratch schema of BENCH_POSTGRES_URL, dropped by close.
 */
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { buildApp } from '../src/app.js'
import { createApiKey } from '../src/auth/api-key.service.js'
import { createDatabase, type Database, type Dialect } from '../src/db/database.js'
import { migrateToLatest } from '../src/db/migrate.js'

const API = '/api/commerce/v1'

export interface Store {
  database: Database
  app: ReturnType<typeof buildApp>
  key: string
  close(): Promise<void>
}

export async function openStore(dialect: Dialect): Promise<Store> {
  let url: string
  let drop = async () => {}
  if (dialect === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'bench-store-'))
    url = `sqlite:${join(dir, 'catalog.db')}`
    drop = async () => rmSync(dir, { recursive: true, force: true })
  } else {
    const admin = process.env.BENCH_POSTGRES_URL!
    const schema = `bench_${randomBytes(5).toString('hex')}`
    const run = async (text: string) => {
      const client = new pg.Client({ connectionString: admin })
      await client.connect()
      await client.query(text)
      await client.end()
    }
    await run(`create schema ${schema}`)
    const u = new URL(admin)
    u.searchParams.set('options', `-c search_path=${schema}`)
    url = u.toString()
    drop = () => run(`drop schema ${schema} cascade`)
  }
  const database = createDatabase(url)
  await migrateToLatest(database)
  const { key } = await createApiKey(database, { store: 'bench', scopes: ['read', 'write'] })
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
      await drop()
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
