import assert from 'node:assert/strict'
import { it } from 'node:test'
import { createKey, request, startServe } from '../process-helpers.js'
import { startCatalogLoad, sleep, tally } from './load.js'
import { describeOnPrivatePostgres } from './private-postgres.js'

const OUTAGE_MS = 4000
/** The server's whole-request budget; an answer during the outage must come well before it. */
const REQUEST_TIMEOUT_MS = 30_000
const RECOVERY_LIMIT_MS = 15_000

interface Probe {
  at: number
  status: number | string
  ms: number
}

/** GETs a path every 100 ms until stopped, keeping each status (or connection error). */
function poll(url: () => string, path: string) {
  const probes: Probe[] = []
  let stopped = false
  const done = (async () => {
    while (!stopped) {
      const at = performance.now()
      const status = await request({ url: url() }, 'GET', path).then(
        (response) => response.status,
        (error: NodeJS.ErrnoException) => String(error.code ?? error.message),
      )
      probes.push({ at, status, ms: performance.now() - at })
      await sleep(100)
    }
  })()
  return {
    probes,
    stop: async () => {
      stopped = true
      await done
    },
  }
}

describeOnPrivatePostgres('faults: PostgreSQL restarted under load', (cluster) => {
  it('during the outage writes answer 503 unavailable quickly and /readyz 503; the process stays up and serves again on its own', async (t) => {
    const DATABASE_URL = cluster.url
    const { key } = await createKey(DATABASE_URL, 'shop')
    const server = await startServe(t, { DATABASE_URL })
    const load = startCatalogLoad({
      url: () => server.url,
      key,
      prefix: 'outage',
      clients: 8,
      stopOnError: false,
    })
    const ready = poll(() => server.url, '/readyz')
    const live = poll(() => server.url, '/healthz')
    t.after(() => Promise.all([load.stop(), ready.stop(), live.stop()]))
    await load.acknowledged(50)

    const stopping = performance.now()
    await cluster.stop('immediate')
    const down = performance.now()
    await sleep(OUTAGE_MS)
    const restarting = performance.now()
    await cluster.start()
    const up = performance.now()

    // Recovered: a write sent after PostgreSQL is back answers 200, by itself, no restart.
    let recovered: number | undefined
    while (recovered === undefined && performance.now() - up < RECOVERY_LIMIT_MS) {
      const recent = load.calls.filter((call) => call.sentAt >= up && call.outcome?.answered)
      const first = recent.find((call) => call.outcome!.answered && call.outcome!.status === 200)
      if (first) recovered = first.sentAt + first.outcome!.ms
      else await sleep(50)
    }
    await sleep(500)
    load.stop()
    await Promise.all([load.done, ready.stop(), live.stop()])

    const during = load.calls.filter((call) => call.sentAt >= down && call.sentAt < restarting)
    const statuses = new Map<string, number>()
    for (const call of during) {
      const outcome = call.outcome!
      const label = outcome.answered
        ? `${outcome.status} ${outcome.body?.error ?? ''}`.trim()
        : outcome.error
      statuses.set(label, (statuses.get(label) ?? 0) + 1)
    }
    const cutOff = load.calls.filter(
      (call) => call.sentAt < stopping && call.sentAt + call.outcome!.ms > stopping,
    )
    const maxMs = Math.max(...during.map((call) => call.outcome!.ms))
    const readyDuring = ready.probes.filter((probe) => probe.at >= down && probe.at < restarting)
    const readyAfter = ready.probes.filter((probe) => probe.at >= up)
    const liveAll = live.probes.map((probe) => probe.status)
    t.diagnostic(
      `PostgreSQL restart: in flight at the stop ${cutOff.length} ` +
        `(${tally(cutOff.map((call) => (call.outcome!.answered ? call.outcome!.status : 'no answer')))}); ` +
        `outage ${OUTAGE_MS} ms; requests during it ${during.length} ` +
        `(${[...statuses].map(([label, count]) => `${label}: ${count}`).join(', ')}), max latency ${Math.round(maxMs)} ms; ` +
        `/readyz during it ${tally(readyDuring.map((probe) => probe.status))}; ` +
        `recovered ${recovered === undefined ? 'never' : `${Math.round(recovered - up)} ms`} after PostgreSQL was back ` +
        `(${Math.round(up - restarting)} ms to start it)`,
    )

    // Requests cut off as PostgreSQL went down, and all others: a 200 or the contract's 503.
    const otherwise = load.calls.filter(
      (call) =>
        !call.outcome!.answered ||
        !(
          call.outcome!.status === 200 ||
          (call.outcome!.status === 503 && call.outcome!.body?.error === 'unavailable')
        ),
    )
    assert.deepEqual(
      otherwise.map((call) => call.outcome),
      [],
      'every request is answered: 200, or 503 unavailable',
    )
    assert.ok(during.length > 0, 'requests were sent during the outage')
    assert.deepEqual(
      [...statuses.keys()],
      ['503 unavailable'],
      'every request during the outage: 503 unavailable',
    )
    assert.ok(maxMs < REQUEST_TIMEOUT_MS / 3, `answered within ${Math.round(maxMs)} ms`)
    assert.ok(readyDuring.length > 0)
    assert.ok(
      readyDuring.every((probe) => probe.status === 503),
      '/readyz answers 503 during the outage',
    )
    assert.ok(
      liveAll.every((status) => status === 200),
      `/healthz always 200: ${liveAll.join(',')}`,
    )
    assert.equal(server.child.exitCode, null, 'the process is still running')
    assert.notEqual(
      recovered,
      undefined,
      `writes answer 200 within ${RECOVERY_LIMIT_MS} ms of PostgreSQL's return`,
    )
    assert.ok(
      readyAfter.some((probe) => probe.status === 200),
      '/readyz answers 200 again',
    )
  })

  it('fsync=off on the server is logged at start-up as one warning line', async (t) => {
    await cluster.stop('fast')
    await cluster.start({ fsync: 'off' })
    t.after(async () => {
      await cluster.stop('fast')
      await cluster.start()
    })
    const server = await startServe(t, { DATABASE_URL: cluster.url })
    const warnings = server
      .stdout()
      .split('\n')
      .filter((line) => line.startsWith('{"level":40'))
      .map((line) => JSON.parse(line))
    assert.equal(warnings.length, 1, JSON.stringify(warnings))
    assert.match(warnings[0].msg, /^fsync off: /)
    assert.deepEqual(warnings[0].durability, { fsync: 'off', synchronous_commit: 'on' })
    t.diagnostic(`warning: ${warnings[0].msg}`)
  })
})
