import assert from 'node:assert/strict'
import { it } from 'node:test'
import { sql } from 'kysely'
import pg from 'pg'
import { START } from '../src/events/event-queries.js'
import { findEventRows, findHorizon, hasHeldBackEvent } from '../src/events/event.repository.js'
import type { Resolver } from '../src/webhooks/address-guard.js'
import { API, buildTestApi, describeEachDialect, expectError, POSTGRES_URL } from './helpers.js'
import { create, createKey, databaseUrlFor, request, startServe } from './process-helpers.js'
import { startReceiver } from './webhook-receiver.js'

// Contract, part 2, Events and Webhooks, as a client reads them.

describeEachDialect(
  'webhook endpoint URLs: what the contract refuses, and only that',
  (dialect) => {
    // "hosts that resolve to loopback, private (...) are refused with 400 validation_failed on
    // create or update, and are never connected to at delivery (the check is made on the address
    // actually connected to, at every attempt, so a DNS change cannot steer a delivery inside)"
    it('a host that cannot be resolved now is accepted; one that resolves inside is refused', async (t) => {
      const resolve: Resolver = async (hostname) => {
        if (hostname === 'inside.example.com') return [{ address: '10.1.2.3', family: 4 }]
        if (hostname === 'slow.example.com') return new Promise(() => {})
        const code = hostname === 'flaky.example.com' ? 'EAI_AGAIN' : 'ENOTFOUND'
        throw Object.assign(new Error(code), { code })
      }
      const api = await buildTestApi(t, dialect, { webhooks: { allowPrivate: false, resolve } })
      for (const url of [
        'https://hooks.example.com/catalog',
        'https://flaky.example.com/catalog',
        'https://slow.example.com/catalog',
      ]) {
        const res = await api.post('/webhook-endpoints', { url, events: ['*'] })
        assert.equal(res.statusCode, 200, `${url}: ${res.body}`)
        assert.equal(res.json().data.url, url)
        assert.match(res.json().data.secret, /^whsec_[A-Za-z0-9+/]{43}=$/)
        const patched = await api.patch(`/webhook-endpoints/${res.json().data.id}`, {
          url: `${url}/v2`,
        })
        assert.equal(patched.statusCode, 200, patched.body)
      }
      const refused = expectError(
        await api.post('/webhook-endpoints', {
          url: 'https://inside.example.com/catalog',
          events: ['*'],
        }),
        400,
        'validation_failed',
      )
      assert.deepEqual(
        refused.details?.map((d) => d.field),
        ['url'],
      )
    })

    it("with the system's resolver, a name that does not exist (.test) is accepted", async (t) => {
      const api = await buildTestApi(t, dialect)
      const url = 'https://hooks.catalog.test/webhooks'
      const res = await api.post('/webhook-endpoints', { url, events: ['product.created'] })
      assert.equal(res.statusCode, 200, res.body)
      assert.equal(res.json().data.url, url)
    })
  },
)

describeEachDialect('the event feed right after a write', (dialect) => {
  // "Every committed change appends one event" and the feed lists "the store's events in
  // commit order": a client that got its write's 200 finds the write's event in the feed,
  // also while an older transaction of the same database is still running (the read waits for
  // it: its events would sort before this one's) or one of another database of the server.
  it("a write's event is in the feed read just after its 200, an older transaction running meanwhile", async (t) => {
    const api = await buildTestApi(t, dialect)
    const start = (await api.get('/events')).json().nextCursor
    let older: Promise<unknown> | undefined
    if (dialect === 'postgres') {
      let began!: () => void
      const beginning = new Promise<void>((resolve) => (began = resolve))
      older = api.database.kysely.transaction().execute(async (trx) => {
        await sql`select pg_current_xact_id()`.execute(trx)
        began()
        await new Promise((resolve) => setTimeout(resolve, 150))
      })
      await beginning
    }
    const product = await api.createProduct({ name: 'Read after write' })
    const res = await api.get(`/events?after=${start}`)
    await older
    assert.equal(res.statusCode, 200, res.body)
    const page = res.json()
    assert.deepEqual(
      page.data.map((event: Record<string, any>) => [event.type, event.data.object.id]),
      [['product.created', product.id]],
    )
    assert.equal(page.hasMore, false)
  })

  if (dialect === 'postgres') {
    it('an event held back at a read is still waited for when the older transaction ends before the check', async (t) => {
      // The page's two reads (its events, then whether any were held back) must use one
      // horizon: had the check taken a newer one, an event held back by a transaction that
      // ended between them would be neither read nor waited for.
      const api = await buildTestApi(t, dialect)
      const db = api.database.kysely
      let began!: () => void
      let finish!: () => void
      const beginning = new Promise<void>((resolve) => (began = resolve))
      const finishing = new Promise<void>((resolve) => (finish = resolve))
      const older = db.transaction().execute(async (trx) => {
        await sql`select pg_current_xact_id()`.execute(trx)
        began()
        await finishing
      })
      await beginning
      await api.createProduct({ name: 'Held back' })
      const query = { storeId: 'store-a', after: START, type: undefined, limit: 10 }
      const horizon = await findHorizon(db)
      assert.deepEqual(await findEventRows(db, query, horizon), [])
      finish()
      await older
      assert.equal(await hasHeldBackEvent(db, query, horizon), true)
      assert.equal((await findEventRows(db, query, await findHorizon(db))).length, 1)
    })

    it('a transaction of another database of the server does not hold the feed back', async (t) => {
      const api = await buildTestApi(t, dialect)
      const start = (await api.get('/events')).json().nextCursor
      const other = new pg.Client({ connectionString: POSTGRES_URL })
      await other.connect()
      t.after(() => other.end())
      await other.query('begin')
      await other.query('select pg_current_xact_id()')
      try {
        const product = await api.createProduct({ name: 'Not held back' })
        const res = await api.get(`/events?after=${start}`)
        const page = res.json()
        assert.deepEqual(
          page.data.map((event: Record<string, any>) => event.data.object.id),
          [product.id],
        )
      } finally {
        await other.query('commit')
      }
    })
  }
})

describeEachDialect('webhook endpoint validation: every problem, body before key', (dialect) => {
  // Part 1: "details appears for validation errors: one entry per problem"; part 2: "Checks
  // run in this order: authentication, rate limit, scope, body, idempotency key, ...".
  it('details name the URL refused and the other fields wrong, on create and PATCH', async (t) => {
    const api = await buildTestApi(t, dialect)
    const fields = async (res: Awaited<ReturnType<typeof api.post>>) =>
      expectError(res, 400, 'validation_failed')
        .details!.map((d) => d.field)
        .sort()
    assert.deepEqual(
      await fields(
        await api.post('/webhook-endpoints', { url: 'http://example.com/h', events: [] }),
      ),
      ['events', 'url'],
    )
    assert.deepEqual(
      await fields(
        await api.post('/webhook-endpoints', { url: 'https://10.0.0.1/h', events: ['nope'] }),
      ),
      ['events.0', 'url'],
    )
    assert.deepEqual(
      await fields(
        await api.post('/webhook-endpoints', {
          url: 'https://[::1]/h',
          events: ['*', 'product.created'],
          description: 5,
        }),
      ),
      ['description', 'events', 'url'],
    )
    const created = await api.post('/webhook-endpoints', {
      url: 'https://93.184.215.14/h',
      events: ['*'],
    })
    assert.equal(created.statusCode, 200, created.body)
    const id = created.json().data.id
    assert.deepEqual(
      await fields(
        await api.patch(`/webhook-endpoints/${id}`, { url: 'https://127.0.0.1/h', enabled: 'no' }),
      ),
      ['enabled', 'url'],
    )
  })

  it('a refused URL is named before a malformed Idempotency-Key', async (t) => {
    const api = await buildTestApi(t, dialect)
    const headers = { 'idempotency-key': 'k'.repeat(256) }
    const refused = expectError(
      await api.request('POST', '/webhook-endpoints', {
        body: { url: 'https://192.168.0.1/h', events: ['*'] },
        headers,
      }),
      400,
      'validation_failed',
    )
    assert.deepEqual(
      refused.details?.map((d) => d.field),
      ['url'],
    )
    const key = expectError(
      await api.request('POST', '/webhook-endpoints', {
        body: { url: 'https://93.184.215.14/h', events: ['*'] },
        headers,
      }),
      400,
      'validation_failed',
    )
    assert.deepEqual(
      key.details?.map((d) => d.field),
      ['Idempotency-Key'],
    )
  })
})

describeEachDialect(
  'catalog serve with WEBHOOK_RETRY_SCHEDULE in fractions of a second',
  (dialect) => {
    // "WEBHOOK_RETRY_SCHEDULE (seconds, comma-separated) replaces that schedule", "then the
    // delivery is failed".
    it('starts, retries after each delay with the same webhook-id, then marks the delivery failed', async (t) => {
      const receiver = await startReceiver(t, () => 503)
      const databaseUrl = await databaseUrlFor(t, dialect)
      const { key } = await createKey(databaseUrl, 'shop')
      const server = await startServe(t, {
        DATABASE_URL: databaseUrl,
        WEBHOOK_ALLOW_PRIVATE: '1',
        WEBHOOK_RETRY_SCHEDULE: '0.3, 0.3',
        WEBHOOK_TIMEOUT_MS: '2000',
      })
      const endpoint = await create(server, key, '/webhook-endpoints', {
        url: `${receiver.url}/down`,
        events: ['product.created'],
      })
      receiver.trust('/down', endpoint.secret)
      await create(server, key, '/products', { name: 'Shirt' })
      await receiver.waitFor(3, 8000)
      const [first, second, third] = receiver.received
      assert.equal(second!.id, first!.id)
      assert.equal(third!.id, first!.id)
      assert.ok(second!.at - first!.at >= 300, `${second!.at - first!.at} ms`)
      assert.ok(third!.at - second!.at >= 300, `${third!.at - second!.at} ms`)
      let delivery: Record<string, any> | undefined
      for (let i = 0; i < 50 && delivery?.status !== 'failed'; i++) {
        if (i > 0) await new Promise((resolve) => setTimeout(resolve, 100))
        const listed = await request(
          server,
          'GET',
          `${API}/webhook-endpoints/${endpoint.id}/deliveries`,
          {
            key,
          },
        )
        assert.equal(listed.status, 200, JSON.stringify(listed.body))
        delivery = listed.body.data[0]
      }
      assert.equal(delivery!.status, 'failed')
      assert.equal(delivery!.attempts, 3)
      assert.equal(delivery!.lastStatusCode, 503)
      assert.equal(delivery!.nextAttemptAt, null)
      assert.equal(delivery!.eventId, first!.id)
      assert.equal(receiver.received.length, 3)
      assert.deepEqual(receiver.rejected, [])
      assert.equal((await server.stop('SIGTERM')).code, 0)
    })
  },
)

describeEachDialect('catalog serve with a short EVENT_RETENTION_DAYS', (dialect) => {
  // "Events are kept EVENT_RETENTION_DAYS (default 30); a cursor older than that is 410
  // cursor_expired."
  it('takes a fraction of a day, prunes on its own, and answers 410 for a cursor before the kept events', async (t) => {
    const databaseUrl = await databaseUrlFor(t, dialect)
    const { key } = await createKey(databaseUrl, 'shop')
    // 0.00002 days: 1.728 s.
    const server = await startServe(t, {
      DATABASE_URL: databaseUrl,
      EVENT_RETENTION_DAYS: '0.00002',
    })
    const feed = (query = '') => request(server, 'GET', `${API}/events${query}`, { key })
    const start = (await feed()).body.nextCursor
    await create(server, key, '/products', { name: 'Old' })
    let expired = await feed(`?after=${start}`)
    for (let i = 0; i < 80 && expired.status === 200; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100))
      expired = await feed(`?after=${start}`)
    }
    assert.equal(expired.status, 410, JSON.stringify(expired.body))
    assert.equal(expired.body.error, 'cursor_expired')
    const kept = await feed()
    assert.equal(kept.status, 200)
    assert.deepEqual(kept.body.data, [])
    assert.equal((await feed(`?after=${kept.body.nextCursor}`)).status, 200)
    assert.equal((await server.stop('SIGTERM')).code, 0)
  })
})
