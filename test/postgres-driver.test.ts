import assert from 'node:assert/strict'
import { describe, it, type TestContext } from 'node:test'
import { sql } from 'kysely'
import { buildApp } from '../src/app.js'
import { createApiKey } from '../src/auth/api-key.service.js'
import { createDatabase } from '../src/db/database.js'
import { migrateToLatest } from '../src/db/migrate.js'
import { isoFromPostgres } from '../src/db/values.js'
import { API, createTestSchema, POSTGRES_URL, updatedAtAfter } from './helpers.js'

describe('timestamps read from PostgreSQL', () => {
  const cases: [string, string][] = [
    ['2026-11-22 05:18:27.673+00', '2026-11-22T05:18:27.673Z'],
    ['2026-11-22 05:18:27.673764+00', '2026-11-22T05:18:27.673Z'],
    ['2026-11-22 05:18:27.6+00', '2026-11-22T05:18:27.600Z'],
    ['2026-11-22 05:18:27+00', '2026-11-22T05:18:27.000Z'],
    ['2026-11-22T05:18:27.673+00:00', '2026-11-22T05:18:27.673Z'],
    ['2026-11-22T05:18:27+00:00', '2026-11-22T05:18:27.000Z'],
    ['2026-11-22 10:48:27.673+05:30', '2026-11-22T05:18:27.673Z'],
    ['2026-11-22T10:48:27.673999+05:30', '2026-11-22T05:18:27.673Z'],
    ['2026-11-21 21:18:27.673-08', '2026-11-22T05:18:27.673Z'],
  ]
  for (const [text, iso] of cases) {
    it(`reads ${text} as ${iso}`, () => assert.equal(isoFromPostgres(text), iso))
  }
})

describe(
  'the service on PostgreSQL',
  { skip: !POSTGRES_URL && 'TEST_POSTGRES_URL is not set' },
  () => {
    /** The service on a fresh schema, its pool of `poolSize`, with extra session settings. */
    async function start(t: TestContext, options: { poolSize?: number; settings?: string } = {}) {
      const url = new URL(await createTestSchema(t))
      if (options.settings) {
        url.searchParams.set('options', `${url.searchParams.get('options')} ${options.settings}`)
      }
      const database = createDatabase(url.toString(), { poolSize: options.poolSize ?? 10 })
      t.after(() => database.close())
      await migrateToLatest(database)
      const { key } = await createApiKey(database, { store: 'shop', scopes: ['read', 'write'] })
      const app = buildApp({ database })
      t.after(() => app.close())
      const call = async (method: 'GET' | 'POST', path: string, body?: unknown) => {
        const response = await app.inject({
          method,
          url: `${API}${path}`,
          headers: { authorization: `Bearer ${key}` },
          ...(body !== undefined && { payload: body as Record<string, unknown> }),
        })
        assert.equal(response.statusCode, 200, response.body)
        return response.json().data
      }
      return { database, call }
    }

    it('runs the hot queries as prepared statements, parsed once per connection', async (t) => {
      const { database, call } = await start(t, { poolSize: 1 })
      const product = await call('POST', '/products', { name: 'Shirt' })
      for (let i = 0; i < 3; i++) await call('GET', `/products/${product.id}`)
      // One connection: the view lists what that session has prepared.
      const { rows } = await sql<{ statement: string }>`
      select statement from pg_prepared_statements where name like 'catalog\\_%'`.execute(
        database.kysely,
      )
      assert.ok(
        rows.some((row) => row.statement.includes('json_agg')),
        JSON.stringify(rows),
      )
      assert.ok(
        rows.some((row) => row.statement.startsWith('with')),
        JSON.stringify(rows),
      )
    })

    it('answers UTC timestamps whatever the session time zone', async (t) => {
      const { call } = await start(t, { settings: '-c TimeZone=Asia/Kolkata' })
      const product = await call('POST', '/products', { name: 'Shirt' })
      const variant = await call('POST', `/products/${product.id}/variants`, { name: 'M' })
      const read = await call('GET', `/products/${product.id}`)
      assert.match(read.createdAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
      assert.equal(read.createdAt, product.createdAt)
      assert.equal(read.variants[0].createdAt, variant.createdAt)
      const page = await call('GET', '/products')
      // The variant's addition set the product's updatedAt.
      assert.equal(page[0].updatedAt, updatedAtAfter(product.updatedAt, variant.createdAt))
    })
  },
)
