import assert from 'node:assert/strict'
import { Writable } from 'node:stream'
import { it, type TestContext } from 'node:test'
import type { Dialect } from '../src/db/database.js'
import type { ResolvedAddress, Resolver } from '../src/webhooks/address-guard.js'
import {
  buildTestApi,
  describeEachDialect,
  expectError,
  malformedIds,
  type TestApi,
} from './helpers.js'

/** A public address (TEST-NET addresses are reserved, so refused: this one is routable). */
const PUBLIC_V4 = '93.184.215.14'

/**
 * A resolver that knows a few names: `hooks.example.com` is public, `mixed.example.com` has a
 * private address among its public ones, `inside.example.com` is private; any other name
 * does not exist, and `flaky.example.com` times out.
 */
const testResolver: Resolver = async (hostname) => {
  const names: Record<string, ResolvedAddress[]> = {
    'hooks.example.com': [{ address: PUBLIC_V4, family: 4 }],
    'mixed.example.com': [
      { address: PUBLIC_V4, family: 4 },
      { address: '10.0.0.7', family: 4 },
      { address: '2606:4700::1111', family: 6 },
    ],
    'inside.example.com': [{ address: '192.168.1.20', family: 4 }],
  }
  if (hostname === 'flaky.example.com') {
    throw Object.assign(new Error('queryA ETIMEOUT'), { code: 'ETIMEOUT' })
  }
  const found = names[hostname]
  if (found === undefined) throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' })
  return found
}

const URL_OK = 'https://hooks.example.com/catalog'

function build(t: TestContext, dialect: Dialect, allowPrivate = false): Promise<TestApi> {
  return buildTestApi(t, dialect, { webhooks: { allowPrivate, resolve: testResolver } })
}

async function createEndpoint(
  api: TestApi,
  body: Record<string, unknown> = { url: URL_OK, events: ['*'] },
  key?: string,
): Promise<Record<string, any>> {
  const res = await api.post('/webhook-endpoints', body, key)
  assert.equal(res.statusCode, 200, res.body)
  return res.json().data
}

describeEachDialect('webhook endpoints', (dialect) => {
  it('create answers the endpoint with its secret, which no read shows again', async (t) => {
    const api = await build(t, dialect)
    const res = await api.post('/webhook-endpoints', {
      url: `  ${URL_OK}  `,
      events: ['product.created', 'variant.deleted'],
      description: ' ERP ',
    })
    assert.equal(res.statusCode, 200, res.body)
    const created = res.json().data
    assert.deepEqual(Object.keys(created).sort(), [
      'createdAt',
      'description',
      'enabled',
      'events',
      'id',
      'secret',
      'updatedAt',
      'url',
    ])
    assert.equal(created.url, URL_OK)
    assert.deepEqual(created.events, ['product.created', 'variant.deleted'])
    assert.equal(created.description, 'ERP')
    assert.equal(created.enabled, true)
    assert.equal(created.createdAt, created.updatedAt)
    assert.match(created.secret, /^whsec_[A-Za-z0-9+/]{43}=$/)
    assert.equal(Buffer.from(created.secret.slice(6), 'base64').length, 32)

    const { secret, ...endpoint } = created
    const got = await api.get(`/webhook-endpoints/${created.id}`)
    assert.equal(got.statusCode, 200)
    assert.deepEqual(got.json(), { data: endpoint })
    const list = await api.get('/webhook-endpoints')
    assert.deepEqual(list.json(), { data: [endpoint] })
    assert.ok(!got.body.includes(secret) && !list.body.includes(secret))

    const other = await createEndpoint(api, { url: URL_OK, events: ['*'] })
    assert.equal(other.description, null)
    assert.notEqual(other.secret, secret)
    const ids = (await api.get('/webhook-endpoints')).json().data.map((e: any) => e.id)
    assert.deepEqual(ids, [created.id, other.id], 'oldest first')
  })

  it('events: a non-empty list of the six types, each once, or ["*"] alone', async (t) => {
    const api = await build(t, dialect)
    for (const events of [
      [],
      ['product.exploded'],
      ['*', 'product.created'],
      ['product.created', 'product.created'],
      'product.created',
      null,
    ]) {
      const res = await api.post('/webhook-endpoints', { url: URL_OK, events })
      const body = expectError(res, 400, 'validation_failed')
      assert.ok(
        body.details?.some((d) => d.field.startsWith('events')),
        `${JSON.stringify(events)}: ${res.body}`,
      )
    }
    expectError(await api.post('/webhook-endpoints', { url: URL_OK }), 400, 'validation_failed')
    const all = [
      'product.created',
      'product.updated',
      'product.deleted',
      'variant.created',
      'variant.updated',
      'variant.deleted',
    ]
    assert.deepEqual((await createEndpoint(api, { url: URL_OK, events: all })).events, all)
  })

  it('url: absolute https://, at most 2,048 characters, checked on create and PATCH', async (t) => {
    const api = await build(t, dialect)
    const long = `https://hooks.example.com/${'a'.repeat(2048 - 26)}`
    assert.equal(long.length, 2048)
    assert.equal(
      (await api.post('/webhook-endpoints', { url: long, events: ['*'] })).statusCode,
      200,
    )
    const refused = [
      `${long}a`,
      'hooks.example.com/catalog',
      '/catalog',
      '',
      'http://hooks.example.com/catalog',
      'ftp://hooks.example.com/catalog',
      'https://',
      'https://localhost/hooks',
      'https://127.0.0.1/',
      'https://inside.example.com/',
      'https://mixed.example.com/',
    ]
    for (const url of refused) {
      const res = await api.post('/webhook-endpoints', { url, events: ['*'] })
      const body = expectError(res, 400, 'validation_failed')
      assert.deepEqual(
        body.details?.map((d) => d.field),
        ['url'],
        `${url.slice(0, 60)}: ${res.body}`,
      )
    }
    const endpoint = await createEndpoint(api)
    for (const url of [
      'http://hooks.example.com/',
      'https://[::1]/',
      'https://mixed.example.com/',
    ]) {
      const res = await api.patch(`/webhook-endpoints/${endpoint.id}`, { url })
      const body = expectError(res, 400, 'validation_failed')
      assert.deepEqual(
        body.details?.map((d) => d.field),
        ['url'],
        url,
      )
    }
    const got = await api.get(`/webhook-endpoints/${endpoint.id}`)
    assert.equal(got.json().data.url, URL_OK, 'a refused PATCH changes nothing')

    // A host that does not resolve now, or whose resolver cannot answer, is taken as it is:
    // only a host that resolves inside is refused, and deliveries check where they connect.
    for (const url of ['https://nowhere.example.com/', 'https://flaky.example.com/']) {
      assert.equal((await createEndpoint(api, { url, events: ['*'] })).url, url)
    }
  })

  it('WEBHOOK_ALLOW_PRIVATE allows plain http:// and private addresses, not other schemes', async (t) => {
    const api = await build(t, dialect, true)
    for (const url of [
      'http://127.0.0.1:8080/hooks',
      'http://localhost/hooks',
      'https://inside.example.com/',
      'http://[::1]/',
      'http://receiver/hooks',
    ]) {
      assert.equal((await createEndpoint(api, { url, events: ['*'] })).url, url)
    }
    const res = await api.post('/webhook-endpoints', { url: 'ftp://127.0.0.1/', events: ['*'] })
    expectError(res, 400, 'validation_failed')
  })

  it('PATCH is a merge patch of url, events, description and enabled', async (t) => {
    const api = await build(t, dialect)
    const created = await createEndpoint(api, {
      url: URL_OK,
      events: ['product.created'],
      description: 'ERP',
    })
    const { secret: _secret, ...endpoint } = created
    const path = `/webhook-endpoints/${created.id}`

    const same = await api.patch(path, { url: URL_OK, events: ['product.created'], enabled: true })
    assert.equal(same.statusCode, 200, same.body)
    assert.deepEqual(same.json().data, endpoint, 'a patch that changes nothing changes nothing')
    assert.deepEqual((await api.patch(path, {})).json().data, endpoint)

    // The next write is at a later millisecond.
    while (Date.now() <= Date.parse(endpoint.updatedAt)) {
      await new Promise((resolve) => setImmediate(resolve))
    }
    const disabled = (await api.patch(path, { enabled: false })).json().data
    assert.deepEqual(
      { ...disabled, updatedAt: undefined },
      {
        ...endpoint,
        enabled: false,
        updatedAt: undefined,
      },
    )
    assert.ok(disabled.updatedAt > endpoint.updatedAt)

    const changed = await api.request('PATCH', path, {
      body: {
        url: 'https://mixed.example.com/'.replace('mixed', 'hooks') + 'v2',
        events: ['*'],
        description: null,
      },
      headers: { 'content-type': 'application/merge-patch+json' },
    })
    assert.equal(changed.statusCode, 200, changed.body)
    assert.deepEqual(
      { ...changed.json().data, updatedAt: undefined },
      {
        ...endpoint,
        url: 'https://hooks.example.com/v2',
        events: ['*'],
        description: null,
        enabled: false,
        updatedAt: undefined,
      },
    )
    assert.deepEqual((await api.get(path)).json().data, changed.json().data)

    for (const body of [
      { url: null },
      { events: null },
      { enabled: null },
      { enabled: 'no' },
      { events: [] },
      { description: 'x'.repeat(1025) },
    ]) {
      expectError(await api.patch(path, body), 400, 'validation_failed')
    }
  })

  it('DELETE answers {id, deleted: true}; the endpoint is gone', async (t) => {
    const api = await build(t, dialect)
    const endpoint = await createEndpoint(api)
    const path = `/webhook-endpoints/${endpoint.id}`
    const res = await api.delete(path)
    assert.equal(res.statusCode, 200, res.body)
    assert.deepEqual(res.json(), { data: { id: endpoint.id, deleted: true } })
    expectError(await api.get(path), 404, 'not_found')
    expectError(await api.delete(path), 404, 'not_found')
    expectError(await api.patch(path, { enabled: false }), 404, 'not_found')
    assert.deepEqual((await api.get('/webhook-endpoints')).json(), { data: [] })
  })

  it('ids that are not an endpoint of the store are 404, never 500', async (t) => {
    const api = await build(t, dialect)
    const endpoint = await createEndpoint(api)
    for (const id of [...malformedIds(endpoint.id), '019a8f6e-1c2d-7b3a-9e4f-5a6b7c8d9e0f']) {
      expectError(await api.get(`/webhook-endpoints/${id}`), 404, 'not_found')
      expectError(await api.patch(`/webhook-endpoints/${id}`, { enabled: false }), 404, 'not_found')
      expectError(await api.delete(`/webhook-endpoints/${id}`), 404, 'not_found')
    }
    const upper = await api.get(`/webhook-endpoints/${endpoint.id.toUpperCase()}`)
    assert.equal(upper.json().data.id, endpoint.id)
  })

  it("another store's endpoints are 404 and not listed; each store has its own 16", async (t) => {
    const api = await build(t, dialect)
    const otherKey = await api.newKey({ store: 'store-b' })
    const theirs = await createEndpoint(api, { url: URL_OK, events: ['*'] }, otherKey)
    const path = `/webhook-endpoints/${theirs.id}`
    expectError(await api.get(path), 404, 'not_found')
    expectError(await api.patch(path, { enabled: false }), 404, 'not_found')
    expectError(await api.delete(path), 404, 'not_found')
    assert.deepEqual((await api.get('/webhook-endpoints')).json(), { data: [] })
    for (let i = 0; i < 16; i++) await createEndpoint(api)
    assert.equal((await api.get('/webhook-endpoints', otherKey)).json().data.length, 1)
    assert.equal((await api.get(path, otherKey)).json().data.enabled, true)
    await createEndpoint(api, { url: URL_OK, events: ['*'] }, otherKey)
  })

  it('at most 16 endpoints per store: the 17th is 400, and a delete frees a place', async (t) => {
    const api = await build(t, dialect)
    const made: Record<string, any>[] = []
    for (let i = 0; i < 16; i++) made.push(await createEndpoint(api))
    const res = await api.post('/webhook-endpoints', { url: URL_OK, events: ['*'] })
    expectError(res, 400, 'validation_failed')
    assert.match(res.json().message, /at most 16/)
    assert.equal((await api.delete(`/webhook-endpoints/${made[3]!.id}`)).statusCode, 200)
    await createEndpoint(api)
    expectError(
      await api.post('/webhook-endpoints', { url: URL_OK, events: ['*'] }),
      400,
      'validation_failed',
    )
    // A delete of an endpoint that is not there frees nothing.
    expectError(await api.delete(`/webhook-endpoints/${made[3]!.id}`), 404, 'not_found')
    expectError(
      await api.post('/webhook-endpoints', { url: URL_OK, events: ['*'] }),
      400,
      'validation_failed',
    )
    assert.equal((await api.get('/webhook-endpoints')).json().data.length, 16)
  })

  it('20 concurrent creates on a store with none: exactly 16 succeed', async (t) => {
    const api = await build(t, dialect)
    for (let round = 0; round < 3; round++) {
      const answers = await Promise.all(
        Array.from({ length: 20 }, () =>
          api.post('/webhook-endpoints', { url: URL_OK, events: ['*'] }),
        ),
      )
      const statuses = answers.map((res) => res.statusCode)
      const created = answers.filter((res) => res.statusCode === 200)
      assert.equal(created.length, 16, `round ${round}: ${statuses.join(' ')}`)
      for (const res of answers) {
        if (res.statusCode !== 200) expectError(res, 400, 'validation_failed')
      }
      const list = (await api.get('/webhook-endpoints')).json().data
      assert.equal(list.length, 16)
      // Empty the store again, concurrently too, for the next round.
      const deletes = await Promise.all(
        list.map((e: any) => api.delete(`/webhook-endpoints/${e.id}`)),
      )
      assert.ok(deletes.every((res) => res.statusCode === 200))
    }
  })

  it('writes honour Idempotency-Key: a retried create answers the same endpoint and secret', async (t) => {
    const api = await build(t, dialect)
    const send = (body: unknown, key: string) =>
      api.request('POST', '/webhook-endpoints', { body, headers: { 'idempotency-key': key } })
    const body = { url: URL_OK, events: ['*'] }
    const first = await send(body, 'create-1')
    assert.equal(first.statusCode, 200, first.body)
    const again = await send(body, 'create-1')
    assert.equal(again.statusCode, 200)
    assert.equal(again.headers['idempotent-replayed'], 'true')
    assert.deepEqual(again.json(), first.json())
    assert.equal((await api.get('/webhook-endpoints')).json().data.length, 1)
    expectError(
      await send({ url: URL_OK, events: ['product.created'] }, 'create-1'),
      422,
      'idempotency_key_reused',
    )

    const path = `/webhook-endpoints/${first.json().data.id}`
    const del = () => api.request('DELETE', path, { headers: { 'idempotency-key': 'delete-1' } })
    const deleted = await del()
    assert.equal(deleted.statusCode, 200)
    const replayed = await del()
    assert.equal(replayed.statusCode, 200, 'the delete is replayed, not answered 404')
    assert.equal(replayed.headers['idempotent-replayed'], 'true')
  })

  it('every route needs the write scope', async (t) => {
    const api = await build(t, dialect)
    const endpoint = await createEndpoint(api)
    const readKey = await api.newKey({ scopes: ['read'] })
    const path = `/webhook-endpoints/${endpoint.id}`
    const calls: [string, string, unknown][] = [
      ['POST', '/webhook-endpoints', { url: URL_OK, events: ['*'] }],
      ['GET', '/webhook-endpoints', undefined],
      ['GET', path, undefined],
      ['PATCH', path, { enabled: false }],
      ['DELETE', path, undefined],
    ]
    for (const [method, url, body] of calls) {
      expectError(await api.request(method, url, { key: readKey, body }), 403, 'forbidden')
    }
    const unauthenticated = await api.app.inject({
      method: 'GET',
      url: '/api/commerce/v1/webhook-endpoints',
    })
    assert.equal(unauthenticated.statusCode, 401)
  })

  it('requests are counted in the metrics under their route pattern', async (t) => {
    const api = await build(t, dialect)
    const endpoint = await createEndpoint(api)
    await api.get(`/webhook-endpoints/${endpoint.id}`)
    const metrics = (await api.app.inject({ method: 'GET', url: '/metrics' })).body
    for (const [method, route] of [
      ['POST', '/api/commerce/v1/webhook-endpoints'],
      ['GET', '/api/commerce/v1/webhook-endpoints/:id'],
    ]) {
      const line = `http_requests_total{method="${method}",route="${route}",status_code="200"} 1`
      assert.ok(metrics.includes(line), `${line} in\n${metrics.slice(0, 2000)}`)
    }
  })

  it('are rate limited per key and logged one line per request, never with the secret', async (t) => {
    let logged = ''
    const stream = new Writable({
      write(chunk: Buffer, _encoding, done) {
        logged += chunk.toString()
        done()
      },
    })
    const api = await buildTestApi(t, dialect, {
      webhooks: { allowPrivate: false, resolve: testResolver },
      rateLimit: { perMinute: 3, now: () => 1_000_000 },
      logger: { level: 'info', stream },
    })
    const created = await createEndpoint(api)
    assert.equal((await api.get(`/webhook-endpoints/${created.id}`)).statusCode, 200)
    assert.equal((await api.delete(`/webhook-endpoints/${created.id}`)).statusCode, 200)
    expectError(await api.get('/webhook-endpoints'), 429, 'rate_limited')
    const lines = logged
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line))
      .filter((line) => line.msg === 'request')
    assert.deepEqual(
      lines.map((line) => [line.method, line.route, line.status]),
      [
        ['POST', '/api/commerce/v1/webhook-endpoints', 200],
        ['GET', '/api/commerce/v1/webhook-endpoints/:id', 200],
        ['DELETE', '/api/commerce/v1/webhook-endpoints/:id', 200],
        ['GET', '/api/commerce/v1/webhook-endpoints', 429],
      ],
    )
    assert.ok(!logged.includes(created.secret.slice(6)), 'the secret is never logged')
  })
})
