// test:serial: times the server's timeouts (headers, request, keep-alive).
import assert from 'node:assert/strict'
import { connect, type Socket } from 'node:net'
import { describe, it, type TestContext } from 'node:test'
import { ConfigError, loadConfig } from '../src/config.js'
import type { Dialect } from '../src/db/database.js'
import { startServer, type RunningServer } from '../src/server.js'
import { API, createTestSchema, describeEachDialect } from './helpers.js'

/** Room for a loaded machine: an answer may come this much later than its timeout. */
const LATE_MS = 3000

/**
 * The real server, as `catalog serve` starts it from these settings, on a port of its own
 * (listening on a socket, unlike app.inject, so that timeouts and Node's limits apply).
 */
async function startWith(
  t: TestContext,
  dialect: Dialect,
  settings: Record<string, string>,
): Promise<RunningServer & { key: string; port: number }> {
  const databaseUrl = dialect === 'sqlite' ? 'sqlite::memory:' : await createTestSchema(t)
  const server = await startServer(
    loadConfig({ DATABASE_URL: databaseUrl, PORT: '0', LOG_LEVEL: 'silent', ...settings }),
  )
  t.after(() => server.close())
  return { ...server, key: server.firstKey!.key, port: Number(new URL(server.url).port) }
}

interface Exchange {
  /** Everything the server sent before it closed the connection. */
  text: string
  /** Milliseconds from the first byte written to the close. */
  afterMs: number
}

/**
 * Opens a raw connection, lets `talk` write on it (slowly, if it likes), and resolves with what
 * came back once the server has closed it. Fails if the server keeps it open for 30 s.
 */
function exchange(port: number, talk: (socket: Socket) => void): Promise<Exchange> {
  return new Promise((resolve, reject) => {
    let text = ''
    let started = 0
    const socket = connect(port, '127.0.0.1', () => {
      started = performance.now()
      talk(socket)
    })
    const guard = setTimeout(() => {
      socket.destroy()
      reject(new Error(`the server kept the connection open; it sent ${JSON.stringify(text)}`))
    }, 30_000)
    socket.setEncoding('utf8')
    socket.on('data', (chunk: string) => (text += chunk))
    socket.on('error', () => {})
    socket.on('close', () => {
      clearTimeout(guard)
      resolve({ text, afterMs: performance.now() - started })
    })
  })
}

/** Writes `chunk` every `everyMs` until the connection closes. */
function trickle(socket: Socket, chunk: string, everyMs: number): void {
  const timer = setInterval(() => {
    if (socket.writable) socket.write(chunk)
    else clearInterval(timer)
  }, everyMs)
  socket.on('close', () => clearInterval(timer))
}

/** Parses a raw HTTP answer: status, headers (lower-case names) and the JSON body. */
function parseAnswer(text: string): {
  status: number
  headers: Record<string, string>
  body: any
} {
  const [head, body] = text.split('\r\n\r\n', 2) as [string, string | undefined]
  const [statusLine, ...lines] = head.split('\r\n')
  const status = Number(/^HTTP\/1\.1 (\d{3}) /.exec(statusLine ?? '')?.[1])
  const headers = Object.fromEntries(
    lines.map((line) => {
      const colon = line.indexOf(':')
      return [line.slice(0, colon).toLowerCase(), line.slice(colon + 1).trim()]
    }),
  )
  return { status, headers, body: body ? JSON.parse(body) : undefined }
}

/** Asserts a contract error answer: status, code, a message, JSON, an X-Request-Id, closed. */
function assertErrorAnswer(text: string, status: number, code: string): void {
  const answer = parseAnswer(text)
  assert.equal(answer.status, status, text)
  assert.equal(answer.body?.error, code, text)
  assert.equal(typeof answer.body.message, 'string')
  assert.match(answer.headers['content-type'] ?? '', /^application\/json/)
  assert.ok(answer.headers['x-request-id'], text)
  assert.equal(answer.headers.connection, 'close')
}

function assertWithin(afterMs: number, fromMs: number, toMs: number, what: string): void {
  assert.ok(
    afterMs >= fromMs && afterMs <= toMs,
    `${what} after ${Math.round(afterMs)} ms, not within ${fromMs} to ${toMs} ms`,
  )
}

// Timeouts and header limits act on the connection before any database is involved: once is
// enough, on SQLite.
describe('timeouts and header limits', () => {
  it('a client that trickles its body is cut off at REQUEST_TIMEOUT_MS with 408 request_timeout', async (t) => {
    const server = await startWith(t, 'sqlite', { REQUEST_TIMEOUT_MS: '1500' })
    const result = await exchange(server.port, (socket) => {
      socket.write(
        `POST ${API}/products HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${server.key}\r\n` +
          'Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"name":"',
      )
      trickle(socket, 'a', 100)
    })
    assertErrorAnswer(result.text, 408, 'request_timeout')
    assertWithin(result.afterMs, 1400, 1500 + LATE_MS, 'answered')
    const list = await fetch(`${server.url}${API}/products`, {
      headers: { authorization: `Bearer ${server.key}` },
    })
    assert.deepEqual(((await list.json()) as any).data, [])
  })

  it('a client that trickles its headers is cut off at HEADERS_TIMEOUT_MS with 408 request_timeout', async (t) => {
    const server = await startWith(t, 'sqlite', { HEADERS_TIMEOUT_MS: '800' })
    const result = await exchange(server.port, (socket) => {
      socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ')
      trickle(socket, 'a', 100)
    })
    assertErrorAnswer(result.text, 408, 'request_timeout')
    assertWithin(result.afterMs, 700, 800 + LATE_MS, 'answered')
  })

  it('a connection that sends nothing is answered 408 at HEADERS_TIMEOUT_MS', async (t) => {
    const server = await startWith(t, 'sqlite', { HEADERS_TIMEOUT_MS: '800' })
    const result = await exchange(server.port, () => {})
    assertErrorAnswer(result.text, 408, 'request_timeout')
    assertWithin(result.afterMs, 700, 800 + LATE_MS, 'answered')
  })

  it('a connection silent mid-request for CONNECTION_TIMEOUT_MS is closed', async (t) => {
    const server = await startWith(t, 'sqlite', { CONNECTION_TIMEOUT_MS: '800' })
    const result = await exchange(server.port, (socket) => {
      socket.write(
        `POST ${API}/products HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${server.key}\r\n` +
          'Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{',
      )
    })
    assert.equal(result.text, '')
    assertWithin(result.afterMs, 700, 800 + LATE_MS, 'closed')
  })

  it('an idle keep-alive connection is closed after KEEP_ALIVE_TIMEOUT_MS', async (t) => {
    const server = await startWith(t, 'sqlite', { KEEP_ALIVE_TIMEOUT_MS: '2000' })
    const result = await exchange(server.port, (socket) => {
      socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n')
    })
    const answer = parseAnswer(result.text)
    assert.equal(answer.status, 200)
    assert.equal(answer.headers['keep-alive'], 'timeout=2')
    // Node closes a second after the advertised timeout, so that a client that trusts it is
    // never caught sending on a connection being closed.
    assertWithin(result.afterMs, 1900, 3000 + LATE_MS, 'closed')
  })

  it('headers over HEADER_LIMIT_BYTES are 431 headers_too_large; under it they are served', async (t) => {
    const server = await startWith(t, 'sqlite', { HEADER_LIMIT_BYTES: '4096' })
    const over = await exchange(server.port, (socket) => {
      socket.write(`GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(5000)}\r\n\r\n`)
    })
    assertErrorAnswer(over.text, 431, 'headers_too_large')
    const under = await fetch(`${server.url}/healthz`, { headers: { 'x-big': 'a'.repeat(3000) } })
    assert.equal(under.status, 200)
  })

  it('the header limit is 16 KiB unless set', async (t) => {
    const server = await startWith(t, 'sqlite', {})
    const under = await fetch(`${server.url}/healthz`, { headers: { 'x-big': 'a'.repeat(15_000) } })
    assert.equal(under.status, 200)
    const over = await exchange(server.port, (socket) => {
      socket.write(`GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(17_000)}\r\n\r\n`)
    })
    assertErrorAnswer(over.text, 431, 'headers_too_large')
  })

  it('what is not HTTP is 400 bad_request', async (t) => {
    const server = await startWith(t, 'sqlite', {})
    const result = await exchange(server.port, (socket) => socket.write('HELLO\r\n\r\n'))
    assertErrorAnswer(result.text, 400, 'bad_request')
  })
})

describeEachDialect('body size limit', (dialect) => {
  it('a body over BODY_LIMIT_BYTES is 413 payload_too_large and creates nothing', async (t) => {
    const server = await startWith(t, dialect, { BODY_LIMIT_BYTES: '2048' })
    const post = (description: string) =>
      fetch(`${server.url}${API}/products`, {
        method: 'POST',
        headers: { authorization: `Bearer ${server.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'Mug', description }),
      })
    const over = await post('x'.repeat(2100))
    assert.equal(over.status, 413)
    assert.equal(((await over.json()) as any).error, 'payload_too_large')
    const under = await post('x'.repeat(1900))
    assert.equal(under.status, 200)
    const list = await fetch(`${server.url}${API}/products`, {
      headers: { authorization: `Bearer ${server.key}` },
    })
    assert.equal(((await list.json()) as any).data.length, 1)
  })
})

describe('limit settings', () => {
  it('have defaults: 30 s request, 10 s headers, 60 s connection, 72 s keep-alive, 16 KiB headers', () => {
    const config = loadConfig({})
    assert.equal(config.requestTimeoutMs, 30_000)
    assert.equal(config.headersTimeoutMs, 10_000)
    assert.equal(config.connectionTimeoutMs, 60_000)
    assert.equal(config.keepAliveTimeoutMs, 72_000)
    assert.equal(config.headerLimit, 16_384)
    assert.equal(config.rateLimitPerMinute, 6000)
  })

  it('keep the headers timeout within the request timeout', () => {
    assert.equal(loadConfig({ REQUEST_TIMEOUT_MS: '5000' }).headersTimeoutMs, 5000)
    assert.throws(
      () => loadConfig({ REQUEST_TIMEOUT_MS: '5000', HEADERS_TIMEOUT_MS: '6000' }),
      ConfigError,
    )
  })

  it('refuse what is not a whole number in range', () => {
    for (const [name, value] of [
      ['HEADERS_TIMEOUT_MS', '0'],
      ['CONNECTION_TIMEOUT_MS', '0'],
      ['KEEP_ALIVE_TIMEOUT_MS', '1.5'],
      ['HEADER_LIMIT_BYTES', '100'],
      ['RATE_LIMIT_PER_MINUTE', '-1'],
    ] as const) {
      assert.throws(() => loadConfig({ [name]: value }), ConfigError, `${name}=${value}`)
    }
  })
})
