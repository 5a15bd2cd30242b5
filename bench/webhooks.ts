/**
 * The webhook delivery figures of issue 15, on one dialect. Three services, each on a fresh
 * database, run side by side (WEBHOOK_ALLOW_PRIVATE=1, WEBHOOK_TIMEOUT_MS=WEBHOOK_TIMEOUT_MS):
 * `none` has no webhook endpoint, `live` one subscribed to product.created at a live local
 * receiver (webhook-receiver.ts, its own process), `live+dead` that one and a second at a
 * receiver that accepts connections and never answers.
 *
 * 1. Creates at full load, the three measured in turn (measure.ts): live / none is the cost
 *    of one endpoint, live+dead / none that of a dead one besides.
 * 2. Delivery lag at a steady rate of half the live service's create rate (autocannon's
 *    overallRate), live and live+dead in turn: the live receiver's arrival time of each event's
 *    first attempt minus the event's createdAt. createdAt is the service's clock when it made
 *    the event, inside the create's transaction just before it commits, and the receiver reads
 *    the same clock of the same machine: the lag covers commit, wake-up, claim and send, and
 *    nothing of the client's side (an acknowledgement timed at the client would add the
 *    answer's way back and the load generator's own queueing, which is not the dispatcher's).
 *    Each window is followed by the wait for its backlog to drain, so that every lag sample is
 *    in and the other arm's window is not disturbed by it.
 * 3. Every product created on live and live+dead (counted in its database) must have reached
 *    the live receiver, by distinct webhook-id; otherwise the run fails.
 */
import { fileURLToPath } from 'node:url'
import type { BenchConfig } from './config.js'
import { apiClient } from './fixtures.js'
import { ipcCaller } from './ipc.js'
import type { LoadGenerator } from './load-job.js'
import { measureInTurn, ROUNDS, type WindowFigures } from './measure.js'
import { forkChild } from './processes.js'
import { API, type RequestSpec } from './requests.js'
import { addCounts, ratio, type LatencySummary } from './stats.js'
import { countStored } from './stored-rows.js'
import {
  settle,
  startService,
  type Dialect,
  type RunningServer,
  type TargetContext,
} from './targets.js'
import type { PathFigures, ReceiverMessage, ReceiverPorts } from './webhook-receiver.js'

/**
 * The services' WEBHOOK_TIMEOUT_MS: the dead endpoint holds its 4 slots for this long per
 * attempt, then its deliveries are retried 5 s later (the default schedule). Shorter than the
 * 10 s default, so that the dead endpoint makes more attempts, and more outcome writes, within
 * a short run: the harsher case for the live endpoint.
 */
export const WEBHOOK_TIMEOUT_MS = 1000
/** The most a backlog may take to drain after a window before the run gives up on it. */
const DRAIN_TIMEOUT_MS = 120_000

export type WebhookArm = 'none' | 'live' | 'live+dead'

export const WEBHOOK_ARM_LABELS: Record<WebhookArm, string> = {
  none: 'no endpoint',
  live: '1 live endpoint',
  'live+dead': '1 live + 1 dead endpoint',
}

/** One service's steady-rate windows, merged, and the live receiver's lag of their events. */
export interface LagFigures {
  /** The creates of its windows, as the load generator saw them. */
  reqPerS: number
  p50Ms: number
  p99Ms: number
  responses: number
  non2xx: number
  errors: number
  errorCounts: Record<string, number>
  /** Arrival at the live receiver minus the event's createdAt, in ms. */
  lag: LatencySummary
  /** The longest wait, after a window, for its deliveries to drain, in ms. */
  drainMs: number
}

/** Products created on a service against distinct events the live receiver got from it. */
export interface DeliveryCheck {
  arm: WebhookArm
  created: number
  delivered: number
  duplicates: number
  malformed: number
}

export interface WebhookFigures {
  dialect: Dialect
  timeoutMs: number
  creates: Record<WebhookArm, WindowFigures>
  /** live / none and live+dead / none, of creates per second. */
  liveRatio: number | null
  deadRatio: number | null
  /** The steady rate: half the live service's creates per second. */
  ratePerS: number
  lag: { live: LagFigures; 'live+dead': LagFigures }
  /** live+dead's lag p99 over live's. */
  lagP99Ratio: number | null
  checks: DeliveryCheck[]
  /** Connections the dead receiver accepted: attempts were made to it. */
  deadConnections: number
}

const RECEIVER_SCRIPT = fileURLToPath(new URL('./webhook-receiver.ts', import.meta.url))
const CREATES: RequestSpec[] = [{ kind: 'create-product' }]

export async function runWebhooks(
  context: TargetContext,
  dialect: Dialect,
  load: LoadGenerator,
  config: BenchConfig,
  log: (line: string) => void,
): Promise<WebhookFigures> {
  const receiver = forkChild(context.cleanup, 'webhook receiver', RECEIVER_SCRIPT, [
    '--import',
    'tsx',
  ])
  const servers: RunningServer[] = []
  try {
    const call = ipcCaller(receiver)
    const ports = await call<ReceiverPorts>({ kind: 'start' } satisfies ReceiverMessage)
    const figuresOf = (arm: WebhookArm) =>
      call<PathFigures>({ kind: 'figures', path: pathOf(arm) } satisfies ReceiverMessage)
    const settings = {
      WEBHOOK_ALLOW_PRIVATE: '1',
      WEBHOOK_TIMEOUT_MS: String(WEBHOOK_TIMEOUT_MS),
    }
    for (let i = 0; i < 3; i++) {
      servers.push(await startService(context, dialect, undefined, settings))
    }
    const [none, live, dead] = servers as [RunningServer, RunningServer, RunningServer]
    const liveUrl = (arm: WebhookArm) => `http://127.0.0.1:${ports.live}${pathOf(arm)}`
    await subscribe(live, liveUrl('live'))
    await subscribe(dead, liveUrl('live+dead'))
    await subscribe(dead, `http://127.0.0.1:${ports.dead}/never`)

    const [noneCreates, liveCreates, deadCreates] = (await measureInTurn(
      [none, live, dead].map((server) => ({ server, specs: CREATES })),
      load,
      config,
      () => settle(context),
    )) as [WindowFigures, WindowFigures, WindowFigures]
    log(
      `  creates: ${noneCreates.reqPerS.toFixed(0)} req/s with no endpoint,` +
        ` ${liveCreates.reqPerS.toFixed(0)} with a live one,` +
        ` ${deadCreates.reqPerS.toFixed(0)} with a live and a dead one`,
    )
    const arms = [
      { arm: 'live' as const, server: live },
      { arm: 'live+dead' as const, server: dead },
    ]
    for (const { arm, server } of arms) {
      const drainMs = await drain(server, () => figuresOf(arm))
      log(`  ${WEBHOOK_ARM_LABELS[arm]}: the full-load backlog drained in ${drainMs} ms`)
      await call({ kind: 'mark', path: pathOf(arm) } satisfies ReceiverMessage)
    }

    const ratePerS = Math.max(1, Math.round(liveCreates.reqPerS / 2))
    const windows = { live: [] as SteadyWindow[], 'live+dead': [] as SteadyWindow[] }
    const durationS = Math.ceil(config.durationS / ROUNDS)
    for (let round = 0; round < ROUNDS; round++) {
      for (const { arm, server } of arms) {
        await settle(context)
        const result = await load.load({
          targets: [{ url: server.url, key: server.key }],
          specs: CREATES,
          connections: config.connections,
          until: { seconds: durationS },
          ratePerS,
        })
        windows[arm].push({ ...result, drainMs: await drain(server, () => figuresOf(arm)) })
      }
    }
    const lag = {
      live: lagFigures(windows.live, (await figuresOf('live')).lag),
      'live+dead': lagFigures(windows['live+dead'], (await figuresOf('live+dead')).lag),
    }
    for (const { arm } of arms) {
      log(
        `  ${WEBHOOK_ARM_LABELS[arm]} at ${ratePerS} creates/s: lag p50 ${lag[arm].lag.p50} ms,` +
          ` p99 ${lag[arm].lag.p99} ms, max ${lag[arm].lag.max} ms over ${lag[arm].lag.count} deliveries`,
      )
    }

    const checks: DeliveryCheck[] = []
    for (const { arm, server } of arms) {
      await drain(server, () => figuresOf(arm))
      const created = await countStored(server.databaseUrl, { table: 'products', what: 'rows' })
      const received = await figuresOf(arm)
      checks.push({
        arm,
        created,
        delivered: received.delivered,
        duplicates: received.duplicates,
        malformed: received.malformed,
      })
    }
    return {
      dialect,
      timeoutMs: WEBHOOK_TIMEOUT_MS,
      creates: { none: noneCreates, live: liveCreates, 'live+dead': deadCreates },
      liveRatio: ratio(liveCreates.reqPerS, noneCreates.reqPerS),
      deadRatio: ratio(deadCreates.reqPerS, noneCreates.reqPerS),
      ratePerS,
      lag,
      lagP99Ratio: ratio(lag['live+dead'].lag.p99, lag.live.lag.p99),
      checks,
      deadConnections: (await figuresOf('live')).deadConnections,
    }
  } finally {
    await Promise.all(servers.map((server) => server.stop()))
    await receiver.stop()
  }
}

/** The live receiver's URL path of a service's endpoint. */
const pathOf = (arm: WebhookArm) => `/${arm}`

interface SteadyWindow {
  reqPerS: number
  latency: { p50: number; p99: number }
  responses: number
  non2xx: number
  errors: number
  errorCounts: Record<string, number>
  drainMs: number
}

function lagFigures(windows: SteadyWindow[], lag: LatencySummary): LagFigures {
  const mean = (figure: (w: SteadyWindow) => number) =>
    windows.reduce((sum, w) => sum + figure(w), 0) / windows.length
  const sum = (figure: (w: SteadyWindow) => number) =>
    windows.reduce((total, w) => total + figure(w), 0)
  return {
    reqPerS: mean((w) => w.reqPerS),
    p50Ms: mean((w) => w.latency.p50),
    p99Ms: mean((w) => w.latency.p99),
    responses: sum((w) => w.responses),
    non2xx: sum((w) => w.non2xx),
    errors: sum((w) => w.errors),
    errorCounts: addCounts(windows.map((w) => w.errorCounts)),
    lag,
    drainMs: Math.max(...windows.map((w) => w.drainMs)),
  }
}

/** Subscribes `url` to product.created in the server's store. */
async function subscribe(server: RunningServer, url: string): Promise<void> {
  const client = apiClient(server, 1)
  try {
    await client.json({
      method: 'POST',
      path: `${API}/webhook-endpoints`,
      body: JSON.stringify({ url, events: ['product.created'], description: 'bench' }),
    })
  } finally {
    client.close()
  }
}

/**
 * Waits until the live receiver has as many distinct events from `server` as its database
 * has products (each create's one product.created event), DRAIN_TIMEOUT_MS at most; returns
 * how long it waited, in ms. A backlog that did not drain shows in the run's delivery checks.
 * The count of products must also have stayed the same since the look before: creates that
 * autocannon left in flight at the window's end still commit after it returns.
 */
async function drain(server: RunningServer, received: () => Promise<PathFigures>): Promise<number> {
  const startedAt = performance.now()
  const waited = () => Math.round(performance.now() - startedAt)
  let before = -1
  for (;;) {
    const created = await countStored(server.databaseUrl, { table: 'products', what: 'rows' })
    const { delivered } = await received()
    if ((delivered >= created && created === before) || waited() > DRAIN_TIMEOUT_MS) {
      return waited()
    }
    before = created
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}
