import assert from 'node:assert/strict'
import { it, type TestContext } from 'node:test'
import SqliteDatabase from '../src/db/sqlite-driver.js'
import type { Dialect } from '../src/db/database.js'
import { API, describeEachDialect, updatedAtAfter } from './helpers.js'
import {
  create,
  createKey,
  databaseUrlFor,
  request,
  SECRET_PATTERN,
  startServe,
  type ServeProcess,
} from './process-helpers.js'

/** Kills the server without any chance to clean up, as a crash would. */
async function crash(server: ServeProcess): Promise<void> {
  assert.deepEqual(await server.stop('SIGKILL'), { code: null, signal: 'SIGKILL' })
}

/** A database with a key on store `shop`, made by `catalog keys create --json`. */
async function setUp(t: TestContext, dialect: Dialect) {
  const DATABASE_URL = await databaseUrlFor(t, dialect)
  const { key } = await createKey(DATABASE_URL, 'shop')
  return { DATABASE_URL, key }
}

async function readProduct(server: ServeProcess, key: string, id: string) {
  const response = await request(server, 'GET', `${API}/products/${id}`, { key })
  assert.equal(response.status, 200, `GET product ${id}: ${JSON.stringify(response.body)}`)
  return response.body.data
}

describeEachDialect('restart after a crash (SIGKILL)', (dialect) => {
  it('every product and variant answered 200 before SIGKILL reads back unchanged after a restart', async (t) => {
    const { DATABASE_URL, key } = await setUp(t, dialect)
    const first = await startServe(t, { DATABASE_URL })
    const shirt = await create(first, key, '/products', {
      name: 'T-Shirt',
      description: 'Organic cotton',
      status: 'active',
      price: 19.99,
      compare_at_price: 24.5,
      sku: 'TS-1',
      barcode: '4006381333931',
      tax_rate: 19,
    })
    const plain = await create(first, key, '/products', { name: 'Crème Brûlée' })
    const archived = await create(first, key, '/products', {
      name: 'Old mug',
      status: 'archived',
      price: 0.0001,
    })
    const small = await create(first, key, `/products/${shirt.id}/variants`, {
      name: 'S / red',
      sku: 'TS-1-S',
      options: { size: 'S', color: 'red' },
    })
    const medium = await create(first, key, `/products/${shirt.id}/variants`, {
      name: 'M / red',
      sku: 'TS-1-M',
      barcode: '4006381333948',
      price: 21.5,
      compare_at_price: 25,
      options: { color: 'red', size: 'M' },
    })
    const large = await create(first, key, `/products/${shirt.id}/variants`, {
      name: 'L',
      position: 10,
    })
    const only = await create(first, key, `/products/${archived.id}/variants`, { name: 'Only' })
    await crash(first)

    const second = await startServe(t, { DATABASE_URL })
    // Each variant added raised its product's version and set its updatedAt.
    assert.deepEqual(await readProduct(second, key, shirt.id), {
      ...shirt,
      version: 4,
      updatedAt: updatedAtAfter(
        shirt.updatedAt,
        small.createdAt,
        medium.createdAt,
        large.createdAt,
      ),
      variants: [small, medium, large],
    })
    assert.deepEqual(await readProduct(second, key, plain.id), { ...plain, variants: [] })
    assert.deepEqual(await readProduct(second, key, archived.id), {
      ...archived,
      version: 2,
      updatedAt: updatedAtAfter(archived.updatedAt, only.createdAt),
      variants: [only],
    })
    const variants = await request(second, 'GET', `${API}/products/${shirt.id}/variants`, { key })
    assert.equal(variants.status, 200)
    assert.deepEqual(variants.body.data, [small, medium, large])
    const list = await request(second, 'GET', `${API}/products?limit=200`, { key })
    assert.equal(list.status, 200)
    assert.deepEqual(
      list.body.data.map((product: { id: string }) => product.id).sort(),
      [shirt.id, plain.id, archived.id].sort(),
    )
  })

  it('slugs and default variant positions continue after a restart', async (t) => {
    const { DATABASE_URL, key } = await setUp(t, dialect)
    const first = await startServe(t, { DATABASE_URL })
    const shirt = await create(first, key, '/products', { name: 'T-Shirt' })
    assert.equal(shirt.slug, 't-shirt')
    const hoodies = [
      await create(first, key, '/products', { name: 'Hoodie' }),
      await create(first, key, '/products', { name: 'Hoodie' }),
    ]
    assert.deepEqual(
      hoodies.map((hoodie) => hoodie.slug),
      ['hoodie', 'hoodie-2'],
    )
    const positions = [
      (await create(first, key, `/products/${shirt.id}/variants`, { name: 'A' })).position,
      (await create(first, key, `/products/${shirt.id}/variants`, { name: 'B' })).position,
    ]
    assert.deepEqual(positions, [1, 2])
    await create(first, key, `/products/${hoodies[0]!.id}/variants`, { name: 'X', position: 10 })
    await crash(first)

    const second = await startServe(t, { DATABASE_URL })
    assert.equal((await create(second, key, '/products', { name: 'T-Shirt' })).slug, 't-shirt-2')
    assert.equal((await create(second, key, '/products', { name: 'Hoodie' })).slug, 'hoodie-3')
    const next = await create(second, key, `/products/${shirt.id}/variants`, { name: 'C' })
    assert.equal(next.position, 3)
    const afterTen = await create(second, key, `/products/${hoodies[0]!.id}/variants`, {
      name: 'Y',
    })
    assert.equal(afterTen.position, 11)
  })

  it('products answered 200 while others were in flight at SIGKILL all survive the restart', async (t) => {
    const { DATABASE_URL, key } = await setUp(t, dialect)
    const first = await startServe(t, { DATABASE_URL })
    const total = 40
    const answered: Record<string, any>[] = []
    const unexpected: string[] = []
    let enough!: () => void
    const enoughAnswered = new Promise<void>((resolve) => (enough = resolve))
    const attempts = Array.from({ length: total }, (_, i) =>
      request(first, 'POST', `${API}/products`, {
        key,
        body: { name: 'Burst', sku: `B-${i}`, price: i + 0.5 },
      }).then(
        (response) => {
          if (response.status === 200) answered.push(response.body.data)
          else unexpected.push(`${response.status} ${JSON.stringify(response.body)}`)
          if (answered.length >= total / 4) enough()
        },
        () => {}, // the connection died with the process: the product may or may not exist
      ),
    )
    // Every request could be answered before the kill on a fast machine; that is fine too.
    await Promise.race([enoughAnswered, Promise.all(attempts)])
    await crash(first)
    await Promise.all(attempts)
    t.diagnostic(`${answered.length} of ${total} creations answered 200 before the kill`)
    assert.deepEqual(unexpected, [])
    assert.ok(answered.length >= total / 4)

    const second = await startServe(t, { DATABASE_URL })
    for (const product of answered) {
      assert.deepEqual(await readProduct(second, key, product.id), { ...product, variants: [] })
    }
    const list = await request(second, 'GET', `${API}/products?limit=200`, { key })
    assert.equal(list.status, 200)
    const listed: { id: string; slug: string; name: string }[] = list.body.data
    assert.ok(listed.length >= answered.length && listed.length <= total)
    assert.equal(new Set(listed.map((product) => product.slug)).size, listed.length)
    for (const product of listed) await readProduct(second, key, product.id)
    const after = await create(second, key, '/products', { name: 'Burst' })
    assert.ok(!listed.some((product) => product.slug === after.slug), 'a slug not yet taken')
  })

  if (dialect === 'sqlite') {
    it('the SQLite database file the server made is in WAL journal mode', async (t) => {
      // A fresh file, made by `catalog serve` itself (it prints a first-run key).
      const DATABASE_URL = await databaseUrlFor(t, dialect)
      const server = await startServe(t, { DATABASE_URL })
      const [key] = await server.waitForOutput(SECRET_PATTERN)
      await create(server, key, '/products', { name: 'Anything' })
      const file = new SqliteDatabase(DATABASE_URL.slice('sqlite:'.length), {
        readonly: true,
        fileMustExist: true,
      })
      try {
        assert.equal(file.pragma('journal_mode', { simple: true }), 'wal')
      } finally {
        file.close()
      }
    })
  }
})
