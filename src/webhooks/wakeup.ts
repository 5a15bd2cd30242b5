import type { Database } from '../db/database.js'

const listeners = new WeakMap<Database, Set<() => void>>()

/**
 * Tells the dispatchers of this process that deliveries of `database` may be due now (a
 * manual retry, say). Dispatchers in other processes hear PostgreSQL's NOTIFY instead.
 */
export function deliveriesDue(database: Database): void {
  listeners.get(database)?.forEach((listener) => listener())
}

/** Calls `listener` on each deliveriesDue(database) of this process; returns its removal. */
export function onDeliveriesDue(database: Database, listener: () => void): () => void {
  let set = listeners.get(database)
  if (set === undefined) listeners.set(database, (set = new Set()))
  set.add(listener)
  return () => set.delete(listener)
}
