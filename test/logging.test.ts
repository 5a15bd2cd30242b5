import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { Writable } from 'node:stream'
import { it, type TestContext } from 'node:test'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import { sql } from 'kysely'
import { buildApp } from '../src/app.js'
import { createApiKey } from '../src/auth/api-key.service.js'
import type { Database, Dialect } from '../src/db/database.js'
import { API, createTestDatabase, describeEachDialect } from './helpers.js'
import {
  createKey,
  databaseUrlFor,
  request as httpRequest,
  SECRET_PATTERN,
  startServe,
} from './process-helpers.js'

type LogLine = Record<string, any>

/** Whatever the app logs, as text and as parsed JSON lines. */
function captureLog() {
  let text = ''
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      text += chunk.toString()
      done()
    },
  })
  const lines = (): LogLine[] =>
    text
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line))
  return { stream, text: () => text, lines }
}

interface LoggedApi {
  app: FastifyInstance
  database: Database
  key: string
  keyId: string
  readKey: string
  readKeyId: string
  log: ReturnType<typeof captureLog>
  send(options: {
    method?: 'GET' | 'POST' | 'PATCH' | 'DELETE'
    url: string
    key?: string | null
    authorization?: string
    requestId?: string
    body?: unknown
  }): Promise<LightMyRequestResponse>
}

async function buildLoggedApi(
  t: TestContext,
  dialect: Dialect,
  level: 'info' | 'debug' | 'trace' = 'info',
): Promise<LoggedApi> {
  const database = await createTestDatabase(t, dialect)
  const log = captureLog()
  const app = buildApp({ database, logger: { level, stream: log.stream } })
  t.after(() => app.close())
  const writer = await createApiKey(database, { store: 'store-a', scopes: ['read', 'write'] })
  const reader = await createApiKey(database, { store: 'store-a', scopes: ['read'] })
  const send: LoggedApi['send'] = (options) => {
    const headers: Record<string, string> = {}
    const key = options.key === undefined ? writer.key : options.key
    if (options.authorization !== undefined) headers.authorization = options.authorization
    else if (key !== null) headers.authorization = `Bearer ${key}`
    if (options.requestId !== undefined) headers['x-request-id'] = options.requestId
    if (options.body !== undefined) headers['content-type'] = 'application/json'
    return app.inject({
      method: options.method ?? 'GET',
      url: options.url,
      headers,
      ...(options.body === undefined ? {} : { payload: JSON.stringify(options.body) }),
    })
  }
  return {
    app,
    database,
    key: writer.key,
    keyId: writer.id,
    readKey: reader.key,
    readKeyId: reader.id,
    log,
    send,
  }
}

/** The lines logged under the request id a response carries. */
function linesOf(api: LoggedApi, response: LightMyRequestResponse): LogLine[] {
  const id = response.headers['x-request-id']
  assert.equal(typeof id, 'string', 'X-Request-Id')
  return api.log.lines().filter((line) => line.reqId === id)
}

/** The one request line of a response, checked against what the client saw. */
function requestLineOf(api: LoggedApi, response: LightMyRequestResponse): LogLine {
  const lines = linesOf(api, response).filter((line) => line.msg === 'request')
  assert.equal(lines.length, 1, `request lines for ${response.headers['x-request-id']}`)
  const line = lines[0]!
  assert.equal(line.level, 30, 'logged at info')
  assert.equal(line.status, response.statusCode)
  assert.equal(typeof line.latencyMs, 'number')
  assert.ok(line.latencyMs >= 0 && line.latencyMs < 60_000, `latencyMs ${line.latencyMs}`)
  return line
}

const BOGUS_KEY = `ck_${'Z'.repeat(43)}`

describeEachDialect('request logs', (dialect) => {
  it('one JSON line per request, at info: request id, method, route, path, status, latency, store and key id', async (t) => {
    const api = await buildLoggedApi(t, dialect)
    const created = await api.send({
      method: 'POST',
      url: `${API}/products`,
      body: { name: 'Mug' },
      requestId: 'create-1',
    })
    assert.equal(created.statusCode, 200, created.body)
    assert.equal(created.headers['x-request-id'], 'create-1')
    const id = created.json().data.id
    const cases: [LightMyRequestResponse, Record<string, unknown>][] = [
      [
        created,
        {
          reqId: 'create-1',
          method: 'POST',
          route: `${API}/products`,
          path: `${API}/products`,
          store: 'store-a',
          keyId: api.keyId,
        },
      ],
      [
        await api.send({ url: `${API}/products/${id}`, key: api.readKey }),
        {
          method: 'GET',
          route: `${API}/products/:id`,
          path: `${API}/products/${id}`,
          store: 'store-a',
          keyId: api.readKeyId,
        },
      ],
      [
        await api.send({ url: `${API}/products?limit=5&status=active` }),
        { method: 'GET', route: `${API}/products`, path: `${API}/products`, keyId: api.keyId },
      ],
      [
        await api.send({ url: `${API}/products`, key: null }),
        { route: `${API}/products`, status: 401, store: undefined, keyId: undefined },
      ],
      [
        await api.send({
          method: 'POST',
          url: `${API}/products`,
          key: api.readKey,
          body: { name: 'Cup' },
        }),
        { route: `${API}/products`, status: 403, store: 'store-a', keyId: api.readKeyId },
      ],
      [
        await api.send({ url: `${API}/products/${randomUUID()}` }),
        { route: `${API}/products/:id`, status: 404, keyId: api.keyId },
      ],
      [
        await api.send({
          method: 'PATCH',
          url: `${API}/products/${id}`,
          body: { name: 'Big Mug' },
        }),
        { method: 'PATCH', route: `${API}/products/:id`, status: 200, keyId: api.keyId },
      ],
      [
        await api.send({ method: 'DELETE', url: `${API}/products/${id}`, key: api.readKey }),
        { method: 'DELETE', route: `${API}/products/:id`, status: 403, keyId: api.readKeyId },
      ],
      [
        await api.send({ url: `${API}/events?limit=5&type=product.updated`, key: api.readKey }),
        {
          method: 'GET',
          route: `${API}/events`,
          path: `${API}/events`,
          status: 200,
          store: 'store-a',
          keyId: api.readKeyId,
        },
      ],
      [
        await api.send({ url: '/no/such/route', key: null }),
        { route: 'unmatched', path: '/no/such/route', status: 404, keyId: undefined },
      ],
      [
        await api.send({ url: '/%zz', key: null }),
        { route: 'unmatched', status: 404, keyId: undefined },
      ],
      [
        await api.send({ url: '/healthz', key: null }),
        { route: '/healthz', status: 200, keyId: undefined },
      ],
    ]
    for (const [response, expected] of cases) {
      const line = requestLineOf(api, response)
      for (const [field, value] of Object.entries(expected)) {
        assert.equal(line[field], value, `${field} of ${JSON.stringify(line)}`)
      }
    }
    // Nothing else: Fastify's own "incoming request" and "request completed" lines are gone.
    assert.equal(api.log.lines().length, cases.length, api.log.text())
  })

  it('at debug, a request is also logged when it arrives, before its answer, under the same request id', async (t) => {
    const api = await buildLoggedApi(t, dialect, 'debug')
    const response = await api.send({ url: `${API}/products?limit=5`, requestId: 'arrive-1' })
    assert.equal(response.statusCode, 200, response.body)
    const lines = linesOf(api, response)
    assert.deepEqual(
      lines.map((line) => [line.level, line.msg]),
      [
        [20, 'incoming request'],
        [30, 'request'],
      ],
    )
    assert.equal(lines[0]!.method, 'GET')
    assert.equal(lines[0]!.path, `${API}/products`)
  })

  it('the request id in the log is the X-Request-Id of the response; an insane one is never logged', async (t) => {
    const api = await buildLoggedApi(t, dialect)
    const insane = ['has spaces', '<script>alert(1)</script>', 'x'.repeat(200)]
    for (const requestId of insane) {
      const response = await api.send({ url: `${API}/products`, requestId })
      assert.notEqual(response.headers['x-request-id'], requestId)
      requestLineOf(api, response)
    }
    const generated = await api.send({ url: `${API}/products` })
    requestLineOf(api, generated)
    const text = api.log.text()
    for (const requestId of insane) assert.ok(!text.includes(requestId), requestId)
    const ids = new Set(api.log.lines().map((line) => line.reqId))
    assert.equal(ids.size, insane.length + 1, 'one request id per request')
  })

  it('a 500 is logged at error, with its error, under the request id of its response and request line', async (t) => {
    const api = await buildLoggedApi(t, dialect)
    const created = await api.send({
      method: 'POST',
      url: `${API}/products`,
      body: { name: 'Mug' },
    })
    const id = created.json().data.id
    await sql`drop table variants`.execute(api.database.kysely)
    for (const requestId of ['trace-500', undefined]) {
      const response = await api.send({
        url: `${API}/products/${id}`,
        ...(requestId === undefined ? {} : { requestId }),
      })
      assert.equal(response.statusCode, 500, response.body)
      if (requestId !== undefined) assert.equal(response.headers['x-request-id'], requestId)
      const lines = linesOf(api, response)
      assert.equal(lines.length, 2, JSON.stringify(lines))
      const failure = lines.find((line) => line.msg === 'request failed')
      assert.ok(failure, JSON.stringify(lines))
      assert.equal(failure.level, 50, 'logged at error')
      assert.match(failure.err?.message ?? '', /variants/, 'the error itself is logged')
      assert.equal(typeof failure.err?.stack, 'string')
      const line = requestLineOf(api, response)
      assert.equal(line.route, `${API}/products/:id`)
      assert.equal(line.keyId, api.keyId)
    }
  })

  it('a 503 (database gone) is logged at warn under the request id of its response and request line', async (t) => {
    const api = await buildLoggedApi(t, dialect)
    await api.database.close()
    const response = await api.send({ url: `${API}/products`, requestId: 'trace-503' })
    assert.equal(response.statusCode, 503, response.body)
    const lines = linesOf(api, response)
    assert.equal(lines.length, 2, JSON.stringify(lines))
    const warning = lines.find((line) => line.msg === 'database unavailable')
    assert.equal(warning?.level, 40, JSON.stringify(lines))
    assert.equal(requestLineOf(api, response).status, 503)
  })

  it('the secret key, a bogus key and the Authorization header never appear in the log, even at trace', async (t) => {
    const api = await buildLoggedApi(t, dialect, 'trace')
    const responses: LightMyRequestResponse[] = []
    const created = await api.send({
      method: 'POST',
      url: `${API}/products`,
      body: { name: 'Mug' },
    })
    const id = created.json().data.id
    responses.push(
      created,
      await api.send({
        method: 'POST',
        url: `${API}/products/${id}/variants`,
        body: { name: 'M' },
      }),
      await api.send({ url: `${API}/products/${id}`, key: api.readKey }),
      await api.send({ url: `${API}/products?limit=1` }),
      await api.send({ url: `${API}/products`, key: BOGUS_KEY }),
      await api.send({ url: `${API}/products`, authorization: `Basic ${api.key}` }),
      await api.send({ url: `${API}/products`, authorization: `Bearer ${api.key} extra` }),
      await api.send({
        method: 'POST',
        url: `${API}/products`,
        key: api.readKey,
        body: { name: 'Cup' },
      }),
      await api.send({ method: 'POST', url: `${API}/products`, body: { price: -1 } }),
      await api.send({ url: '/nope' }),
    )
    await sql`drop table variants`.execute(api.database.kysely)
    responses.push(await api.send({ url: `${API}/products/${id}` }))
    await api.database.close()
    responses.push(await api.send({ url: `${API}/products` }))
    assert.deepEqual(
      responses.map((response) => response.statusCode),
      [200, 200, 200, 200, 401, 401, 401, 403, 400, 404, 500, 503],
    )
    for (const response of responses) requestLineOf(api, response)

    const log = api.log.text()
    for (const secret of [api.key, api.readKey, BOGUS_KEY]) {
      assert.ok(!log.includes(secret), 'a key is in the log')
      // Nor any long part of one.
      assert.ok(!log.includes(secret.slice(3, 20)), 'part of a key is in the log')
    }
    assert.doesNotMatch(log, /authorization/i)
    assert.doesNotMatch(log, /ck_/)
  })
})

describeEachDialect('catalog serve logs', (dialect) => {
  it('a run of catalog serve logs one JSON line per request, and neither the key it used nor the Authorization header', async (t) => {
    const databaseUrl = await databaseUrlFor(t, dialect)
    const { key } = await createKey(databaseUrl, 'store-a')
    const server = await startServe(t, { DATABASE_URL: databaseUrl, LOG_LEVEL: 'trace' })
    const created = await httpRequest(server, 'POST', `${API}/products`, {
      key,
      body: { name: 'Mug' },
    })
    assert.equal(created.status, 200, JSON.stringify(created.body))
    const listed = await httpRequest(server, 'GET', `${API}/products`, { key })
    assert.equal(listed.status, 200)
    const refused = await httpRequest(server, 'GET', `${API}/products`, { key: BOGUS_KEY })
    assert.equal(refused.status, 401)
    assert.equal((await server.stop('SIGTERM')).code, 0)

    const stdout = server.stdout()
    const lines: LogLine[] = stdout
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line))
    for (const [response, status] of [
      [created, 200],
      [listed, 200],
      [refused, 401],
    ] as const) {
      const requestLines = lines.filter(
        (line) => line.msg === 'request' && line.reqId === response.headers['x-request-id'],
      )
      assert.equal(requestLines.length, 1, stdout)
      assert.equal(requestLines[0]!.status, status)
    }
    const output = stdout + server.stderr()
    assert.ok(!output.includes(key), 'the key is in the output')
    assert.ok(!output.includes(BOGUS_KEY), 'the bogus key is in the output')
    assert.doesNotMatch(output, SECRET_PATTERN)
    assert.doesNotMatch(output, /authorization/i)
  })
})
