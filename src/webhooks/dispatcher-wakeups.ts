import type { Database } from '../db/database.js'
import { hasEnabledEndpoint } from './delivery-claim.repository.js'
import type { Scheduler } from './scheduler.js'
import { DELIVERIES_CHANNEL, onDeliveriesDue, onWebhookEndpointsChanged } from './wakeup.js'

/** What a dispatcher does when woken, and how often it polls. */
export interface WakeupTargets {
  /** Asks for a pass soon (a burst of calls is served by one). */
  wake(): void
  /** A pass now: the poll's, which also finds retries come due and others' deliveries. */
  pump(): Promise<void>
  /** Whether the dispatcher has stopped: a poll then does nothing. */
  isStopped(): boolean
  /** How often due deliveries are looked for without a wake-up. */
  pollIntervalMs: number
}

/**
 * What wakes a dispatcher of `database`: this process's writes (each committed write on
 * PostgreSQL, each group commit's batch on SQLite) while the database has an enabled endpoint,
 * deliveriesDue() and, on PostgreSQL, a manual retry's NOTIFY from another instance; and a
 * poll every pollIntervalMs. Returns what stops them all.
 *
 * Whether the database has an enabled endpoint is as last read (at each poll) or told by this
 * process's endpoint routes. With none, a write queued no delivery: it wakes no pass, which
 * would cost every write's batch a query for nothing. An endpoint that another process
 * enables is seen at the next poll, which looks for due deliveries anyway.
 */
export function listenForWakeups(
  database: Database,
  scheduler: Scheduler,
  targets: WakeupTargets,
): () => Promise<void> {
  const { wake, pump, isStopped } = targets
  let endpointsEnabled = true
  /** Moves on each change told, so that a read begun before it cannot undo it. */
  let endpointChanges = 0
  const readEndpoints = async () => {
    const changes = endpointChanges
    const enabled = await hasEnabledEndpoint(database.kysely).catch(() => true)
    if (changes === endpointChanges) endpointsEnabled = enabled
  }
  const wakeOnWrite = () => {
    if (endpointsEnabled) wake()
  }

  const stopListening: (() => unknown)[] = []
  stopListening.push(onDeliveriesDue(database, wake))
  stopListening.push(
    onWebhookEndpointsChanged(database, () => {
      endpointChanges++
      endpointsEnabled = true
    }),
  )
  if (database.listen) stopListening.push(database.listen(DELIVERIES_CHANNEL, wake))
  if (database.onWriteBatch) stopListening.push(database.onWriteBatch(wakeOnWrite))
  if (database.onWriteCommitted) stopListening.push(database.onWriteCommitted(wakeOnWrite))
  const stopPolling = scheduler.every(targets.pollIntervalMs, () => {
    if (isStopped()) return
    return Promise.all([readEndpoints(), pump()])
  })
  void readEndpoints()

  return async () => {
    stopPolling()
    await Promise.all(stopListening.map((stop) => stop()))
  }
}
