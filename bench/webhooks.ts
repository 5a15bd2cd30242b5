/**
 * The webhook delivery figures of issue 15, on one dialect. Three services, each on a fresh
 * database, side by side (WEBHOOK_ALLOW_PRIVATE=1, WEBHOOK_TIMEOUT_MS=1000): `none` has no
 * endpoint, `live` one subscribed to product.created at a live receiver, `live+dead` that and
 * a second at a receiver that accepts connections and never answers. The receivers run in
 * this process, which is idle while the load generator works.
 *
 * 1. Creates at full load, in turn: live / none is the cost of an endpoint (goal >= 0.85).
 * 2. Delivery lag at a steady rate of half the live service's creates, live and live+dead in
 *    turn (windows and warm-ups as in 1, each arm's deliveries drained after its window): arrival of each event's first attempt minus the event's createdAt (the service's
 *    clock inside the create's transaction; the same clock of the same machine): commit,
 *    wake-up, claim and send. Goals: p99 <= 1 s, max <= 2 s (the contract: an attempt starts
 *    within 2 s of being due), live+dead's p99 within 1.5x of live's.
 * 3. Every product created on live and live+dead must have reached the live receiver, by
 *    distinct webhook-id; otherwise the run fails.
 */
import http from 'node:http'
import { once } from 'node:events'
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net'
import { figureMaker, measureInTurn, type Figure, type Session } from './measure.js'
import { API, type Spec } from './scenarios.js'
import { countStored, startService, type Dialect, type RunningServer } from './servers.js'
import { setTimeout as sleep } from 'node:timers/promises'
import { apiClient, BENCH_HOST, ratio, summarize } from './support.js'

/** The dead endpoint holds its slots this long per attempt: more attempts in a short run. */
const TIMEOUT_MS = 1000
const DRAIN_TIMEOUT_MS = 120_000
const CREATES: Spec[] = [{ scenario: 'create-product', targets: [{}] }]

/** What the live receiver got at one path (one path per service). */
interface Received {
  seen: Set<string>
  duplicates: number
  malformed: number
  /** Lag samples are taken only once marked: not of the full-load windows' backlog. */
  marked: boolean
  lags: number[]
}

export async function runWebhooks(session: Session, dialect: Dialect): Promise<Figure[]> {
  const { context, found, log } = session
  const received = new Map<string, Received>()
  const at = (path: string) => {
    if (!received.has(path))
      received.set(path, { seen: new Set(), duplicates: 0, malformed: 0, marked: false, lags: [] })
    return received.get(path)!
  }
  const live = http.createServer((request, response) => {
    const arrivedAt = Date.now()
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      const state = at(request.url ?? '/')
      const id = request.headers['webhook-id']
      let createdAt = NaN
      try {
        createdAt = Date.parse(
          (JSON.parse(Buffer.concat(chunks).toString()) as { createdAt: string }).createdAt,
        )
      } catch {
        // counted as malformed
      }
      if (typeof id !== 'string' || !Number.isFinite(createdAt)) state.malformed++
      else if (state.seen.has(id)) state.duplicates++
      else {
        state.seen.add(id)
        if (state.marked) state.lags.push(arrivedAt - createdAt)
      }
      response.writeHead(204).end()
    })
  })
  live.keepAliveTimeout = 60_000
  let deadConnections = 0
  const sockets = new Set<Socket>()
  const dead = createServer((socket) => {
    deadConnections++
    sockets.add(socket)
    socket.on('data', () => {})
    socket.on('error', () => {})
  })
  const listen = async (server: Server | http.Server) => {
    server.listen(0, BENCH_HOST)
    await once(server, 'listening')
    return (server.address() as AddressInfo).port
  }
  const [livePort, deadPort] = [await listen(live), await listen(dead)]
  const servers: RunningServer[] = []
  try {
    const env = { WEBHOOK_ALLOW_PRIVATE: '1', WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS) }
    for (let i = 0; i < 3; i++) servers.push(await startService(context, dialect, { env }))
    const [none, one, two] = servers as [RunningServer, RunningServer, RunningServer]
    const subscribe = (server: RunningServer, url: string) =>
      apiClient(server.url, server.key).json('POST', `${API}/webhook-endpoints`, {
        url,
        events: ['product.created'],
        description: 'bench',
      })
    await subscribe(one, `http://${BENCH_HOST}:${livePort}/live`)
    await subscribe(two, `http://${BENCH_HOST}:${livePort}/live+dead`)
    await subscribe(two, `http://${BENCH_HOST}:${deadPort}/never`)
    const arms = [
      { path: '/live', server: one },
      { path: '/live+dead', server: two },
    ]
    /** Waits until every product of `server` has reached the receiver (and stayed counted). */
    const drain = async (server: RunningServer, path: string) => {
      const startedAt = performance.now()
      for (let before = -1; ; await sleep(100)) {
        const created = await countStored(server.databaseUrl, 'products', 'rows')
        if (
          (at(path).seen.size >= created && created === before) ||
          performance.now() - startedAt > DRAIN_TIMEOUT_MS
        )
          return
        before = created
      }
    }

    const [noneCreates, liveCreates, deadCreates] = await measureInTurn(
      session,
      [none, one, two].map((server) => ({ server, specs: CREATES })),
    )
    for (const [i, window] of [noneCreates!, liveCreates!, deadCreates!].entries()) {
      found.watch(
        `webhooks (${dialect}), creates with ${['no', 'a live', 'a live and a dead'][i]} endpoint`,
        window,
      )
    }
    for (const { path, server } of arms) {
      await drain(server, path)
      at(path).marked = true
    }
    const ratePerS = Math.max(1, Math.round(liveCreates!.reqPerS / 2))
    const steady = await measureInTurn(
      session,
      arms.map(({ path, server }) => ({
        server,
        specs: CREATES,
        ratePerS,
        after: () => drain(server, path),
      })),
    )
    steady.forEach((window, i) =>
      found.watch(`webhooks (${dialect}), steady creates at ${arms[i]!.path}`, window),
    )
    for (const { path, server } of arms) {
      const created = await countStored(server.databaseUrl, 'products', 'rows')
      const { seen, malformed } = at(path)
      if (seen.size < created || malformed > 0) {
        found.failures.push(
          `webhooks (${dialect}) ${path}: ${created} products created, ${seen.size} events received (${malformed} malformed)`,
        )
      }
    }
    if (deadConnections === 0)
      found.failures.push(`webhooks (${dialect}): no attempt reached the dead receiver`)
    const [liveLag, deadLag] = arms.map(({ path }) => summarize(at(path).lags))
    log(
      `  creates ${noneCreates!.reqPerS.toFixed(0)} / ${liveCreates!.reqPerS.toFixed(0)} / ${deadCreates!.reqPerS.toFixed(0)} req/s (none / live / live+dead);` +
        ` lag at ${ratePerS}/s p99 ${liveLag!.p99} ms live, ${deadLag!.p99} ms live+dead`,
    )
    const figure = figureMaker('webhooks', dialect)
    return [
      figure(
        'creates, 1 live endpoint / none',
        ratio(liveCreates!.reqPerS, noneCreates!.reqPerS),
        'x',
        { op: '>=', value: 0.85 },
      ),
      figure(
        'creates, 1 live + 1 dead endpoint / none',
        ratio(deadCreates!.reqPerS, noneCreates!.reqPerS),
        'x',
      ),
      figure('steady rate, half the live creates', ratePerS, 'req/s'),
      figure('lag p50, live endpoint', liveLag!.p50, 'ms'),
      figure('lag p99, live endpoint', liveLag!.p99, 'ms', { op: '<=', value: 1000 }),
      figure('lag max, live or with a dead one', Math.max(liveLag!.max, deadLag!.max), 'ms', {
        op: '<=',
        value: 2000,
      }),
      figure('lag p99, with a dead endpoint / without', ratio(deadLag!.p99, liveLag!.p99), 'x', {
        op: '<=',
        value: 1.5,
      }),
      figure(
        'duplicates received',
        arms.reduce((n, { path }) => n + at(path).duplicates, 0),
        '',
      ),
    ]
  } finally {
    await Promise.all(servers.map((server) => server.stop()))
    live.closeAllConnections()
    live.close()
    for (const socket of sockets) socket.destroy()
    dead.close()
  }
}
