import type { Transaction } from 'kysely'
import type { Registry } from 'prom-client'
import type { Database } from '../db/database.js'
import type { DB } from '../db/schema.js'
import { rowToEvent } from '../events/event.service.js'
import {
  claimDeliveries,
  findAttempts,
  findDueDeliveries,
  recordOutcomes,
  releaseDelivery,
} from './delivery-claim.repository.js'
import type { ClaimedDelivery, DueDelivery } from './claim-queries.js'
import { decideOutcome, type DeliveryOutcome } from './delivery-outcome.js'
import { CLAIM_AHEAD, LEASE_MARGIN_MS, MAX_WAIT_MS, pickToClaim } from './claim-ahead.js'
import { dispatcherMetrics } from './dispatcher-metrics.js'
import { systemScheduler, type Cancel, type Scheduler } from './scheduler.js'
import type { AttemptResult, Sender } from './sender.js'
import { listenForWakeups } from './dispatcher-wakeups.js'

/** Where the dispatcher reports failed attempts and its own errors (pino's shape). */
export interface DispatcherLog {
  warn(object: Record<string, unknown>, message: string): void
  error(object: Record<string, unknown>, message: string): void
}

export interface DispatcherOptions {
  database: Database
  /** Makes the attempts (createSender with WEBHOOK_TIMEOUT_MS and WEBHOOK_ALLOW_PRIVATE). */
  sender: Sender
  /** WEBHOOK_TIMEOUT_MS: the sender's timeout, from which the lease of a claim is made. */
  timeoutMs: number
  /** WEBHOOK_RETRY_SCHEDULE: the delays of the retries, in seconds. */
  schedule: readonly number[]
  /** The clock and the timers (the process's own by default); tests pass a fake to move on. */
  scheduler?: Scheduler
  /** The jitter's randomness, in [0, 1); Math.random by default. */
  random?: () => number
  /** Attempts in flight at most, all endpoints together. 32 by default. */
  maxInFlight?: number
  /** Attempts in flight at most per endpoint. 4 by default. */
  maxPerEndpoint?: number
  /** How often due deliveries are looked for without a wake-up (retries come due so). 1,000 ms. */
  pollIntervalMs?: number
  /** How long stop() waits for attempts in flight before leaving them to their lease. The timeout by default. */
  stopGraceMs?: number
  log?: DispatcherLog
  /** Where its metrics are registered (the app's /metrics), if anywhere. */
  registry?: Registry
}

export interface Dispatcher {
  /** Looks for due deliveries now. */
  wake(): void
  /**
   * Stops claiming; waits for the attempts in flight to finish and be recorded, at most
   * stopGraceMs, and abandons the others to their lease (due again when it ends: retried,
   * never lost). Stops listening.
   */
  stop(): Promise<void>
  /** Attempts in flight at this moment. */
  inFlight(): number
}

/** An attempt made, and what to record of it. */
interface Finished {
  delivery: ClaimedDelivery
  outcome: DeliveryOutcome
}

/** A delivery claimed ahead, waiting for one of its endpoint's slots. */
interface Waiting {
  delivery: ClaimedDelivery
  /** The end of its claim's lease. */
  leaseUntil: string
  /** The scheduler's elapsedMs() when claimed. */
  claimedAt: number
}

/**
 * Sends the webhook deliveries of `database` in the background: a component that server.ts
 * starts beside the HTTP server. It claims due deliveries (pending, next_attempt_at <= now)
 * by setting their next_attempt_at to the end of a lease (timeout + 5 s), so that with
 * several instances on one PostgreSQL each attempt runs on one, and an attempt cut short by
 * a crash is due again when its lease ends. It claims up to CLAIM_AHEAD times an endpoint's
 * bound in flight (claim-ahead.ts), so that the next attempts wait in memory for a slot
 * rather than for a pass and its write; one waiting longer than MAX_WAIT_MS is given back.
 * Each outcome is recorded as decideOutcome (delivery-outcome.ts) says: 2xx succeeded,
 * anything else a retry at the schedule's next time, or failed after the last. Woken
 * (dispatcher-wakeups.ts) by this process's writes (each committed write on PostgreSQL, each
 * group commit's batch on SQLite) while the database has an enabled endpoint, by
 * deliveriesDue() and, on PostgreSQL, by a manual retry's NOTIFY from another instance; and
 * every pollIntervalMs for retries and for deliveries that another process queued. Its clock
 * and timers are the scheduler's (scheduler.ts), so that a test moves them on rather than
 * waiting.
 */
export function startDispatcher(options: DispatcherOptions): Dispatcher {
  const { database, sender, schedule } = options
  const scheduler = options.scheduler ?? systemScheduler
  const random = options.random ?? Math.random
  const maxInFlight = options.maxInFlight ?? 32
  const maxPerEndpoint = options.maxPerEndpoint ?? 4
  const leaseMs = options.timeoutMs + LEASE_MARGIN_MS
  const stopGraceMs = options.stopGraceMs ?? options.timeoutMs
  const metrics = dispatcherMetrics(options.registry, () => scheduler.now())

  const maxHeldPerEndpoint = maxPerEndpoint * CLAIM_AHEAD
  const maxHeld = maxInFlight * CLAIM_AHEAD
  /** Attempts in flight per endpoint. */
  const perEndpoint = new Map<string, number>()
  /** Endpoints whose last attempt failed: claimed for their free slots only. */
  const failing = new Set<string>()
  const heldLimit = (endpoint: string) =>
    failing.has(endpoint) ? maxPerEndpoint : maxHeldPerEndpoint
  /** Deliveries claimed ahead, per endpoint, in due order. */
  const waiting = new Map<string, Waiting[]>()
  /** Deliveries claimed ahead that waited too long: given back by the next write. */
  let expired: Waiting[] = []
  /** Attempts being sent: settled once their outcome is queued in `finished`. */
  const running = new Set<Promise<void>>()
  /** Outcomes of attempts made, to be recorded by the next pass's write (see pump). */
  let finished: Finished[] = []
  let stopped = false
  let abandoned = false
  let pumping = false
  /** The last pass started: the one under way while `pumping`. */
  let pass: Promise<void> = Promise.resolve()
  let pumpAgain = false
  let cancelWake: Cancel | undefined

  /**
   * One pass: records the outcomes of the attempts finished since the last pass and claims
   * what is due, in one write. On SQLite every write that finds no batch under way costs a
   * commit of its own (an fsync, holding the event loop); with one write per outcome as well
   * as per claim, one endpoint took three times as many commits as the creates themselves.
   */
  const pump = (): Promise<void> => {
    if (stopped) return Promise.resolve()
    // The pass under way makes one more round for this call.
    if (pumping) {
      pumpAgain = true
      return pass
    }
    pumping = true
    pass = passes()
    return pass
  }

  const passes = async (): Promise<void> => {
    try {
      do {
        pumpAgain = false
        const held = (endpoint: string) =>
          (perEndpoint.get(endpoint) ?? 0) + (waiting.get(endpoint)?.length ?? 0)
        const allHeld = running.size + [...waiting.values()].reduce((n, w) => n + w.length, 0)
        const free = maxHeld - allHeld
        const now = scheduler.now()
        const nowIso = now.toISOString()
        const scan = Math.min(Math.max(free, 0), 200)
        let due: DueDelivery[] = []
        let picked: DueDelivery[] = []
        if (scan > 0) {
          const busy = [...new Set([...perEndpoint.keys(), ...waiting.keys()])].filter(
            (id) => held(id) >= heldLimit(id),
          )
          due = await findDueDeliveries(database.kysely, nowIso, busy, scan, maxHeldPerEndpoint)
          picked = pickToClaim(due, free, (endpoint) => heldLimit(endpoint) - held(endpoint))
        }
        const outcomes = finished
        const released = expired
        finished = []
        expired = []
        if (picked.length === 0 && outcomes.length === 0 && released.length === 0) break
        const leaseUntil = new Date(now.getTime() + leaseMs).toISOString()
        const claimed = await record(outcomes, released, nowIso, (tx) =>
          claimDeliveries(tx, picked, nowIso, leaseUntil),
        )
        if (stopped) break
        const claimedAt = scheduler.elapsedMs()
        for (const delivery of await findAttempts(database.kysely, claimed)) {
          const queue = waiting.get(delivery.endpoint_id) ?? []
          queue.push({ delivery, leaseUntil, claimedAt })
          waiting.set(delivery.endpoint_id, queue)
        }
        startWaiting()
        if (due.length === scan) pumpAgain = true
      } while (pumpAgain && !stopped)
    } catch (error) {
      if (!stopped) options.log?.error({ err: error }, 'claiming webhook deliveries failed')
    } finally {
      pumping = false
    }
  }

  /**
   * Records `outcomes`, gives back `released` (due at `nowIso` again) and runs `then`, in one
   * write; a failed write leaves them all to their lease.
   */
  const record = async <T>(
    outcomes: Finished[],
    released: Waiting[],
    nowIso: string,
    then: (tx: Transaction<DB>) => Promise<T>,
  ) => {
    try {
      // Not durable: a claim or an outcome that a crash loses makes the attempt again, as at
      // least once allows; a durable commit would cost SQLite an fsync on the API's thread.
      return await database.write(
        async (tx) => {
          await recordOutcomes(tx, outcomes)
          for (const { delivery, leaseUntil } of released) {
            await releaseDelivery(tx, delivery, leaseUntil, nowIso)
          }
          return then(tx)
        },
        { durable: false },
      )
    } catch (error) {
      if (outcomes.length > 0 && !abandoned) {
        options.log?.error({ err: error }, 'recording a webhook delivery failed')
      }
      throw error
    }
  }

  /**
   * Starts the waiting deliveries that have a slot, in the order claimed; gives back those
   * that waited more than MAX_WAIT_MS (a slow endpoint's), for the next write to release.
   */
  const startWaiting = () => {
    const now = scheduler.elapsedMs()
    for (const [endpoint, queue] of waiting) {
      while (queue.length > 0 && now - queue[0]!.claimedAt > MAX_WAIT_MS) {
        expired.push(queue.shift()!)
      }
      while (
        queue.length > 0 &&
        running.size < maxInFlight &&
        (perEndpoint.get(endpoint) ?? 0) < maxPerEndpoint
      ) {
        attempt(queue.shift()!.delivery)
      }
      if (queue.length === 0) waiting.delete(endpoint)
    }
    if (expired.length > 0) wake()
  }

  const attempt = (delivery: ClaimedDelivery) => {
    perEndpoint.set(delivery.endpoint_id, (perEndpoint.get(delivery.endpoint_id) ?? 0) + 1)
    metrics.inFlight(1)
    const done = send(delivery)
      .catch((error: unknown) => {
        if (!abandoned) options.log?.error({ err: error }, 'a webhook delivery attempt failed')
      })
      .finally(() => {
        running.delete(done)
        metrics.inFlight(-1)
        const n = (perEndpoint.get(delivery.endpoint_id) ?? 1) - 1
        if (n === 0) perEndpoint.delete(delivery.endpoint_id)
        else perEndpoint.set(delivery.endpoint_id, n)
        // A slot is free: a delivery claimed ahead takes it now; the outcome waits for the
        // next pass, which claims more.
        if (!stopped) {
          startWaiting()
          setImmediate(wake)
        }
      })
    running.add(done)
  }

  /** Makes the attempt and queues its outcome for the next pass to record. */
  const send = async (delivery: ClaimedDelivery): Promise<void> => {
    const startedAt = scheduler.now()
    const result: AttemptResult | undefined = delivery.event
      ? await sender.send({
          url: delivery.url,
          secret: delivery.secret,
          id: delivery.event_id,
          body: JSON.stringify(rowToEvent(delivery.event)),
        })
      : undefined
    // Abandoned by stop(): its lease will make it due again; the database may be closed.
    if (abandoned) return
    const { decision, outcome } = decideOutcome(
      { ...result, startedAt, endedAt: scheduler.now() },
      {
        attempts: delivery.attempts,
        manualRetry: delivery.manualRetry,
        eventDeleted: delivery.event === null,
      },
      schedule,
      random(),
    )
    finished.push({ delivery, outcome })
    if (decision.verdict === 'delivered') failing.delete(delivery.endpoint_id)
    else failing.add(delivery.endpoint_id)
    metrics.attempted(decision)
    if (decision.verdict !== 'delivered') {
      options.log?.warn(
        {
          endpointId: delivery.endpoint_id,
          eventId: delivery.event_id,
          deliveryId: delivery.id,
          attempt: outcome.attempts,
          statusCode: outcome.lastStatusCode ?? undefined,
          error: outcome.lastError ?? undefined,
          nextAttemptAt: outcome.nextAttemptAt,
        },
        'webhook delivery attempt failed',
      )
    }
  }

  // Wake-ups come in bursts (a batch of creates): one look for due deliveries serves them all.
  const wake = () => {
    if (stopped || cancelWake) return
    cancelWake = scheduler.soon(5, () => {
      cancelWake = undefined
      return pump()
    })
  }

  const stopWakeups = listenForWakeups(database, scheduler, {
    wake,
    pump,
    isStopped: () => stopped,
    pollIntervalMs: options.pollIntervalMs ?? 1000,
  })
  metrics.bind(database)
  wake()

  return {
    wake,
    inFlight: () => running.size,
    async stop() {
      stopped = true
      cancelWake?.()
      await stopWakeups()
      let endGrace: Cancel | undefined
      const grace = new Promise<void>((resolve) => {
        endGrace = scheduler.after(stopGraceMs, resolve)
      })
      await Promise.race([Promise.all(running), grace])
      endGrace?.()
      if (running.size > 0) abandoned = true
      // Let a claim under way finish, so that nothing runs on the database after stop.
      await pass
      // What the finished attempts came to, which no pass will record now.
      // and the deliveries claimed ahead, due again now rather than when their lease ends.
      const outcomes = finished
      const released = [...expired, ...[...waiting.values()].flat()]
      finished = []
      expired = []
      waiting.clear()
      if (outcomes.length > 0 || released.length > 0) {
        await record(outcomes, released, scheduler.now().toISOString(), async () => {}).catch(
          () => {},
        )
      }
      metrics.unbind()
    },
  }
}
