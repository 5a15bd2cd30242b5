import assert from 'node:assert/strict'
import { connect, type AddressInfo, type Socket } from 'node:net'
import { Writable } from 'node:stream'
import { it, type TestContext } from 'node:test'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../src/app.js'
import { createApiKey } from '../src/auth/api-key.service.js'
import type { Dialect } from '../src/db/database.js'
import { API, createTestDatabase, describeEachDialect } from './helpers.js'

type LogLine = Record<string, any>

/** The real app listening on a loopback port, its log lines kept. */
async function startLoggedServer(t: TestContext, dialect: Dialect) {
  const database = await createTestDatabase(t, dialect)
  let text = ''
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      text += chunk.toString()
      done()
    },
  })
  const app = buildApp({ database, logger: { level: 'debug', stream } })
  t.after(() => app.close())
  await app.listen({ host: '127.0.0.1', port: 0 })
  const { port } = app.server.address() as AddressInfo
  const { key } = await createApiKey(database, { store: 'store-a', scopes: ['read', 'write'] })
  const lines = (): LogLine[] =>
    text
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line))
  return { app, port, key, lines }
}

/** Waits until `check` holds, or fails after a time generous for a loaded machine. */
async function until<T>(what: string, check: () => T | undefined | Promise<T | undefined>) {
  const deadline = Date.now() + 15_000
  for (;;) {
    const value = await check()
    if (value !== undefined && value !== false) return value
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

/** The value of http_requests_total for these labels, 0 when it has no sample. */
async function requestsTotal(app: FastifyInstance, labels: Record<string, string>) {
  const response = await app.inject({ method: 'GET', url: '/metrics' })
  const wanted = Object.entries(labels)
  for (const line of response.body.split('\n')) {
    if (!line.startsWith('http_requests_total{')) continue
    const text = line.slice(line.indexOf('{') + 1, line.lastIndexOf('}'))
    if (wanted.every(([name, value]) => text.includes(`${name}="${value}"`))) {
      return Number(line.slice(line.lastIndexOf(' ') + 1))
    }
  }
  return 0
}

/** Opens a socket and sends the head of a request whose body is cut short. */
async function startCutRequest(port: number, key: string, requestId: string): Promise<Socket> {
  const socket = connect(port, '127.0.0.1')
  await new Promise((resolve, reject) => socket.once('connect', resolve).once('error', reject))
  socket.write(
    `POST ${API}/products HTTP/1.1\r\n` +
      'Host: 127.0.0.1\r\n' +
      `Authorization: Bearer ${key}\r\n` +
      'Content-Type: application/json\r\n' +
      'Content-Length: 1000\r\n' +
      `X-Request-Id: ${requestId}\r\n\r\n` +
      '{"name": "Half a ',
  )
  return socket
}

describeEachDialect('requests whose client goes away', (dialect) => {
  it('a request whose connection closes before its answer is counted as aborted by route and logged at info with its id', async (t) => {
    const { app, port, key, lines } = await startLoggedServer(t, dialect)
    const socket = await startCutRequest(port, key, 'gone-1')
    // The request has arrived (Fastify logs it at debug) and waits for the rest of its body.
    await until('the request to arrive', () =>
      lines().some((line) => line.reqId === 'gone-1' && line.msg === 'incoming request'),
    )
    socket.destroy()

    const labels = { method: 'POST', route: `${API}/products`, status_code: 'aborted' }
    await until('the aborted count', async () => (await requestsTotal(app, labels)) === 1)
    const logged = await until('the log line', () =>
      lines().find((line) => line.reqId === 'gone-1' && line.status === 'aborted'),
    )
    assert.equal(logged.level, 30, 'at info')
    assert.equal(logged.route, `${API}/products`)
    assert.equal(logged.method, 'POST')
    assert.equal(typeof logged.latencyMs, 'number')
    assert.match(logged.msg, /aborted/)
    // Only once, and never also counted as answered.
    await new Promise((resolve) => setTimeout(resolve, 200))
    assert.equal(lines().filter((line) => line.reqId === 'gone-1' && 'status' in line).length, 1)
    assert.equal(await requestsTotal(app, labels), 1)
    const answered = lines().filter((line) => line.reqId === 'gone-1' && line.msg === 'request')
    assert.deepEqual(answered, [])
    // The client went away: nothing says the database did, nor logs a warning for it.
    const warned = lines().filter((line) => line.reqId === 'gone-1' && line.level >= 40)
    assert.deepEqual(warned, [])
    // No product was made from half a body.
    const list = await app.inject({
      method: 'GET',
      url: `${API}/products`,
      headers: { authorization: `Bearer ${key}` },
    })
    assert.deepEqual(list.json().data, [])
  })

  it('requests answered over a real connection that then closes are not counted as aborted', async (t) => {
    const { app, port, key, lines } = await startLoggedServer(t, dialect)
    for (let i = 0; i < 3; i++) {
      const response = await fetch(`http://127.0.0.1:${port}${API}/products`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${key}`,
          'content-type': 'application/json',
          'x-request-id': `kept-${i}`,
          connection: 'close',
        },
        body: JSON.stringify({ name: `Mug ${i}` }),
      })
      assert.equal(response.status, 200)
    }
    const route = `${API}/products`
    await until('the answered count', async () => {
      const count = await requestsTotal(app, { method: 'POST', route, status_code: '200' })
      return count === 3
    })
    assert.equal(await requestsTotal(app, { route, status_code: 'aborted' }), 0)
    assert.equal(lines().filter((line) => line.status === 'aborted').length, 0)
  })
})
