// test:serial: times an attempt's timeout (290 ms to 2 s).
import assert from 'node:assert/strict'
import { execFile, execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import http from 'node:http'
import https from 'node:https'
import type { AddressInfo, LookupFunction } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { describe, it, type TestContext } from 'node:test'
import { Webhook } from 'standardwebhooks'
import {
  createGuardedLookup,
  ForbiddenAddressError,
  type ResolvedAddress,
  type Resolver,
} from '../src/webhooks/address-guard.js'
import { createSender, type SenderOptions } from '../src/webhooks/sender.js'
import { createThreadSender } from '../src/webhooks/sender-thread.js'
import { newWebhookSecret } from '../src/webhooks/signature.js'
import { webhookUrlProblem } from '../src/webhooks/webhook-url.js'

interface Received {
  method: string
  url: string
  headers: http.IncomingHttpHeaders
  body: string
}

/** A receiver on a loopback port of its own, answering with `handler`; records what it got. */
async function startReceiver(
  t: TestContext,
  handler: (request: Received, response: http.ServerResponse) => void = (_, response) =>
    response.writeHead(200).end('ok'),
  tls?: { key: string; cert: string },
): Promise<{ port: number; received: Received[] }> {
  const received: Received[] = []
  const listener = (request: http.IncomingMessage, response: http.ServerResponse) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      const got = {
        method: request.method!,
        url: request.url!,
        headers: request.headers,
        body: Buffer.concat(chunks).toString(),
      }
      received.push(got)
      handler(got, response)
    })
  }
  const server = tls ? https.createServer(tls, listener) : http.createServer(listener)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.after(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  )
  return { port: (server.address() as AddressInfo).port, received }
}

/** A port nothing listens on: one a server had, closed again. */
async function closedPort(): Promise<number> {
  const server = http.createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}

/** A resolver with a fixed table; every name it is asked is recorded. */
function tableResolver(table: Record<string, ResolvedAddress[]>): Resolver & { asked: string[] } {
  const asked: string[] = []
  const resolve = async (hostname: string) => {
    asked.push(hostname)
    const found = table[hostname]
    if (found === undefined) throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' })
    return found
  }
  return Object.assign(resolve, { asked })
}

const LOOPBACK: ResolvedAddress[] = [{ address: '127.0.0.1', family: 4 }]
const PUBLIC: ResolvedAddress = { address: '93.184.215.14', family: 4 }

function sender(t: TestContext, options: Partial<SenderOptions> = {}) {
  const made = createSender({ timeoutMs: 5000, allowPrivate: true, ...options })
  t.after(() => made.close())
  return made
}

const attempt = (url: string, body = '{"id":"evt_1","type":"product.created"}') => ({
  url,
  secret: newWebhookSecret(),
  id: 'evt_1',
  body,
})

function lookupOnce(
  lookup: LookupFunction,
  hostname: string,
  options: { all?: boolean; family?: number },
): Promise<{ error: Error | null; address: unknown; family: unknown }> {
  return new Promise((resolve) =>
    lookup(
      hostname,
      options as never,
      ((error: Error | null, address: unknown, family: unknown) =>
        resolve({ error, address, family })) as never,
    ),
  )
}

describe('the address guard', () => {
  it('answers only allowed addresses: a forbidden one among several is dropped', async () => {
    const resolve = tableResolver({
      'mixed.test': [
        { address: '127.0.0.1', family: 4 },
        PUBLIC,
        { address: 'fd00::1', family: 6 },
      ],
      'inside.test': [
        { address: '10.1.1.1', family: 4 },
        { address: '::1', family: 6 },
      ],
    })
    const lookup = createGuardedLookup({ allowPrivate: false, resolve })
    assert.deepEqual(await lookupOnce(lookup, 'mixed.test', { all: true }), {
      error: null,
      address: [PUBLIC],
      family: undefined,
    })
    assert.deepEqual(await lookupOnce(lookup, 'mixed.test', {}), {
      error: null,
      address: PUBLIC.address,
      family: 4,
    })
    const refused = await lookupOnce(lookup, 'inside.test', { all: true })
    assert.ok(refused.error instanceof ForbiddenAddressError)
    assert.match(refused.error.message, /10\.1\.1\.1 \(private\), ::1 \(loopback\)/)
    const none = await lookupOnce(lookup, 'nowhere.test', {})
    assert.equal((none.error as NodeJS.ErrnoException).code, 'ENOTFOUND')
    // With allowPrivate every address is answered, in the resolver's order.
    const open = createGuardedLookup({ allowPrivate: true, resolve })
    assert.deepEqual((await lookupOnce(open, 'inside.test', { all: true })).address, [
      { address: '10.1.1.1', family: 4 },
      { address: '::1', family: 6 },
    ])
    assert.deepEqual((await lookupOnce(open, 'inside.test', { family: 6 })).address, '::1')
  })

  it('a name that passed the check and resolves inside at connect time (rebinding) is never connected to', async (t) => {
    const receiver = await startReceiver(t)
    // The first answer (the create-time check) is public; every later one is loopback.
    let calls = 0
    const rebinding: Resolver = async () => (calls++ === 0 ? [PUBLIC] : LOOPBACK)
    const url = `https://rebind.test:${receiver.port}/hooks`
    assert.equal(
      await webhookUrlProblem(url, { allowPrivate: false, resolve: rebinding }),
      undefined,
    )
    const result = await sender(t, { allowPrivate: false, resolve: rebinding }).send(attempt(url))
    assert.equal(result.ok, false)
    assert.match(result.error!, /address refused: .*127\.0\.0\.1 \(loopback\)/)
    assert.equal(calls, 2, 'the name was resolved again at connect time')
    assert.equal(receiver.received.length, 0)
  })

  it('connects to loopback receivers only with allowPrivate, by name or literal', async (t) => {
    const receiver = await startReceiver(t)
    const resolve = tableResolver({ 'receiver.test': LOOPBACK })
    const strict = sender(t, { allowPrivate: false, resolve })
    for (const url of [
      `https://receiver.test:${receiver.port}/`,
      `https://127.0.0.1:${receiver.port}/`,
      `https://[::ffff:127.0.0.1]:${receiver.port}/`,
      `https://2130706433:${receiver.port}/`,
      `http://receiver.test:${receiver.port}/`,
    ]) {
      const result = await strict.send(attempt(url))
      assert.equal(result.ok, false, url)
      assert.match(result.error!, /address refused|http:\/\/ URLs are not sent to/, url)
    }
    assert.equal(receiver.received.length, 0)

    const open = sender(t, { allowPrivate: true, resolve })
    for (const url of [
      `http://receiver.test:${receiver.port}/a`,
      `http://127.0.0.1:${receiver.port}/b`,
    ]) {
      assert.deepEqual(
        { ...(await open.send(attempt(url))), durationMs: 0 },
        {
          ok: true,
          statusCode: 200,
          durationMs: 0,
        },
      )
    }
    assert.deepEqual(
      receiver.received.map((r) => r.url),
      ['/a', '/b'],
    )
  })
})

describe('one attempt', () => {
  it('POSTs the body as JSON with the Standard Webhooks headers, which a published verifier accepts', async (t) => {
    const receiver = await startReceiver(t)
    const secret = newWebhookSecret()
    const body = JSON.stringify({ id: 'evt_42', type: 'product.created', data: { object: {} } })
    const before = Math.floor(Date.now() / 1000)
    const result = await sender(t).send({
      url: `http://127.0.0.1:${receiver.port}/hooks?x=1`,
      secret,
      id: 'evt_42',
      body,
    })
    assert.equal(result.ok, true, result.error)
    const [got] = receiver.received
    assert.equal(got!.method, 'POST')
    assert.equal(got!.url, '/hooks?x=1')
    assert.equal(got!.body, body)
    assert.equal(got!.headers['content-type'], 'application/json')
    assert.equal(got!.headers['webhook-id'], 'evt_42')
    const timestamp = Number(got!.headers['webhook-timestamp'])
    assert.ok(timestamp >= before && timestamp <= Math.floor(Date.now() / 1000) + 1)
    assert.match(String(got!.headers['webhook-signature']), /^v1,[A-Za-z0-9+/]{43}=$/)
    const verified = new Webhook(secret).verify(got!.body, got!.headers as Record<string, string>)
    assert.deepEqual(verified, JSON.parse(body))
  })

  it('2xx succeeds; other statuses fail with the status; a redirect is not followed', async (t) => {
    const target = await startReceiver(t)
    const receiver = await startReceiver(t, (request, response) => {
      const status = Number(request.url.slice(1))
      if (status >= 300 && status < 400) {
        response.writeHead(status, { location: `http://127.0.0.1:${target.port}/moved` }).end()
      } else response.writeHead(status).end(status === 204 ? undefined : 'body')
    })
    const send = sender(t)
    const expected: [number, boolean, RegExp | undefined][] = [
      [200, true, undefined],
      [201, true, undefined],
      [204, true, undefined],
      [299, true, undefined],
      [301, false, /redirect 301 not followed/],
      [302, false, /redirect 302 not followed/],
      [307, false, /redirect 307 not followed/],
      [400, false, /status 400/],
      [410, false, /status 410/],
      [500, false, /status 500/],
      [503, false, /status 503/],
    ]
    for (const [status, ok, error] of expected) {
      const result = await send.send(attempt(`http://127.0.0.1:${receiver.port}/${status}`))
      assert.equal(result.ok, ok, `${status}`)
      assert.equal(result.statusCode, status)
      if (error) assert.match(result.error!, error)
      else assert.equal(result.error, undefined)
      assert.ok(result.durationMs >= 0 && result.durationMs < 5000)
    }
    assert.equal(target.received.length, 0, 'no redirect was followed')
  })

  it('a receiver that never answers is a timeout after timeoutMs; a refused port fails at once', async (t) => {
    const silent = await startReceiver(t, () => {})
    const send = sender(t, { timeoutMs: 300 })
    const started = performance.now()
    const result = await send.send(attempt(`http://127.0.0.1:${silent.port}/`))
    const elapsed = performance.now() - started
    assert.deepEqual(
      { ...result, durationMs: 0 },
      {
        ok: false,
        error: 'no answer within 300 ms',
        durationMs: 0,
      },
    )
    assert.ok(elapsed >= 290 && elapsed < 2000, `${elapsed} ms`)
    assert.equal(silent.received.length, 1)

    // Headers then nothing: the status came in time and stands.
    const stalling = await startReceiver(t, (_, response) => {
      response.writeHead(200, { 'content-length': '100' })
      response.write('partial')
    })
    const stalled = await send.send(attempt(`http://127.0.0.1:${stalling.port}/`))
    assert.equal(stalled.ok, true)

    const refused = await send.send(attempt(`http://127.0.0.1:${await closedPort()}/`))
    assert.equal(refused.ok, false)
    assert.equal(refused.statusCode, undefined)
    assert.equal(refused.error, 'connection refused')
  })

  it('reads a capped amount of a huge response body', async (t) => {
    let written = 0
    let closed = false
    let hungUp = () => {}
    const hangUp = new Promise<void>((resolve) => (hungUp = resolve))
    const receiver = await startReceiver(t, (_, response) => {
      response.writeHead(200)
      const chunk = Buffer.alloc(64 * 1024, 'x')
      const more = () => {
        // Up to 1 GiB, unless the sender hangs up first.
        while (!closed && written < 1024 ** 3) {
          written += chunk.length
          if (!response.write(chunk)) return void response.once('drain', more)
        }
        response.end()
      }
      response.on('close', () => {
        closed = true
        hungUp()
      })
      more()
    })
    const result = await sender(t, { maxResponseBytes: 16 * 1024 }).send(
      attempt(`http://127.0.0.1:${receiver.port}/`),
    )
    assert.equal(result.ok, true)
    assert.equal(result.statusCode, 200)
    // The sender hangs up once it has read its cap: the receiver writes no more from then on.
    await hangUp
    assert.ok(written < 64 * 1024 * 1024, `the receiver wrote ${written} bytes`)
    if (process.env.SHOW_WRITTEN) console.log(`written ${written}`)
  })

  it('never throws: an unparsable URL, another scheme, or an unknown host is a failure', async (t) => {
    const send = sender(t, { resolve: tableResolver({}) })
    for (const [url, error] of [
      ['not a url', /cannot be parsed/],
      ['ftp://127.0.0.1/', /ftp:\/\/ URLs are not sent to/],
      ['http://nowhere.test/', /host not found/],
    ] as const) {
      const result = await send.send(attempt(url))
      assert.equal(result.ok, false, url)
      assert.match(result.error!, error, url)
    }
  })

  describe('over TLS', () => {
    let tls: { key: string; cert: string } | undefined
    const certificate = () => {
      if (tls) return tls
      const dir = mkdtempSync(join(tmpdir(), 'webhook-tls-'))
      try {
        execFileSync(
          'openssl',
          [
            ...['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1'],
            ...['-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem')],
            ...['-subj', '/CN=receiver.test', '-addext', 'subjectAltName=DNS:receiver.test'],
          ],
          { stdio: 'ignore' },
        )
        tls = {
          key: readFileSync(join(dir, 'key.pem'), 'utf8'),
          cert: readFileSync(join(dir, 'cert.pem'), 'utf8'),
        }
        return tls
      } finally {
        rmSync(dir, { recursive: true, force: true })
      }
    }

    it('verifies the certificate against the host name while connecting to the guarded address', async (t) => {
      const { key, cert } = certificate()
      const receiver = await startReceiver(t, undefined, { key, cert })
      const resolve = tableResolver({ 'receiver.test': LOOPBACK, 'other.test': LOOPBACK })
      const url = `https://receiver.test:${receiver.port}/`
      const trusting = sender(t, { resolve, ca: cert })
      assert.equal((await trusting.send(attempt(url))).ok, true)
      const wrongName = await trusting.send(attempt(`https://other.test:${receiver.port}/`))
      assert.equal(wrongName.ok, false)
      assert.match(wrongName.error!, /^TLS: .*other\.test/)
      const untrusting = await sender(t, { resolve }).send(attempt(url))
      assert.equal(untrusting.ok, false)
      assert.match(untrusting.error!, /^TLS: /)
      assert.equal(receiver.received.length, 1)
    })
  })
})

describe('attempts on the sender thread (createThreadSender, as catalog serve sends them)', () => {
  function threadSender(t: TestContext, timeoutMs = 5000) {
    const made = createThreadSender({ timeoutMs, allowPrivate: true })
    t.after(() => made.close())
    return made
  }

  it('are signed as on the service thread, and a published verifier accepts them', async (t) => {
    const receiver = await startReceiver(t)
    const secret = newWebhookSecret()
    const body = JSON.stringify({ id: 'evt_7', type: 'product.updated', data: { object: {} } })
    const result = await threadSender(t).send({
      url: `http://127.0.0.1:${receiver.port}/hooks`,
      secret,
      id: 'evt_7',
      body,
    })
    assert.equal(result.ok, true, result.error)
    assert.equal(result.statusCode, 200)
    const [got] = receiver.received
    assert.equal(got!.body, body)
    assert.equal(got!.headers['webhook-id'], 'evt_7')
    const verified = new Webhook(secret).verify(got!.body, got!.headers as Record<string, string>)
    assert.deepEqual(verified, JSON.parse(body))
  })

  it('answer each attempt of a burst with its own outcome', async (t) => {
    const receiver = await startReceiver(t, (request, response) => {
      response.writeHead(Number(request.url.slice(1))).end()
    })
    const send = threadSender(t)
    const statuses = Array.from({ length: 60 }, (_, i) => [200, 500, 204, 410][i % 4]!)
    const results = await Promise.all(
      statuses.map((status) => send.send(attempt(`http://127.0.0.1:${receiver.port}/${status}`))),
    )
    assert.deepEqual(
      results.map((r) => r.statusCode),
      statuses,
    )
    assert.deepEqual(
      results.map((r) => r.ok),
      statuses.map((s) => s < 300),
    )
    assert.equal(receiver.received.length, 60)
  })

  it('keep the options given: the timeout, the refusal of a forbidden URL', async (t) => {
    const silent = await startReceiver(t, () => {})
    const send = threadSender(t, 300)
    const late = await send.send(attempt(`http://127.0.0.1:${silent.port}/`))
    assert.equal(late.error, 'no answer within 300 ms')
    const guarded = createThreadSender({ timeoutMs: 1000, allowPrivate: false })
    t.after(() => guarded.close())
    const refused = await guarded.send(attempt(`https://127.0.0.1:${silent.port}/`))
    assert.equal(refused.ok, false)
    assert.match(refused.error!, /^address refused: 127\.0\.0\.1/)
    assert.equal(silent.received.length, 1)
  })

  it('keep the process alive while an attempt is under way, and not once it is answered', async (t) => {
    const slow = await startReceiver(t, (_, response) => {
      setTimeout(() => response.writeHead(204).end(), 300)
    })
    // A process with nothing else to do than one attempt: it prints the outcome, then exits.
    const module = new URL('../src/webhooks/sender-thread.ts', import.meta.url).href
    const script = `
      const { createThreadSender } = await import(${JSON.stringify(module)})
      const sender = createThreadSender({ timeoutMs: 5000, allowPrivate: true })
      const result = await sender.send({
        url: 'http://127.0.0.1:${slow.port}/', secret: 'whsec_' + 'A'.repeat(43) + '=', id: 'evt_1', body: '{}',
      })
      console.log(JSON.stringify(result.statusCode))`
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', '--input-type=module', '-e', script],
      { timeout: 10_000 },
    )
    assert.equal(stdout.trim(), '204')
  })

  it('once closed, fail the attempts under way and later ones, without throwing', async (t) => {
    const silent = await startReceiver(t, () => {})
    const send = createThreadSender({ timeoutMs: 5000, allowPrivate: true })
    const underWay = send.send(attempt(`http://127.0.0.1:${silent.port}/`))
    // Under way: the receiver has the request, which it never answers.
    while (silent.received.length === 0) await new Promise((resolve) => setTimeout(resolve, 10))
    send.close()
    assert.deepEqual(await underWay, { ok: false, error: 'the sender is closed', durationMs: 0 })
    const later = await send.send(attempt(`http://127.0.0.1:${silent.port}/`))
    assert.deepEqual(later, { ok: false, error: 'the sender is closed', durationMs: 0 })
  })
})
