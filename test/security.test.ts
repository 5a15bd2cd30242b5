import assert from 'node:assert/strict'
import { createHash, randomUUID } from 'node:crypto'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import { setTimeout as sleep } from 'node:timers/promises'
import { it, type TestContext } from 'node:test'
import { sql } from 'kysely'
import { buildApp } from '../src/app.js'
import { createApiKey, revokeApiKey } from '../src/auth/api-key.service.js'
import { createDatabase, type Database, type Dialect } from '../src/db/database.js'
import { migrateToLatest } from '../src/db/migrate.js'
import { writeFingerprint } from './contract-checks.js'
import {
  API,
  buildTestApi,
  createTestSchema,
  describeEachDialect,
  expectError,
  type TestApi,
} from './helpers.js'

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex')

/**
 * A database URL that two handles can share, as the server and the `catalog` command do:
 * a file in a temporary directory on SQLite, a fresh schema on PostgreSQL.
 */
async function sharedDatabaseUrl(t: TestContext, dialect: Dialect): Promise<string> {
  if (dialect === 'postgres') return createTestSchema(t)
  const dir = mkdtempSync(join(tmpdir(), 'catalog-security-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  return `sqlite:${join(dir, 'catalog.db')}`
}

async function openDatabase(t: TestContext, url: string): Promise<Database> {
  const database = createDatabase(url)
  // A test may close it first (to read the files it leaves): a second close may refuse.
  t.after(() => database.close().catch(() => {}))
  await migrateToLatest(database)
  return database
}

/** Every byte the SQLite database keeps on disk: the file, its WAL and its shared memory. */
function sqliteFiles(url: string): Buffer {
  const file = url.slice('sqlite:'.length)
  const dir = join(file, '..')
  return Buffer.concat(readdirSync(dir).map((name) => readFileSync(join(dir, name))))
}

/** Where `secret`, or any 12-character run of it, occurs in `haystack`; undefined if nowhere. */
function findSecret(haystack: Buffer | string, secret: string): string | undefined {
  const text = typeof haystack === 'string' ? haystack : haystack.toString('latin1')
  for (let i = 0; i + 12 <= secret.length; i++) {
    const run = secret.slice(i, i + 12)
    if (text.includes(run)) return run
  }
  return undefined
}

function get(api: { app: TestApi['app'] }, path: string, key: string) {
  return api.app.inject({
    method: 'GET',
    url: `${API}${path}`,
    headers: { authorization: `Bearer ${key}` },
  })
}

describeEachDialect('security', (dialect) => {
  it('keys are stored only as hashes: the secret is nowhere in the database, its SHA-256 is', async (t) => {
    const url = await sharedDatabaseUrl(t, dialect)
    const database = await openDatabase(t, url)
    const app = buildApp({ database })
    t.after(() => app.close())
    const created = await createApiKey(database, { store: 'store-a', scopes: ['read', 'write'] })
    const response = await app.inject({
      method: 'POST',
      url: `${API}/products`,
      headers: { authorization: `Bearer ${created.key}`, 'content-type': 'application/json' },
      payload: '{"name":"Mug"}',
    })
    assert.equal(response.statusCode, 200, response.body)
    const secret = created.key.slice('ck_'.length)
    if (dialect === 'sqlite') {
      // Searched while open (the key is in the WAL) and after closing (checkpointed).
      const open = sqliteFiles(url)
      assert.ok(open.includes(sha256(created.key)), 'the search cannot see the key row')
      assert.equal(findSecret(open, secret), undefined, 'the secret is on disk')
      await app.close()
      await database.close()
      const closed = sqliteFiles(url)
      assert.ok(closed.includes(sha256(created.key)), 'the search cannot see the key row')
      assert.equal(findSecret(closed, secret), undefined, 'the secret is on disk')
    } else {
      const tables = ['api_keys', 'products', 'variants', 'slug_counters']
      let everything = ''
      for (const table of tables) {
        const { rows } = await sql<{ row: string }>`select t::text as row from ${sql.table(
          table,
        )} t`.execute(database.kysely)
        everything += rows.map((r) => r.row).join('\n')
      }
      assert.ok(everything.includes(sha256(created.key)), 'the search cannot see the key row')
      assert.equal(findSecret(everything, secret), undefined, 'the secret is in a table')
    }
  })

  it('a revoked key is refused on the next request, revoked in this process or by another (the catalog command)', async (t) => {
    const url = await sharedDatabaseUrl(t, dialect)
    const database = await openDatabase(t, url)
    const app = buildApp({ database, keyCacheTtlMs: 60_000 })
    t.after(() => app.close())
    const here = await createApiKey(database, { store: 'store-a', scopes: ['read'] })
    const elsewhere = await createApiKey(database, { store: 'store-a', scopes: ['read'] })
    const kept = await createApiKey(database, { store: 'store-a', scopes: ['read'] })
    // PostgreSQL: keys are cached once the LISTEN connection is up, a moment after start.
    while (database.keysVersion() === undefined) await sleep(10)
    for (const key of [here.key, elsewhere.key, kept.key]) {
      // Twice, so the key is cached when it is revoked.
      assert.equal((await get({ app }, '/products', key)).statusCode, 200)
      assert.equal((await get({ app }, '/products', key)).statusCode, 200)
    }

    await revokeApiKey(database, here.id)
    expectError(await get({ app }, '/products', here.key), 401, 'unauthorized')

    // Another process: a second handle on the same database, as `catalog keys revoke` opens.
    const cli = await openDatabase(t, url)
    await revokeApiKey(cli, elsewhere.id)
    await cli.close()
    // It learns of it through SQLite's data_version (read every 5 ms at most) or PostgreSQL's
    // NOTIFY (delivered in well under a second): a bound, generous for a loaded machine.
    const deadline = Date.now() + 5_000
    let answer = await get({ app }, '/products', elsewhere.key)
    while (answer.statusCode === 200 && Date.now() < deadline) {
      await sleep(10)
      answer = await get({ app }, '/products', elsewhere.key)
    }
    expectError(answer, 401, 'unauthorized')
    expectError(await get({ app }, '/products', elsewhere.key), 401, 'unauthorized')
    assert.equal((await get({ app }, '/products', kept.key)).statusCode, 200)
  })

  it('no log line holds a key or an Authorization header, even at trace level', async (t) => {
    const url = await sharedDatabaseUrl(t, dialect)
    const database = await openDatabase(t, url)
    let output = ''
    const stream = new Writable({
      write(chunk: Buffer, _encoding, done) {
        output += chunk.toString()
        done()
      },
    })
    const app = buildApp({ database, logger: { level: 'trace', stream } })
    t.after(() => app.close())
    const writer = await createApiKey(database, { store: 'store-a', scopes: ['read', 'write'] })
    const reader = await createApiKey(database, { store: 'store-a', scopes: ['read'] })
    const revoked = await createApiKey(database, { store: 'store-a', scopes: ['read', 'write'] })
    await revokeApiKey(database, revoked.id)
    const bogus = `ck_${'Z'.repeat(43)}`
    const send = (authorization: string, method: 'GET' | 'POST', path: string, payload?: string) =>
      app.inject({
        method,
        url: `${API}${path}`,
        headers: {
          authorization,
          ...(payload === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(payload === undefined ? {} : { payload }),
      })
    const created = await send(`Bearer ${writer.key}`, 'POST', '/products', '{"name":"Mug"}')
    assert.equal(created.statusCode, 200)
    const id = created.json().data.id
    const answers = [
      await send(`Bearer ${writer.key}`, 'GET', `/products/${id}`),
      await send(`Bearer ${writer.key}`, 'POST', `/products/${id}/variants`, '{"name":"Red"}'),
      await send(`Bearer ${writer.key}`, 'POST', '/products', '{"name":'),
      await send(`Bearer ${writer.key}`, 'POST', '/products', '{"price":-1}'),
      await send(`Bearer ${writer.key}`, 'GET', `/products/${randomUUID()}`),
      await send(`Bearer ${reader.key}`, 'POST', '/products', '{"name":"Cup"}'),
      await send(`Bearer ${revoked.key}`, 'GET', '/products'),
      await send(`Bearer ${bogus}`, 'GET', '/products'),
      await send(`Basic ${Buffer.from(`me:${writer.key}`).toString('base64')}`, 'GET', '/products'),
      await send(`Bearer ${writer.key}x`, 'GET', '/products'),
    ]
    assert.deepEqual(
      answers.map((a) => a.statusCode),
      [200, 200, 400, 400, 404, 403, 401, 401, 401, 401],
    )
    // The database gone: errors are logged with their causes.
    await database.close()
    const unavailable = await send(`Bearer ${writer.key}`, 'POST', '/products', '{"name":"Jar"}')
    assert.equal(unavailable.statusCode, 503, unavailable.body)

    const lines = output.split('\n').filter((line) => line.trim() !== '')
    // The logs are there to search: a line per request, the 401s included.
    assert.ok(lines.length >= answers.length + 2, `only ${lines.length} log lines`)
    assert.ok(
      lines.some((line) => /"status":401/.test(line)),
      'no 401 in the logs',
    )
    assert.ok(
      lines.some((line) => /"level":40/.test(line)),
      'the 503 was not logged',
    )
    for (const key of [writer.key, reader.key, revoked.key, bogus]) {
      const found = findSecret(output, key.slice('ck_'.length))
      assert.equal(found, undefined, `a log line holds a key: ${found}`)
    }
    assert.doesNotMatch(output, /authorization|bearer|basic /i)
  })

  it("another store's data is unreachable by every route: 404 not_found, never 403, and nothing written", async (t) => {
    const api = await buildTestApi(t, dialect)
    const product = await api.createProduct({ name: 'T-Shirt', price: 10 })
    const variant = await api.post(`/products/${product.id}/variants`, {
      name: 'M',
      sku: 'TEE-M',
      options: { size: 'M' },
    })
    assert.equal(variant.statusCode, 200, variant.body)
    await api.createProduct({ name: 'Second' })
    const seenByOwner = (await api.get(`/products/${product.id}`)).body
    const ownerPage = (await api.get('/products?limit=1')).json()

    const otherWriter = await api.newKey({ store: 'store-b' })
    const otherReader = await api.newKey({ store: 'store-b', scopes: ['read'] })
    for (const key of [otherWriter, otherReader]) {
      for (const id of [product.id, product.id.toUpperCase()]) {
        expectError(await api.get(`/products/${id}`, key), 404, 'not_found')
        expectError(await api.get(`/products/${id}/variants`, key), 404, 'not_found')
      }
      const list = await api.get('/products?limit=200', key)
      assert.deepEqual(list.json(), { data: [], nextCursor: null })
      // The owner's cursor is only a position: it leads to nothing of the owner's.
      const next = await api.get(`/products?cursor=${ownerPage.nextCursor}`, key)
      assert.deepEqual(next.json(), { data: [], nextCursor: null })
    }
    const before = await writeFingerprint(api.database)
    for (const body of [
      { name: 'L' },
      { name: 'L', sku: 'TEE-M' },
      { name: 'M', options: { size: 'M' } },
    ]) {
      const added = await api.post(`/products/${product.id}/variants`, body, otherWriter)
      expectError(added, 404, 'not_found')
    }
    assert.equal(
      await writeFingerprint(api.database),
      before,
      "a refused write in another store's product wrote",
    )

    // What store B creates lives beside store A's, without meeting it.
    const own = await api.createProduct({ name: 'T-Shirt' }, otherWriter)
    assert.equal(own.slug, 't-shirt')
    const ownVariant = await api.post(
      `/products/${own.id}/variants`,
      { name: 'M', sku: 'TEE-M' },
      otherWriter,
    )
    assert.equal(ownVariant.statusCode, 200, ownVariant.body)
    const listed = (await api.get('/products', otherWriter)).json().data
    assert.deepEqual(
      listed.map((p: { id: string }) => p.id),
      [own.id],
    )
    assert.equal((await api.get(`/products/${product.id}`)).body, seenByOwner)
  })

  it('no mass assignment: store_id, id, slug, created_at, updated_at and the like in a body change nothing', async (t) => {
    const api = await buildTestApi(t, dialect)
    const otherKey = await api.newKey({ store: 'store-b' })
    const existing = await api.createProduct({ name: 'Existing' })
    const longAgo = '2000-01-01T00:00:00.000Z'
    const startedAt = Date.now()
    const response = await api.post('/products', {
      name: 'Mug',
      id: existing.id,
      store_id: 'store-b',
      storeId: 'store-b',
      slug: 'chosen-slug',
      created_at: longAgo,
      createdAt: longAgo,
      updated_at: longAgo,
      updatedAt: longAgo,
      max_variant_position: 1000,
      variants: [{ name: 'Smuggled', sku: 'SMUGGLED' }],
    })
    assert.equal(response.statusCode, 200, response.body)
    const product = response.json().data
    assert.notEqual(product.id, existing.id)
    assert.equal(product.slug, 'mug')
    for (const at of [product.createdAt, product.updatedAt]) {
      assert.ok(Date.parse(at) >= startedAt - 60_000, `timestamp taken from the body: ${at}`)
    }
    assert.deepEqual((await api.get(`/products/${product.id}`)).json().data, {
      ...product,
      variants: [],
    })
    expectError(await api.get(`/products/${product.id}`, otherKey), 404, 'not_found')
    assert.equal((await api.get(`/products/${existing.id}`)).json().data.name, 'Existing')

    const variant = await api.post(`/products/${product.id}/variants`, {
      name: 'Red',
      id: existing.id,
      store_id: 'store-b',
      product_id: existing.id,
      productId: existing.id,
      created_at: longAgo,
      updated_at: longAgo,
      options_key: 'x',
    })
    assert.equal(variant.statusCode, 200, variant.body)
    const record = variant.json().data
    assert.notEqual(record.id, existing.id)
    assert.equal(record.productId, product.id)
    // max_variant_position was not taken from the product's body: the first default is 1.
    assert.equal(record.position, 1)
    assert.ok(Date.parse(record.createdAt) >= startedAt - 60_000)
    assert.deepEqual((await api.get(`/products/${product.id}/variants`)).json().data, [record])
    assert.deepEqual((await api.get(`/products/${existing.id}/variants`)).json().data, [])
    expectError(await api.get(`/products/${product.id}/variants`, otherKey), 404, 'not_found')
    // The smuggled variant's sku is free: nothing was made of it.
    const free = await api.post(`/products/${product.id}/variants`, { name: 'S', sku: 'SMUGGLED' })
    assert.equal(free.statusCode, 200, free.body)
  })
})
