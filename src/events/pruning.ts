import { startPeriodicTask, type PeriodicTask } from '../background/periodic-task.js'
import type { Database } from '../db/database.js'
import { toIso } from '../db/values.js'
import { deleteEventsThrough, findOldestEvents, findStoresWithEvents } from './event.repository.js'

export interface EventPruningOptions {
  /** Events older than this many days are deleted. */
  retentionDays: number
  /** Most events deleted by one write; a store's old events go batch after batch. */
  batchSize: number
}

const DAY_MS = 24 * 60 * 60 * 1000

/**
 * Deletes the events older than the retention at `now`, store by store, oldest first, each
 * batch a write of its own, and records per store the last position deleted (a cursor before
 * it is then 410). Deletion stops at the first event of the feed that is young enough, so
 * what is deleted is always a beginning of the feed: no cursor can point past a gap. Returns
 * how many events were deleted.
 */
export async function pruneEvents(
  database: Database,
  now: Date,
  options: EventPruningOptions,
): Promise<number> {
  const cutoff = new Date(now.getTime() - options.retentionDays * DAY_MS).toISOString()
  let deleted = 0
  for (const storeId of await findStoresWithEvents(database.kysely)) {
    for (;;) {
      const oldest = await findOldestEvents(database.kysely, storeId, options.batchSize)
      let expired = 0
      while (expired < oldest.length && toIso(oldest[expired]!.created_at) < cutoff) expired++
      if (expired === 0) break
      const through = oldest[expired - 1]!
      deleted += await database.write((tx) =>
        deleteEventsThrough(tx, storeId, { xid: through.xid, seq: Number(through.seq) }),
      )
      if (expired < options.batchSize) break
    }
  }
  return deleted
}

/**
 * Prunes expired events every `intervalMs`, with the time `clock` gives (tests pass their
 * own). stop() waits for a pruning under way.
 */
export function startEventPruning(
  database: Database,
  options: EventPruningOptions & {
    intervalMs: number
    clock?: () => Date
    onError?: (error: unknown) => void
  },
): PeriodicTask {
  const clock = options.clock ?? (() => new Date())
  return startPeriodicTask(() => pruneEvents(database, clock(), options), options)
}
