import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { describe, it, type TestContext } from 'node:test'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import { buildApp } from '../src/app.js'
import { createApiKey } from '../src/auth/api-key.service.js'
import type { Database, Dialect } from '../src/db/database.js'
import {
  API,
  buildTestApi,
  createTestDatabase,
  describeEachDialect,
  expectError,
} from './helpers.js'
import { databaseUrlFor, request, startServe } from './process-helpers.js'

interface Sample {
  name: string
  labels: Record<string, string>
  value: number
}

interface Exposition {
  samples: Sample[]
  /** Metric family name to its TYPE. */
  types: Map<string, string>
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/
const SAMPLE_LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/
const LABEL_PAIR = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\[\\"n])*)"(,|$)/y

/**
 * The Prometheus text format (version 0.0.4), read strictly: every line is a HELP, a TYPE
 * or a sample, and every sample belongs to a family whose TYPE came before it.
 */
function parseExposition(text: string): Exposition {
  const samples: Sample[] = []
  const types = new Map<string, string>()
  const helped = new Set<string>()
  for (const line of text.split('\n')) {
    if (line === '') continue
    const comment = /^# (HELP|TYPE) (\S+) (.*)$/.exec(line)
    if (comment) {
      const [, kind, name, rest] = comment
      assert.match(name!, METRIC_NAME, line)
      if (kind === 'HELP') helped.add(name!)
      else {
        assert.match(rest!, /^(counter|gauge|histogram|summary|untyped)$/, line)
        assert.ok(!types.has(name!), `TYPE of ${name} given twice`)
        types.set(name!, rest!)
      }
      continue
    }
    const match = SAMPLE_LINE.exec(line)
    assert.ok(match, `not a sample line: ${JSON.stringify(line)}`)
    const [, name, labelText, valueText] = match
    const labels: Record<string, string> = {}
    if (labelText) {
      LABEL_PAIR.lastIndex = 0
      while (LABEL_PAIR.lastIndex < labelText.length) {
        const pair = LABEL_PAIR.exec(labelText)
        assert.ok(pair, `bad labels in ${JSON.stringify(line)}`)
        labels[pair[1]!] = pair[2]!
      }
    }
    // Values are read as Go's ParseFloat reads them: NaN and Inf in any case (prom-client writes Nan).
    const special = /^([+-]?)(inf|nan)$/i.exec(valueText!)
    const value = special
      ? special[2]!.toLowerCase() === 'nan'
        ? NaN
        : Number(`${special[1]}Infinity`)
      : Number(valueText)
    assert.ok(special || !Number.isNaN(value), `bad value in ${JSON.stringify(line)}`)
    const family = [name!, name!.replace(/_(bucket|sum|count)$/, '')].find((n) => types.has(n))
    assert.ok(family, `sample ${name} without a TYPE before it`)
    assert.ok(helped.has(family), `family ${family} without HELP`)
    samples.push({ name: name!, labels, value })
  }
  return { samples, types }
}

async function scrape(app: FastifyInstance, authorization?: string): Promise<Exposition> {
  const response = await app.inject({
    method: 'GET',
    url: '/metrics',
    headers: authorization === undefined ? {} : { authorization },
  })
  assert.equal(response.statusCode, 200, response.body)
  assert.match(String(response.headers['content-type']), /^text\/plain; version=0\.0\.4\b/)
  return parseExposition(response.body)
}

/** The one sample of this name whose labels include these; 0 when there is none. */
function valueOf(exposition: Exposition, name: string, labels: Record<string, string> = {}) {
  const found = exposition.samples.filter(
    (sample) =>
      sample.name === name &&
      Object.entries(labels).every(([label, value]) => sample.labels[label] === value),
  )
  assert.ok(found.length <= 1, `${name} ${JSON.stringify(labels)} matches ${found.length} samples`)
  return found[0]?.value ?? 0
}

function requestCount(exposition: Exposition, method: string, route: string, status: number) {
  return valueOf(exposition, 'http_requests_total', {
    method,
    route,
    status_code: String(status),
  })
}

describeEachDialect('metrics', (dialect) => {
  it('GET /metrics answers the Prometheus text format, without a key, with process metrics', async (t) => {
    const api = await buildTestApi(t, dialect)
    const metrics = await scrape(api.app)
    for (const [name, type] of [
      ['http_requests_total', 'counter'],
      ['http_request_duration_seconds', 'histogram'],
      ['process_cpu_user_seconds_total', 'counter'],
      ['process_resident_memory_bytes', 'gauge'],
      ['nodejs_heap_size_used_bytes', 'gauge'],
      ['nodejs_eventloop_lag_seconds', 'gauge'],
    ]) {
      assert.equal(metrics.types.get(name!), type, `${name} is a ${type}`)
    }
    assert.ok(valueOf(metrics, 'process_resident_memory_bytes') > 0)
  })

  it('requests are counted by route pattern, method and status, and their latencies are histogrammed', async (t) => {
    const api = await buildTestApi(t, dialect)
    const product = await api.createProduct({ name: 'Mug' })
    await api.createProduct({ name: 'Cup' })
    assert.equal((await api.get(`/products/${product.id}`)).statusCode, 200)
    assert.equal((await api.get(`/products/${randomUUID()}`)).statusCode, 404)
    assert.equal((await api.get(`/products/${randomUUID()}`)).statusCode, 404)
    assert.equal((await api.get('/products', 'ck_not-a-key')).statusCode, 401)
    const badBody = await api.post(`/products/${product.id}/variants`, { price: -1 })
    assert.equal(badBody.statusCode, 400, badBody.body)
    const variant = (await api.post(`/products/${product.id}/variants`, { name: 'M' })).json().data
    const variantPath = `/products/${product.id}/variants/${variant.id}`
    assert.equal((await api.patch(variantPath, { name: 'L' })).statusCode, 200)
    const stale = { headers: { 'if-match': '"99"' } }
    assert.equal((await api.patch(`/products/${product.id}`, { name: 'X' }, stale)).statusCode, 412)
    assert.equal((await api.get(variantPath)).statusCode, 200)
    assert.equal((await api.get(`/variants?sku=none`)).statusCode, 200)
    assert.equal((await api.delete(variantPath)).statusCode, 200)
    assert.equal((await api.delete(`/products/${product.id}`)).statusCode, 200)
    assert.equal((await api.get('/events?limit=2')).statusCode, 200)
    assert.equal((await api.get('/events?limit=0')).statusCode, 400)

    const metrics = await scrape(api.app)
    const expected: [string, string, number, number][] = [
      ['POST', `${API}/products`, 200, 2],
      ['GET', `${API}/products/:id`, 200, 1],
      ['GET', `${API}/products/:id`, 404, 2],
      ['GET', `${API}/products`, 401, 1],
      ['POST', `${API}/products/:id/variants`, 400, 1],
      ['PATCH', `${API}/products/:id/variants/:variantId`, 200, 1],
      ['PATCH', `${API}/products/:id`, 412, 1],
      ['GET', `${API}/products/:id/variants/:variantId`, 200, 1],
      ['GET', `${API}/variants`, 200, 1],
      ['DELETE', `${API}/products/:id/variants/:variantId`, 200, 1],
      ['DELETE', `${API}/products/:id`, 200, 1],
      ['GET', `${API}/events`, 200, 1],
      ['GET', `${API}/events`, 400, 1],
    ]
    for (const [method, route, status, count] of expected) {
      const label = `${method} ${route} ${status}`
      assert.equal(requestCount(metrics, method, route, status), count, label)
      const labels = { method, route, status_code: String(status) }
      assert.equal(valueOf(metrics, 'http_request_duration_seconds_count', labels), count, label)
      assert.ok(valueOf(metrics, 'http_request_duration_seconds_sum', labels) > 0, label)
      const buckets = metrics.samples
        .filter(
          (s) =>
            s.name === 'http_request_duration_seconds_bucket' &&
            Object.entries(labels).every(([k, v]) => s.labels[k] === v),
        )
        .sort((a, b) => Number(a.labels.le) - Number(b.labels.le))
      assert.ok(buckets.length > 5, `${label}: ${buckets.length} buckets`)
      assert.equal(buckets.at(-1)!.labels.le, '+Inf')
      assert.equal(buckets.at(-1)!.value, count, label)
      buckets.reduce((previous, bucket) => {
        assert.ok(bucket.value >= previous, `${label}: buckets are cumulative`)
        return bucket.value
      }, 0)
    }
    // No raw URL becomes a label: the product's id appears nowhere.
    assert.ok(
      metrics.samples.every((s) => !Object.values(s.labels).some((v) => v.includes(product.id))),
    )
  })

  it('requests to unknown routes share one label, whatever their URL', async (t) => {
    const api = await buildTestApi(t, dialect)
    for (let i = 0; i < 20; i++) {
      const response = await api.app.inject({ method: 'GET', url: `/nope-${i}?x=${i}` })
      assert.equal(response.statusCode, 404)
    }
    // Refused before routing: a malformed URL.
    assert.equal((await api.app.inject({ method: 'GET', url: '/%zz' })).statusCode, 404)
    assert.equal((await api.app.inject({ method: 'DELETE', url: '/nope' })).statusCode, 404)

    const metrics = await scrape(api.app)
    assert.equal(requestCount(metrics, 'GET', 'unmatched', 404), 21)
    assert.equal(requestCount(metrics, 'DELETE', 'unmatched', 404), 1)
    const routes = new Set(metrics.samples.map((s) => s.labels.route).filter(Boolean))
    assert.deepEqual([...routes].sort(), ['unmatched'])
  })

  it('GET /metrics counts itself under its own route', async (t) => {
    const api = await buildTestApi(t, dialect)
    await scrape(api.app)
    await scrape(api.app)
    assert.equal(requestCount(await scrape(api.app), 'GET', '/metrics', 200), 2)
  })

  it('each app counts only its own requests, even in one process', async (t) => {
    const first = await buildTestApi(t, dialect)
    const second = await buildTestApi(t, dialect)
    await first.createProduct({ name: 'Mug' })
    await first.createProduct({ name: 'Cup' })
    await second.createProduct({ name: 'Mug' })
    assert.equal(requestCount(await scrape(first.app), 'POST', `${API}/products`, 200), 2)
    assert.equal(requestCount(await scrape(second.app), 'POST', `${API}/products`, 200), 1)
  })

  if (dialect === 'sqlite') {
    it('SQLite group-commit batches: how many commits, and how many writes each held', async (t) => {
      const api = await buildTestApi(t, dialect)
      const before = await scrape(api.app)
      assert.equal(before.types.get('catalog_db_write_batch_size'), 'histogram')
      assert.equal(before.types.get('catalog_db_pool_connections'), undefined)
      const writes = 12
      const responses = await Promise.all(
        Array.from({ length: writes }, (_, i) => api.post('/products', { name: `Mug ${i}` })),
      )
      for (const response of responses) assert.equal(response.statusCode, 200, response.body)
      const after = await scrape(api.app)
      const delta = (name: string) => valueOf(after, name) - valueOf(before, name)
      assert.equal(delta('catalog_db_write_batch_size_sum'), writes)
      const commits = delta('catalog_db_write_batch_size_count')
      assert.ok(commits >= 1 && commits <= writes, `${commits} commits for ${writes} writes`)
      // Requests that arrive together share a commit.
      assert.ok(commits < writes, `${commits} commits for ${writes} concurrent writes`)
    })
  }

  if (dialect === 'postgres') {
    it('PostgreSQL pool figures: open, idle and waiting connections, and the pool size', async (t) => {
      const database = await createTestDatabase(t, dialect)
      const app = buildApp({ database })
      t.after(() => app.close())
      const idle = await scrape(app)
      assert.equal(idle.types.get('catalog_db_write_batch_size'), undefined)
      assert.equal(valueOf(idle, 'catalog_db_pool_max_connections'), 10)
      assert.equal(valueOf(idle, 'catalog_db_pool_waiting_queries'), 0)
      assert.ok(valueOf(idle, 'catalog_db_pool_connections') >= 1)

      // Hold every connection of the pool, and queue one more query behind them.
      const holders = await holdEveryConnection(t, database, 10)
      const queued = database.kysely.selectFrom('products').select('id').execute()
      const saturated = await waitFor(
        app,
        (m) => valueOf(m, 'catalog_db_pool_waiting_queries') >= 1,
      )
      assert.equal(valueOf(saturated, 'catalog_db_pool_connections'), 10)
      assert.equal(valueOf(saturated, 'catalog_db_pool_idle_connections'), 0)
      assert.equal(valueOf(saturated, 'catalog_db_pool_waiting_queries'), 1)
      holders.release()
      await queued
      const drained = await waitFor(
        app,
        (m) => valueOf(m, 'catalog_db_pool_idle_connections') === 10,
      )
      assert.equal(valueOf(drained, 'catalog_db_pool_waiting_queries'), 0)
    })

    it('PostgreSQL write retries, by reason: two writes that deadlock count one retry', async (t) => {
      const api = await buildTestApi(t, dialect)
      const before = await scrape(api.app)
      assert.equal(before.types.get('catalog_db_write_retries_total'), 'counter')
      for (const reason of ['deadlock_detected', 'serialization_failure'])
        assert.equal(valueOf(before, 'catalog_db_write_retries_total', { reason }), 0)
      const [a, b] = [
        await api.createProduct({ name: 'A' }),
        await api.createProduct({ name: 'B' }),
      ]
      // Each write locks one product, waits until the other holds its own, then locks the
      // other's: PostgreSQL aborts one, which is run again once the other commits.
      let arrived = 0
      let bothHold!: () => void
      const barrier = new Promise<void>((resolve) => (bothHold = resolve))
      const lockBoth = (first: string, second: string) =>
        api.database.write(async (tx) => {
          const lock = (id: string) =>
            tx.selectFrom('products').select('id').where('id', '=', id).forUpdate().execute()
          await lock(first)
          if (++arrived === 2) bothHold()
          await barrier
          await lock(second)
        })
      await Promise.all([lockBoth(a.id, b.id), lockBoth(b.id, a.id)])
      const after = await scrape(api.app)
      assert.equal(
        valueOf(after, 'catalog_db_write_retries_total', { reason: 'deadlock_detected' }),
        1,
      )
    })
  }
})

/** Takes `count` connections of the pool and keeps them until release() (or the test's end). */
async function holdEveryConnection(t: TestContext, database: Database, count: number) {
  let release!: () => void
  const released = new Promise<void>((resolve) => (release = resolve))
  t.after(() => release())
  let held = 0
  let allHeld!: () => void
  const everyOneHeld = new Promise<void>((resolve) => (allHeld = resolve))
  const holders = Array.from({ length: count }, () =>
    database.kysely.connection().execute(async () => {
      if (++held === count) allHeld()
      await released
    }),
  )
  await everyOneHeld
  return {
    release: () => {
      release()
      return Promise.all(holders)
    },
  }
}

/** Scrapes until the figures pass the check; fails after a generous time on a loaded machine. */
async function waitFor(
  app: FastifyInstance,
  check: (metrics: Exposition) => boolean,
): Promise<Exposition> {
  const deadline = Date.now() + 15_000
  for (;;) {
    const metrics = await scrape(app)
    if (check(metrics)) return metrics
    if (Date.now() > deadline) {
      const pool = metrics.samples.filter((s) => s.name.startsWith('catalog_db_pool'))
      throw new Error(`figures not reached: ${JSON.stringify(pool)}`)
    }
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

describeEachDialect('metrics token', (dialect) => {
  async function buildProtectedApp(t: TestContext, dialect: Dialect) {
    const database = await createTestDatabase(t, dialect)
    const app = buildApp({ database, metricsToken: 'metrics-token-0123456789' })
    t.after(() => app.close())
    const { key } = await createApiKey(database, { store: 'store-a', scopes: ['read', 'write'] })
    return { app, key }
  }

  function get(app: FastifyInstance, authorization?: string): Promise<LightMyRequestResponse> {
    return app.inject({
      method: 'GET',
      url: '/metrics',
      headers: authorization === undefined ? {} : { authorization },
    })
  }

  it('with METRICS_TOKEN set, GET /metrics without the token is 401 unauthorized, in the contract error shape', async (t) => {
    const { app, key } = await buildProtectedApp(t, dialect)
    for (const authorization of [
      undefined,
      '',
      'Bearer',
      'Bearer wrong-token',
      'Bearer metrics-token-012345678',
      'Bearer metrics-token-01234567890',
      `Bearer ${key}`,
      'Basic bWV0cmljczptZXRyaWNzLXRva2VuLTAxMjM0NTY3ODk=',
      'metrics-token-0123456789',
    ]) {
      const response = await get(app, authorization)
      const label = JSON.stringify(authorization)
      assert.equal(response.statusCode, 401, `${label}: ${response.body}`)
      expectError(response, 401, 'unauthorized')
      assert.deepEqual(Object.keys(response.json()).sort(), ['error', 'message'], label)
      assert.equal(response.headers['www-authenticate'], 'Bearer', label)
      assert.doesNotMatch(response.body, /http_requests_total|process_/, label)
    }
  })

  it('with METRICS_TOKEN set, GET /metrics with Authorization: Bearer <token> answers the metrics', async (t) => {
    const { app } = await buildProtectedApp(t, dialect)
    await get(app, 'Bearer wrong-token')
    for (const authorization of [
      'Bearer metrics-token-0123456789',
      'bearer metrics-token-0123456789',
    ]) {
      const metrics = await scrape(app, authorization)
      assert.equal(requestCount(metrics, 'GET', '/metrics', 401), 1)
    }
  })

  it('METRICS_TOKEN guards /metrics only: health checks and the API are as before', async (t) => {
    const { app, key } = await buildProtectedApp(t, dialect)
    assert.equal((await app.inject({ method: 'GET', url: '/healthz' })).statusCode, 200)
    assert.equal((await app.inject({ method: 'GET', url: '/readyz' })).statusCode, 200)
    const list = await app.inject({
      method: 'GET',
      url: `${API}/products`,
      headers: { authorization: `Bearer ${key}` },
    })
    assert.equal(list.statusCode, 200, list.body)
  })
})

describe('catalog serve metrics', () => {
  it('catalog serve with METRICS_TOKEN answers /metrics only to that bearer token', async (t) => {
    const server = await startServe(t, {
      DATABASE_URL: await databaseUrlFor(t, 'sqlite'),
      METRICS_TOKEN: 'metrics-token-0123456789',
    })
    const refused = await request(server, 'GET', '/metrics')
    assert.equal(refused.status, 401)
    assert.equal(refused.body.error, 'unauthorized')
    const answered = await request(server, 'GET', '/metrics', { key: 'metrics-token-0123456789' })
    assert.equal(answered.status, 200)
    const metrics = parseExposition(answered.body)
    assert.equal(requestCount(metrics, 'GET', '/metrics', 401), 1)
    assert.equal(requestCount(metrics, 'GET', '/healthz', 200), 1)
    assert.equal((await server.stop('SIGTERM')).code, 0)
  })
})
