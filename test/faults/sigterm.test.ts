import assert from 'node:assert/strict'
import http from 'node:http'
import { it } from 'node:test'
import { API, describeEachDialect } from '../helpers.js'
import { createKey, startServe, type Exit, type ServeProcess } from '../process-helpers.js'
import { randomMs, sleep, startCatalogLoad } from './load.js'
import { scratchDatabaseUrl } from './scratch-database.js'

const CLIENTS = 16
/** Requests held in flight across the signal: their bodies are sent in two halves. */
const SLOW = 8
const EXIT_LIMIT_MS = 20_000

describeEachDialect('faults: SIGTERM under load', (dialect) => {
  it('every request the server accepted before SIGTERM is answered 200, and it exits 0', async (t) => {
    const DATABASE_URL = await scratchDatabaseUrl(t, dialect)
    const { key } = await createKey(DATABASE_URL, 'shop')
    // At debug level the log says when each request arrives, not only when it is answered.
    const server = await startServe(t, { DATABASE_URL, LOG_LEVEL: 'debug' })
    // Clients go on through 503s (the server is shutting down) until a request gets no answer.
    const load = startCatalogLoad({
      url: () => server.url,
      key,
      prefix: 'term',
      clients: CLIENTS,
      stopOnError: false,
    })
    await load.acknowledged(100)
    const slow = Array.from({ length: SLOW }, (_, i) =>
      startHalfSentCreate(server, key, `term-slow-${i}`),
    )
    await Promise.all(slow.map((upload) => upload.arrived))
    await sleep(randomMs(0, 300))
    server.child.kill('SIGTERM')
    await server.waitForOutput(/shutting down/)
    for (const upload of slow) upload.finish()
    const slowOutcomes = await Promise.all(slow.map((upload) => upload.response))
    const exit = await Promise.race([
      server.exited,
      sleep(EXIT_LIMIT_MS).then((): Exit => ({ code: null, signal: null })),
    ])
    load.stop()
    await load.done

    // The server's own log says which requests it had taken in before it handled the signal:
    // each request's X-Request-Id is its log's reqId (the start-up health check has another).
    const lines: { msg: string; reqId?: string }[] = server
      .stdout()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line))
    const signalled = lines.findIndex((line) => line.msg.startsWith('shutting down'))
    assert.ok(signalled >= 0, 'the server logged the signal')
    const ids = (from: number, to: number, msg: string) =>
      new Set(
        lines
          .slice(from, to)
          .filter((line) => line.msg === msg && line.reqId?.startsWith('term-'))
          .map((line) => line.reqId),
      )
    const accepted = ids(0, signalled, 'incoming request')
    const completedBefore = ids(0, signalled, 'request')
    const inFlight = [...accepted].filter((id) => !completedBefore.has(id))

    const acceptedCalls = load.calls.filter((call) => accepted.has(call.requestId))
    const answered = acceptedCalls.filter(
      (call) => call.outcome?.answered && call.outcome.status === 200,
    )
    const failed = [
      ...slowOutcomes.filter((outcome) => outcome.status !== 200).map((o) => JSON.stringify(o)),
      ...acceptedCalls
        .filter((call) => !(call.outcome?.answered && call.outcome.status === 200))
        .map((call) => `${call.requestId}: ${JSON.stringify(call.outcome)}`),
    ]
    const later = load.calls.filter((call) => !accepted.has(call.requestId))
    const count = (
      predicate: (outcome: NonNullable<(typeof later)[number]['outcome']>) => boolean,
    ) => later.filter((call) => predicate(call.outcome!)).length
    t.diagnostic(
      `SIGTERM [${dialect}]: sent ${load.calls.length + SLOW}, accepted before the signal ` +
        `${accepted.size} (in flight at the signal ${inFlight.length}, ${SLOW} of them half sent), ` +
        `answered 200 ${answered.length + slowOutcomes.filter((o) => o.status === 200).length}; ` +
        `after it: 200 ${count((o) => o.answered && o.status === 200)}, ` +
        `503 ${count((o) => o.answered && o.status === 503)}, ` +
        `no connection ${count((o) => !o.answered)}; exit code ${exit.code}`,
    )

    assert.deepEqual(exit, { code: 0, signal: null })
    assert.ok(inFlight.length >= SLOW, 'requests were in flight when the signal came')
    assert.deepEqual(failed, [], 'every request accepted before the signal is answered 200')
    assert.equal(answered.length + SLOW, accepted.size)
  })
})

/**
 * A create whose body is half sent: the server has taken it in (its log says so) and waits for
 * the rest, so it is surely in flight when the signal comes.
 */
function startHalfSentCreate(server: ServeProcess, key: string, requestId: string) {
  const body = JSON.stringify({ name: requestId, description: 'x'.repeat(4000) })
  const half = Math.floor(body.length / 2)
  const req = http.request(`${server.url}${API}/products`, {
    method: 'POST',
    agent: false,
    headers: {
      authorization: `Bearer ${key}`,
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(body)),
      'x-request-id': requestId,
    },
  })
  const response = new Promise<{ status: number | string; body: string }>((resolve) => {
    req.on('error', (error: NodeJS.ErrnoException) =>
      resolve({ status: String(error.code), body: '' }),
    )
    req.on('response', (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => (text += chunk))
      res.on('end', () => resolve({ status: res.statusCode!, body: text }))
    })
  })
  req.write(body.slice(0, half))
  return {
    response,
    arrived: server.waitForOutput(
      new RegExp(`"reqId":"${requestId}"[^\n]*"msg":"incoming request"`),
    ),
    finish: () => req.end(body.slice(half)),
  }
}
