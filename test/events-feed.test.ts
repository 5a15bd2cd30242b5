import assert from 'node:assert/strict'
import { it, type TestContext } from 'node:test'
import { sql } from 'kysely'
import { pruneEvents, startEventPruning } from '../src/events/pruning.js'
import {
  addVariant,
  buildTestApi,
  describeEachDialect,
  expectError,
  type TestApi,
} from './helpers.js'
import { readFeed } from './event-helpers.js'

const DAY_MS = 24 * 60 * 60 * 1000
const RETENTION = { retentionDays: 30, batchSize: 2 }

async function page(api: TestApi, query = '', key?: string) {
  const res = await api.get(`/events${query ? `?${query}` : ''}`, key)
  assert.equal(res.statusCode, 200, res.body)
  const body = res.json()
  assert.deepEqual(Object.keys(body).sort(), ['data', 'hasMore', 'nextCursor'])
  assert.equal(typeof body.nextCursor, 'string')
  return body as { data: Record<string, any>[]; nextCursor: string; hasMore: boolean }
}

async function createProducts(api: TestApi, count: number, key?: string) {
  const ids: string[] = []
  for (let i = 0; i < count; i++) ids.push((await api.createProduct({ name: `P${i}` }, key)).id)
  return ids
}

const tick = () => new Promise((resolve) => setTimeout(resolve, 5))

describeEachDialect('the event feed', (dialect) => {
  it('an empty store: no events, hasMore false, a start cursor that reads the first events once they come', async (t) => {
    const api = await buildTestApi(t, dialect)
    const empty = await page(api)
    assert.deepEqual(empty.data, [])
    assert.equal(empty.hasMore, false)
    const again = await page(api, `after=${empty.nextCursor}`)
    assert.deepEqual(again, empty)
    const [id] = await createProducts(api, 1)
    await readFeed(api, { atLeast: 1 })
    const first = await page(api, `after=${empty.nextCursor}`)
    assert.deepEqual(
      first.data.map((event) => event.data.object.id),
      [id],
    )
  })

  it('pages oldest first by limit; hasMore until the end; an empty page hands back the cursor sent', async (t) => {
    const api = await buildTestApi(t, dialect)
    const ids = await createProducts(api, 7)
    await readFeed(api, { atLeast: 7 })
    const pages = []
    let after = ''
    for (;;) {
      const body = await page(api, `limit=3${after && `&after=${after}`}`)
      pages.push(body)
      after = body.nextCursor
      if (!body.hasMore) break
    }
    assert.deepEqual(
      pages.map((body) => [body.data.length, body.hasMore]),
      [
        [3, true],
        [3, true],
        [1, false],
      ],
    )
    assert.deepEqual(
      pages.flatMap((body) => body.data.map((event) => event.data.object.id)),
      ids,
    )
    const end = await page(api, `limit=3&after=${after}`)
    assert.deepEqual(end, { data: [], nextCursor: after, hasMore: false })
    // A change made after the reader reached the end comes after its cursor.
    const product = await api.createProduct({ name: 'Later' })
    await readFeed(api, { atLeast: 8 })
    const later = await page(api, `after=${after}`)
    assert.deepEqual(
      later.data.map((event) => [event.type, event.data.object.id]),
      [['product.created', product.id]],
    )
  })

  it('limit: 1 to 500, 100 by default; anything else is 400 naming limit', async (t) => {
    const api = await buildTestApi(t, dialect)
    await createProducts(api, 102)
    await readFeed(api, { atLeast: 102 })
    const first = await page(api)
    assert.equal(first.data.length, 100)
    assert.equal(first.hasMore, true)
    assert.equal((await page(api, 'limit=500')).data.length, 102)
    assert.equal((await page(api, 'limit=1')).data.length, 1)
    for (const limit of ['0', '501', '-1', '1.5', 'ten', '']) {
      const body = expectError(await api.get(`/events?limit=${limit}`), 400, 'validation_failed')
      assert.deepEqual(
        body.details!.map((detail) => detail.field),
        ['limit'],
        limit,
      )
    }
  })

  it('type keeps one type, with the same cursor semantics; an unknown type is 400 naming type', async (t) => {
    const api = await buildTestApi(t, dialect)
    const product = await api.createProduct({ name: 'Base' })
    const variant = await addVariant(api, product.id, { name: 'V' })
    await api.patch(`/products/${product.id}`, { name: 'Base 2' })
    await api.patch(`/products/${product.id}/variants/${variant.id}`, { name: 'V2' })
    await api.delete(`/products/${product.id}/variants/${variant.id}`)
    await api.delete(`/products/${product.id}`)
    const all = await readFeed(api, { atLeast: 6 })
    assert.deepEqual(
      all.map((event) => event.type),
      [
        'product.created',
        'variant.created',
        'product.updated',
        'variant.updated',
        'variant.deleted',
        'product.deleted',
      ],
    )
    for (const event of all) {
      const body = await page(api, `type=${event.type}`)
      assert.deepEqual(body.data, [event])
      assert.equal(body.hasMore, false)
      const after = await page(api, `type=${event.type}&after=${body.nextCursor}`)
      assert.deepEqual(after, { data: [], nextCursor: body.nextCursor, hasMore: false })
    }
    const created = await page(api, 'type=variant.created&limit=1')
    assert.equal(created.data.length, 1)
    for (const type of ['product.archived', 'PRODUCT.CREATED', 'product', '*', '']) {
      const body = expectError(await api.get(`/events?type=${type}`), 400, 'validation_failed')
      assert.deepEqual(
        body.details!.map((detail) => detail.field),
        ['type'],
        type,
      )
    }
  })

  it('a cursor the service did not make is 400 naming after', async (t) => {
    const api = await buildTestApi(t, dialect)
    await createProducts(api, 2)
    await readFeed(api, { atLeast: 2 })
    const { nextCursor } = await page(api)
    const listCursor = (await api.get('/products?limit=1')).json().nextCursor
    const encode = (text: string) => Buffer.from(text).toString('base64url')
    for (const after of [
      'garbage',
      listCursor,
      encode('e1.x.1'),
      encode('e1.01.1'),
      encode('e1.1.-1'),
      encode('e2.1.1'),
      encode('e1.1.99999999999999999'),
      encode('e1.99999999999999999999999.1'),
      `${nextCursor}=`,
      `${nextCursor}!`,
      `${nextCursor}.`,
      '%00',
    ]) {
      const res = await api.get(`/events?after=${encodeURIComponent(after)}`)
      assert.equal(res.statusCode, 400, `after=${after}: ${res.body}`)
      const body = expectError(res, 400, 'validation_failed')
      assert.deepEqual(
        body.details!.map((detail) => detail.field),
        ['after'],
        after,
      )
    }
  })

  it('a well-formed cursor that names no position the feed handed out is 400: past the end, a made-up transaction, a changed sequence number', async (t) => {
    const api = await buildTestApi(t, dialect)
    await createProducts(api, 3)
    await readFeed(api, { atLeast: 3 })
    const decode = (cursor: string) => Buffer.from(cursor, 'base64url').toString()
    const encode = (text: string) => Buffer.from(text).toString('base64url')
    const real: string[] = []
    for (const limit of [1, 2, 3]) real.push(decode((await page(api, `limit=${limit}`)).nextCursor))
    const [first, , last] = real.map((text) => text.split('.') as [string, string, string])
    // On PostgreSQL a position pairs its transaction with its number; SQLite's xid is always 0.
    const forged = [
      `e1.${last![1]}.${Number(last![2]) + 1000}`,
      `e1.${BigInt(last![1]) + 1000n}.${last![2]}`,
      `e1.${first![1]}.${last![2]}`,
      'e1.0.999999',
      'e1.7.1',
    ].filter((text) => !real.includes(text))
    assert.ok(forged.length >= 4)
    for (const text of forged) {
      const body = expectError(
        await api.get(`/events?after=${encode(text)}`),
        400,
        'validation_failed',
      )
      assert.deepEqual(
        body.details!.map((detail) => detail.field),
        ['after'],
        text,
      )
    }
    // The real ones read on.
    assert.equal((await page(api, `after=${encode(real[0]!)}`)).data.length, 2)
    assert.equal((await page(api, `after=${encode(real[2]!)}`)).data.length, 0)
  })

  it('a store sees only its own events, whatever cursor it sends; a read key reads the feed; no key is 401', async (t) => {
    const api = await buildTestApi(t, dialect)
    const otherKey = await api.newKey({ store: 'store-b' })
    const readKey = await api.newKey({ scopes: ['read'] })
    const mine = await createProducts(api, 2)
    const theirs = await createProducts(api, 2, otherKey)
    await readFeed(api, { atLeast: 2 })
    await readFeed(api, { atLeast: 2, key: otherKey })
    const minePage = await page(api, '', readKey)
    assert.deepEqual(
      minePage.data.map((event) => event.data.object.id),
      mine,
    )
    const theirPage = await page(api, '', otherKey)
    assert.deepEqual(
      theirPage.data.map((event) => event.data.object.id),
      theirs,
    )
    // Store A's cursor is not one of store B's feed.
    const cursorOfA = (await page(api, 'limit=1')).nextCursor
    const crossed = expectError(
      await api.get(`/events?after=${cursorOfA}`, otherKey),
      400,
      'validation_failed',
    )
    assert.deepEqual(
      crossed.details!.map((detail) => detail.field),
      ['after'],
    )
    const res = await api.request('GET', '/events', { key: 'ck_nope' })
    expectError(res, 401, 'unauthorized')
  })
})

describeEachDialect('event retention', (dialect) => {
  it('deletes events older than the retention; a cursor before the deleted ones is 410, one at or after them is not', async (t) => {
    const api = await buildTestApi(t, dialect)
    const otherKey = await api.newKey({ store: 'store-b' })
    const start = (await page(api)).nextCursor
    const old = await createProducts(api, 3)
    await readFeed(api, { atLeast: 3 })
    await tick()
    const between = Date.now()
    await tick()
    const kept = await createProducts(api, 2)
    await createProducts(api, 1, otherKey)
    const all = await readFeed(api, { atLeast: 5 })
    const cursors = []
    for (let i = 1; i <= 5; i++) cursors.push((await page(api, `limit=${i}`)).nextCursor)

    // The clock passed in: 30 days after `between`, the first three are past retention.
    const deleted = await pruneEvents(api.database, new Date(between + 30 * DAY_MS), RETENTION)
    assert.equal(deleted, 3)
    const fresh = await page(api)
    assert.deepEqual(
      fresh.data.map((event) => event.data.object.id),
      kept,
    )
    assert.deepEqual(fresh.data, all.slice(3))
    for (const cursor of [start, cursors[0], cursors[1]]) {
      const body = expectError(await api.get(`/events?after=${cursor}`), 410, 'cursor_expired')
      assert.match(body.message, /retention/)
    }
    // At the last deleted event: nothing after it was lost.
    assert.deepEqual((await page(api, `after=${cursors[2]}`)).data, all.slice(3))
    assert.deepEqual((await page(api, `after=${cursors[3]}`)).data, all.slice(4))
    // Store B's event was younger: kept, and B's start cursor is still good.
    assert.equal((await page(api, `after=${start}`, otherKey)).data.length, 1)
    old.length = 0
  })

  it('once every event is deleted, the feed without a cursor hands back where the kept events start, which is not expired', async (t) => {
    const api = await buildTestApi(t, dialect)
    await createProducts(api, 3)
    await readFeed(api, { atLeast: 3 })
    const deleted = await pruneEvents(api.database, new Date(Date.now() + 31 * DAY_MS), RETENTION)
    assert.equal(deleted, 3)
    const empty = await page(api)
    assert.deepEqual(empty.data, [])
    const next = await page(api, `after=${empty.nextCursor}`)
    assert.deepEqual(next, empty)
    const [id] = await createProducts(api, 1)
    await readFeed(api, { atLeast: 1 })
    assert.deepEqual(
      (await page(api, `after=${empty.nextCursor}`)).data.map((event) => event.data.object.id),
      [id],
    )
    // Pruning again at the same time finds nothing more to delete.
    assert.equal(await pruneEvents(api.database, new Date(Date.now() + 29 * DAY_MS), RETENTION), 0)
  })

  it('the background component prunes on its interval with the clock it is given, and stops', async (t) => {
    const api = await buildTestApi(t, dialect)
    await createProducts(api, 2)
    await readFeed(api, { atLeast: 2 })
    const pruning = startEventPruning(api.database, {
      ...RETENTION,
      intervalMs: 10,
      clock: () => new Date(Date.now() + 31 * DAY_MS),
    })
    t.after(() => pruning.stop())
    const deadline = Date.now() + 10_000
    while ((await page(api)).data.length > 0 && Date.now() < deadline) await tick()
    await pruning.stop()
    assert.deepEqual((await page(api)).data, [])
  })
})

describeEachDialect('event positions past a power of ten of the xid', (dialect) => {
  /**
   * Three products' events, moved to the transactions 9, 10 and 100 (every real one ended
   * long ago): in position order A, B, C; as text, '10' < '100' < '9'.
   */
  async function eventsAtXids(t: TestContext) {
    const api = await buildTestApi(t, dialect)
    const [a] = await createProducts(api, 1)
    await tick()
    const between = Date.now()
    await tick()
    const [b, c] = await createProducts(api, 2)
    await readFeed(api, { atLeast: 3 })
    for (const [id, xid] of [
      [a, 9],
      [b, 10],
      [c, 100],
    ] as const) {
      await sql`update events set xid = ${String(xid)}::xid8
        where object->>'id' = ${id}`.execute(api.database.kysely)
    }
    return { api, ids: [a, b, c], between }
  }

  it(
    'the feed pages in xid order, not text order: each event once, none skipped',
    { skip: dialect !== 'postgres' },
    async (t) => {
      const { api, ids } = await eventsAtXids(t)
      const seen: string[] = []
      let cursor = ''
      for (let i = 0; i < 4; i++) {
        const body = await page(api, `limit=1${cursor && `&after=${cursor}`}`)
        seen.push(...body.data.map((event) => event.data.object.id))
        cursor = body.nextCursor
      }
      assert.deepEqual(seen, ids)
    },
  )

  it(
    'retention deletes the oldest by xid, not by text',
    { skip: dialect !== 'postgres' },
    async (t) => {
      const { api, ids, between } = await eventsAtXids(t)
      const deleted = await pruneEvents(api.database, new Date(between + 30 * DAY_MS), RETENTION)
      assert.equal(deleted, 1)
      assert.deepEqual(
        (await page(api)).data.map((event) => event.data.object.id),
        ids.slice(1),
      )
    },
  )
})
