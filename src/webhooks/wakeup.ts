import type { Database } from '../db/database.js'

/**
 * The NOTIFY channel that wakes the dispatchers of other processes on PostgreSQL (a manual
 * retry); the payload is the schema's name.
 */
export const DELIVERIES_CHANNEL = 'catalog_webhook_deliveries'

type Signal = 'deliveries-due' | 'endpoints-changed'

const listeners = new WeakMap<Database, Map<Signal, Set<() => void>>>()

function emit(database: Database, signal: Signal): void {
  listeners
    .get(database)
    ?.get(signal)
    ?.forEach((listener) => listener())
}

function subscribe(database: Database, signal: Signal, listener: () => void): () => void {
  let signals = listeners.get(database)
  if (signals === undefined) listeners.set(database, (signals = new Map()))
  let set = signals.get(signal)
  if (set === undefined) signals.set(signal, (set = new Set()))
  set.add(listener)
  return () => set.delete(listener)
}

/**
 * Tells the dispatchers of this process that deliveries of `database` may be due now (a
 * manual retry, say). Dispatchers in other processes hear PostgreSQL's NOTIFY instead.
 */
export function deliveriesDue(database: Database): void {
  emit(database, 'deliveries-due')
}

/** Calls `listener` on each deliveriesDue(database) of this process; returns its removal. */
export function onDeliveriesDue(database: Database, listener: () => void): () => void {
  return subscribe(database, 'deliveries-due', listener)
}

/**
 * Tells the dispatchers of this process that an endpoint of `database` was created or
 * changed (it may be the first enabled one). Dispatchers in other processes see it at their
 * next poll.
 */
export function webhookEndpointsChanged(database: Database): void {
  emit(database, 'endpoints-changed')
}

/** Calls `listener` on each webhookEndpointsChanged(database) of this process. */
export function onWebhookEndpointsChanged(database: Database, listener: () => void): () => void {
  return subscribe(database, 'endpoints-changed', listener)
}
