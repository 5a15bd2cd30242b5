import { Counter, Gauge, type Registry } from 'prom-client'
import type { Database } from '../db/database.js'
import { toIso } from '../db/values.js'
import { findOldestPending } from './delivery-claim.repository.js'
import type { Decision } from './delivery-outcome.js'

/** The dispatcher's metrics, registered in `registry` (the app's /metrics) if one is given. */
export interface DispatcherMetrics {
  /** Counts an attempt by what it decided: succeeded, retry or failed. */
  attempted(decision: Decision): void
  /** An attempt started (+1) or ended (-1). */
  inFlight(change: 1 | -1): void
  /** Reads the age of the oldest pending delivery from `database`, when scraped. */
  bind(database: Database): void
  /** Reads it no more (0 from then on): the database may be closed. */
  unbind(): void
}

const ATTEMPT_LABELS = { delivered: 'succeeded', retry: 'retry', failed: 'failed' } as const

export function dispatcherMetrics(
  registry: Registry | undefined,
  now: () => Date,
): DispatcherMetrics {
  const registers = registry ? [registry] : []
  let database: Database | undefined
  const outcomes = new Counter({
    name: 'webhook_delivery_attempts_total',
    help: 'Webhook delivery attempts, by outcome: succeeded, retry (failed, tried again later) or failed (the last).',
    labelNames: ['outcome'],
    registers,
  })
  const inFlight = new Gauge({
    name: 'webhook_delivery_attempts_in_flight',
    help: 'Webhook delivery attempts under way in this process.',
    registers,
  })
  new Gauge({
    name: 'webhook_oldest_pending_delivery_age_seconds',
    help: 'Age of the oldest pending webhook delivery to an enabled endpoint (0 when none is).',
    registers,
    async collect() {
      const oldest = database
        ? await findOldestPending(database.kysely).catch(() => undefined)
        : undefined
      this.set(
        oldest === undefined
          ? 0
          : Math.max(0, (now().getTime() - Date.parse(toIso(oldest))) / 1000),
      )
    },
  })
  return {
    attempted: (decision) => outcomes.inc({ outcome: ATTEMPT_LABELS[decision.verdict] }),
    inFlight: (change) => (change > 0 ? inFlight.inc() : inFlight.dec()),
    bind(db) {
      database = db
    },
    unbind() {
      database = undefined
    },
  }
}
