// test:serial: times requests against Redis's 100 ms command timeout (bounds of 400-600 ms).
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { connect, createServer, type Server, type Socket } from 'node:net'
import { Writable } from 'node:stream'
import { describe, it, type TestContext } from 'node:test'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import { Redis } from 'ioredis'
import { buildApp, type AppOptions } from '../src/app.js'
import { createApiKey } from '../src/auth/api-key.service.js'
import type { Scope } from '../src/http/scopes.js'
import type { Database, Dialect } from '../src/db/database.js'
import { MemoryWindowCounter } from '../src/rate-limit/memory-counter.js'
import type { RateLimitOptions } from '../src/rate-limit/rate-limit.hook.js'
import { PAUSE_AFTER_FAILURE_MS } from '../src/rate-limit/redis-counter.js'
import { API, createTestDatabase, describeEachDialect, expectError } from './helpers.js'

/** The Redis server the shared-budget tests use (keys under a prefix of their own); unset, they are skipped. */
const REDIS_URL = process.env.TEST_REDIS_URL

/** A clock the test moves; it starts 15 s into a minute, so 45 s are left of the window. */
function testClock(): { now: () => number; advance(ms: number): void } {
  let time = Date.UTC(2026, 10, 22, 10, 0, 15)
  return { now: () => time, advance: (ms) => (time += ms) }
}

interface LimitedApi {
  app: FastifyInstance
  database: Database
  key: string
  newKey(scopes?: Scope[]): Promise<string>
  list(key?: string): Promise<LightMyRequestResponse>
}

/** The real app on a fresh database with the given rate limit; closed when the test ends. */
async function buildLimitedApi(
  t: TestContext,
  dialect: Dialect,
  rateLimit: RateLimitOptions,
  options: { database?: Database; logger?: AppOptions['logger'] } = {},
): Promise<LimitedApi> {
  const database = options.database ?? (await createTestDatabase(t, dialect))
  const app = buildApp({ database, rateLimit, logger: options.logger ?? false })
  t.after(() => app.close())
  const newKey = async (scopes: Scope[] = ['read', 'write']) =>
    (await createApiKey(database, { store: 'store-a', scopes })).key
  const key = await newKey()
  const list = (withKey = key) =>
    app.inject({
      method: 'GET',
      url: `${API}/products`,
      headers: { authorization: `Bearer ${withKey}` },
    })
  return { app, database, key, newKey, list }
}

/** The parameters of a RateLimit or RateLimit-Policy header of the one "default" policy. */
function policyParameters(value: unknown): Record<string, number> {
  assert.equal(typeof value, 'string', `header missing: ${String(value)}`)
  const [name, ...parameters] = (value as string).split(';')
  assert.equal(name, '"default"')
  return Object.fromEntries(
    parameters.map((parameter) => {
      const [key, number] = parameter.split('=')
      assert.match(number!, /^\d+$/, `${key} is not a whole number in ${String(value)}`)
      return [key!, Number(number)]
    }),
  )
}

function assertNoRateLimitHeaders(response: LightMyRequestResponse, label: string): void {
  for (const header of ['ratelimit', 'ratelimit-policy', 'retry-after']) {
    assert.equal(response.headers[header], undefined, `${label}: ${header} present`)
  }
}

describeEachDialect('rate limits', (dialect) => {
  it('answers 429 rate_limited past the budget, with Retry-After and the RateLimit headers', async (t) => {
    const clock = testClock()
    const api = await buildLimitedApi(t, dialect, { perMinute: 5, now: clock.now })
    for (let remaining = 4; remaining >= 0; remaining--) {
      const response = await api.list()
      assert.equal(response.statusCode, 200, response.body)
      assert.deepEqual(policyParameters(response.headers['ratelimit-policy']), { q: 5, w: 60 })
      assert.deepEqual(policyParameters(response.headers.ratelimit), { r: remaining, t: 45 })
      assert.equal(response.headers['retry-after'], undefined)
    }
    clock.advance(10_500)
    const refused = await api.list()
    expectError(refused, 429, 'rate_limited')
    assert.equal(refused.headers['content-type'], 'application/json; charset=utf-8')
    assert.equal(refused.headers['retry-after'], '35')
    assert.deepEqual(policyParameters(refused.headers['ratelimit-policy']), { q: 5, w: 60 })
    assert.deepEqual(policyParameters(refused.headers.ratelimit), { r: 0, t: 35 })
    assert.ok(refused.headers['x-request-id'])
    // Refused requests do nothing: a POST past the budget creates no product.
    const post = await api.app.inject({
      method: 'POST',
      url: `${API}/products`,
      headers: { authorization: `Bearer ${api.key}`, 'content-type': 'application/json' },
      payload: JSON.stringify({ name: 'Mug' }),
    })
    expectError(post, 429, 'rate_limited')
    clock.advance(35_000)
    const afterReset = await api.list()
    assert.equal(afterReset.statusCode, 200)
    assert.deepEqual(afterReset.json().data, [])
  })

  it('refuses with 429 before reading the body or checking the scope', async (t) => {
    const clock = testClock()
    const api = await buildLimitedApi(t, dialect, { perMinute: 1, now: clock.now })
    const readOnly = await api.newKey(['read'])
    const first = await api.list(readOnly)
    assert.equal(first.statusCode, 200)
    const post = await api.app.inject({
      method: 'POST',
      url: `${API}/products`,
      headers: { authorization: `Bearer ${readOnly}`, 'content-type': 'application/json' },
      payload: '{not json',
    })
    expectError(post, 429, 'rate_limited')
  })

  it('a request refused 403 counts against its key', async (t) => {
    const clock = testClock()
    const api = await buildLimitedApi(t, dialect, { perMinute: 3, now: clock.now })
    const readOnly = await api.newKey(['read'])
    for (let remaining = 2; remaining >= 0; remaining--) {
      const post = await api.app.inject({
        method: 'POST',
        url: `${API}/products`,
        headers: { authorization: `Bearer ${readOnly}`, 'content-type': 'application/json' },
        payload: JSON.stringify({ name: 'Mug' }),
      })
      expectError(post, 403, 'forbidden')
      assert.deepEqual(policyParameters(post.headers.ratelimit), { r: remaining, t: 45 })
    }
    expectError(await api.list(readOnly), 429, 'rate_limited')
  })

  it('requests refused 401 count against nobody and carry no RateLimit headers', async (t) => {
    const clock = testClock()
    const api = await buildLimitedApi(t, dialect, { perMinute: 2, now: clock.now })
    const unknownKey = `ck_${'A'.repeat(43)}`
    for (const authorization of [undefined, 'Basic abc', `Bearer ${unknownKey}`, 'Bearer']) {
      for (let i = 0; i < 5; i++) {
        const response = await api.app.inject({
          method: 'GET',
          url: `${API}/products`,
          headers: authorization === undefined ? {} : { authorization },
        })
        expectError(response, 401, 'unauthorized')
        assertNoRateLimitHeaders(response, String(authorization))
      }
    }
    const response = await api.list()
    assert.equal(response.statusCode, 200)
    assert.deepEqual(policyParameters(response.headers.ratelimit), { r: 1, t: 45 })
  })

  it('gives every key a budget of its own, also two keys of one store', async (t) => {
    const clock = testClock()
    const api = await buildLimitedApi(t, dialect, { perMinute: 2, now: clock.now })
    const other = await api.newKey()
    assert.equal((await api.list()).statusCode, 200)
    assert.equal((await api.list()).statusCode, 200)
    expectError(await api.list(), 429, 'rate_limited')
    const otherAnswer = await api.list(other)
    assert.equal(otherAnswer.statusCode, 200)
    assert.deepEqual(policyParameters(otherAnswer.headers.ratelimit), { r: 1, t: 45 })
  })

  it('puts the RateLimit headers on every answer of a limited route, errors included', async (t) => {
    const clock = testClock()
    const api = await buildLimitedApi(t, dialect, { perMinute: 100, now: clock.now })
    const headers = { authorization: `Bearer ${api.key}`, 'content-type': 'application/json' }
    const answers: [string, LightMyRequestResponse, number][] = [
      ['200', await api.list(), 200],
      [
        '404 product',
        await api.app.inject({
          method: 'GET',
          url: `${API}/products/0192a4a1-0000-7000-8000-000000000000`,
          headers,
        }),
        404,
      ],
      [
        '400 validation',
        await api.app.inject({ method: 'POST', url: `${API}/products`, headers, payload: '{}' }),
        400,
      ],
      [
        '400 invalid json',
        await api.app.inject({ method: 'POST', url: `${API}/products`, headers, payload: '{' }),
        400,
      ],
      [
        '415',
        await api.app.inject({
          method: 'POST',
          url: `${API}/products`,
          headers: { ...headers, 'content-type': 'text/plain' },
          payload: 'Mug',
        }),
        415,
      ],
    ]
    answers.forEach(([label, response, status], index) => {
      assert.equal(response.statusCode, status, `${label}: ${response.body}`)
      assert.deepEqual(policyParameters(response.headers['ratelimit-policy']), { q: 100, w: 60 })
      assert.deepEqual(policyParameters(response.headers.ratelimit), { r: 99 - index, t: 45 })
    })
  })

  it('does not limit the public routes: /healthz, /readyz, unknown routes', async (t) => {
    const clock = testClock()
    const api = await buildLimitedApi(t, dialect, { perMinute: 1, now: clock.now })
    assert.equal((await api.list()).statusCode, 200)
    expectError(await api.list(), 429, 'rate_limited')
    for (const url of ['/healthz', '/readyz', '/nowhere']) {
      for (let i = 0; i < 3; i++) {
        const response = await api.app.inject({
          method: 'GET',
          url,
          headers: { authorization: `Bearer ${api.key}` },
        })
        assert.notEqual(response.statusCode, 429, `${url}: ${response.body}`)
        assertNoRateLimitHeaders(response, url)
      }
    }
  })

  it('RATE_LIMIT_PER_MINUTE 0 turns rate limiting off: no limit, no headers', async (t) => {
    const api = await buildLimitedApi(t, dialect, { perMinute: 0 })
    for (let i = 0; i < 30; i++) {
      const response = await api.list()
      assert.equal(response.statusCode, 200)
      assertNoRateLimitHeaders(response, `request ${i}`)
    }
  })

  it('without options the app limits each key to 6000 requests a minute', async (t) => {
    const database = await createTestDatabase(t, dialect)
    const app = buildApp({ database })
    t.after(() => app.close())
    const { key } = await createApiKey(database, { store: 'store-a', scopes: ['read'] })
    const response = await app.inject({
      method: 'GET',
      url: `${API}/products`,
      headers: { authorization: `Bearer ${key}` },
    })
    assert.deepEqual(policyParameters(response.headers['ratelimit-policy']), { q: 6000, w: 60 })
    assert.equal(policyParameters(response.headers.ratelimit).r, 5999)
  })

  it('a new minute gives the full budget again', async (t) => {
    const clock = testClock()
    const api = await buildLimitedApi(t, dialect, { perMinute: 3, now: clock.now })
    for (let i = 0; i < 3; i++) assert.equal((await api.list()).statusCode, 200)
    const refused = await api.list()
    expectError(refused, 429, 'rate_limited')
    assert.equal(refused.headers['retry-after'], '45')
    clock.advance(44_999)
    const lastMillisecond = await api.list()
    expectError(lastMillisecond, 429, 'rate_limited')
    assert.equal(lastMillisecond.headers['retry-after'], '1')
    clock.advance(1)
    const next = await api.list()
    assert.equal(next.statusCode, 200)
    assert.deepEqual(policyParameters(next.headers.ratelimit), { r: 2, t: 60 })
  })
})

describe('rate limits in memory', () => {
  it('keep only the current window: the keys of a past minute are dropped', async () => {
    const counter = new MemoryWindowCounter()
    for (let i = 0; i < 10_000; i++) await counter.increment(`key-${i}`, 100)
    assert.equal(counter.size, 10_000)
    assert.equal(await counter.increment('key-1', 100), 2)
    assert.equal(await counter.increment('key-1', 101), 1)
    assert.equal(counter.size, 1)
  })
})

/** A key prefix of the test's own on the machine's Redis; its keys are deleted after the test. */
async function redisPrefix(t: TestContext): Promise<{ prefix: string; redis: Redis }> {
  const prefix = `catalog-test:${randomBytes(6).toString('hex')}:`
  if (!REDIS_URL) throw new Error('TEST_REDIS_URL is not set')
  const redis = new Redis(REDIS_URL)
  t.after(async () => {
    const keys = await redis.keys(`${prefix}*`)
    if (keys.length > 0) await redis.del(...keys)
    await redis.quit()
  })
  return { prefix, redis }
}

/** Log lines of an app, parsed. */
function logCollector(): { logs: Record<string, any>[]; logger: AppOptions['logger'] } {
  const logs: Record<string, any>[] = []
  const stream = new Writable({
    write(chunk, _encoding, done) {
      for (const line of chunk.toString().split('\n')) if (line.trim()) logs.push(JSON.parse(line))
      done()
    },
  })
  return { logs, logger: { level: 'warn', stream } }
}

/** Listens on a free loopback port until the test ends, then drops its connections. */
async function listenForTest(
  t: TestContext,
  server: Server,
  sockets: Set<Socket>,
): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.after(
    () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy()
        server.close(() => resolve())
      }),
  )
  const address = server.address()
  if (address === null || typeof address === 'string') throw new Error('no port')
  return address.port
}

/** A TCP server that accepts connections and never answers: a Redis that hangs. */
async function silentServer(t: TestContext): Promise<string> {
  const sockets = new Set<Socket>()
  const server: Server = createServer((socket) => {
    sockets.add(socket)
    socket.on('error', () => {})
  })
  return `redis://127.0.0.1:${await listenForTest(t, server, sockets)}`
}

/**
 * A TCP proxy to the machine's Redis that can be frozen: from then on it passes nothing either
 * way, as a Redis that hangs (or a network that drops packets) would.
 */
async function freezableProxy(t: TestContext): Promise<{ url: string; freeze(): void }> {
  let frozen = false
  const sockets = new Set<Socket>()
  const server: Server = createServer((client) => {
    const redisAddress = new URL(REDIS_URL!)
    const upstream = connect(Number(redisAddress.port || 6379), redisAddress.hostname)
    for (const socket of [client, upstream]) {
      sockets.add(socket)
      socket.on('error', () => {})
    }
    client.on('data', (chunk) => frozen || upstream.write(chunk))
    upstream.on('data', (chunk) => frozen || client.write(chunk))
  })
  const port = await listenForTest(t, server, sockets)
  return { url: `redis://127.0.0.1:${port}`, freeze: () => (frozen = true) }
}

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const address = server.address()
  await new Promise<void>((resolve) => server.close(() => resolve()))
  if (address === null || typeof address === 'string') throw new Error('no port')
  return address.port
}

const needsRedis = { skip: REDIS_URL ? false : 'TEST_REDIS_URL is not set' }

describeEachDialect('rate limits shared through Redis', (dialect) => {
  it('two instances with one REDIS_URL share one budget per key', needsRedis, async (t) => {
    const { prefix, redis } = await redisPrefix(t)
    const clock = testClock()
    // A generous timeout: a loaded machine must not make this test count locally.
    const rateLimit = {
      perMinute: 5,
      redisUrl: REDIS_URL,
      redisKeyPrefix: prefix,
      redisTimeoutMs: 2000,
      now: clock.now,
    }
    const first = await buildLimitedApi(t, dialect, rateLimit)
    const second = await buildLimitedApi(t, dialect, rateLimit, { database: first.database })
    const other = await first.newKey()
    const answers = []
    for (let i = 0; i < 3; i++) answers.push(await first.list(), await second.list(first.key))
    assert.deepEqual(
      answers.map((answer) => answer.statusCode),
      [200, 200, 200, 200, 200, 429],
    )
    assert.deepEqual(
      answers.map((answer) => policyParameters(answer.headers.ratelimit).r),
      [4, 3, 2, 1, 0, 0],
    )
    expectError(answers[5]!, 429, 'rate_limited')
    expectError(await first.list(), 429, 'rate_limited')
    assert.equal((await second.list(other)).statusCode, 200)
    assert.equal((await second.list()).statusCode, 200)
    // One key per API key and minute, under the prefix, expiring with the window.
    const keys = await redis.keys(`${prefix}*`)
    assert.equal(keys.length, 3)
    for (const key of keys) {
      assert.match(key, new RegExp(`^${prefix}[^:]+:${Math.floor(clock.now() / 60_000)}$`))
      const ttl = await redis.pttl(key)
      assert.ok(ttl > 0 && ttl <= 45_000, `ttl ${ttl}`)
    }
    clock.advance(45_000)
    assert.equal((await second.list(first.key)).statusCode, 200)
  })

  it(
    'when Redis stops answering, a request waits for it at most about 100 ms, then is counted in the instance',
    needsRedis,
    async (t) => {
      const { prefix, redis } = await redisPrefix(t)
      const proxy = await freezableProxy(t)
      const { logs, logger } = logCollector()
      const api = await buildLimitedApi(
        t,
        dialect,
        { perMinute: 100, redisUrl: proxy.url, redisKeyPrefix: prefix },
        { logger },
      )
      const countedInRedis = async () => {
        const keys = await redis.keys(`${prefix}*`)
        const counts = keys.length === 0 ? [] : await redis.mget(...keys)
        return counts.reduce((sum, count) => sum + Number(count), 0)
      }
      // Until the freeze, the instance counts in Redis. A stall of the loaded machine may time
      // a request's INCR out, which counts locally for the next PAUSE_AFTER_FAILURE_MS: retried
      // after that pause.
      let inRedis = 0
      for (let attempt = 0; attempt < 5 && inRedis === 0; attempt++) {
        if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, PAUSE_AFTER_FAILURE_MS))
        assert.equal((await api.list()).statusCode, 200)
        inRedis = await countedInRedis()
      }
      assert.ok(inRedis > 0, 'no request was counted in Redis')
      proxy.freeze()
      const started = performance.now()
      const response = await api.list()
      const waited = performance.now() - started
      assert.equal(response.statusCode, 200, response.body)
      assert.ok(waited >= 90, `answered in ${Math.round(waited)} ms: Redis was not asked`)
      assert.ok(waited < 600, `a request waited ${Math.round(waited)} ms for Redis`)
      assert.ok(response.headers.ratelimit, 'counted locally, with its headers')
      // The next ones do not wait for Redis again at once.
      const next = performance.now()
      for (let i = 0; i < 5; i++) assert.equal((await api.list()).statusCode, 200)
      const nextWaited = performance.now() - next
      assert.ok(nextWaited < 450, `5 more requests took ${Math.round(nextWaited)} ms`)
      assert.equal(await countedInRedis(), inRedis)
      assert.equal(logs.filter((line) => /Redis is unavailable/.test(line.msg)).length, 1)
    },
  )

  for (const [label, unreachableUrl] of [
    ['on a closed port', async () => `redis://127.0.0.1:${await closedPort()}`],
    ['that accepts connections but never answers', silentServer],
  ] as const) {
    it(`with Redis unreachable (${label}) requests are served at once, counted in the instance, and a warning is logged`, async (t) => {
      const clock = testClock()
      const { logs, logger } = logCollector()
      const api = await buildLimitedApi(
        t,
        dialect,
        { perMinute: 20, redisUrl: await unreachableUrl(t), now: clock.now },
        { logger },
      )
      await api.list() // warms the key cache, so that what is timed below is the limiter
      const slowest = { ms: 0 }
      for (let i = 1; i < 20; i++) {
        const started = performance.now()
        const response = await api.list()
        slowest.ms = Math.max(slowest.ms, performance.now() - started)
        assert.equal(response.statusCode, 200, response.body)
        assert.equal(policyParameters(response.headers.ratelimit).r, 19 - i)
      }
      // Redis's command timeout is 100 ms; the rest is margin for a loaded machine.
      assert.ok(slowest.ms < 400, `a request took ${Math.round(slowest.ms)} ms`)
      expectError(await api.list(), 429, 'rate_limited')
      const warnings = logs.filter((line) => /Redis is unavailable/.test(line.msg))
      assert.equal(warnings.length, 1, JSON.stringify(logs))
      assert.equal(warnings[0]!.level, 40)
    })
  }
})
