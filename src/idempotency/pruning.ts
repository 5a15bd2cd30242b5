import { startPeriodicTask, type PeriodicTask } from '../background/periodic-task.js'
import type { Database } from '../db/database.js'
import { deleteExpiredRecords } from './idempotency.repository.js'

export interface PruningOptions {
  /** Time between two prunings. */
  intervalMs: number
  /** Most records deleted by one statement; each batch is a write of its own. */
  batchSize: number
  /** Told when a pruning fails; the next one runs on schedule. */
  onError?: (error: unknown) => void
}

/** Deletes at most `batchSize` expired idempotency records, in one write; returns how many. */
export function pruneExpiredIdempotencyKeys(
  database: Database,
  batchSize: number,
): Promise<number> {
  const now = new Date().toISOString()
  return database.writeAtomic((db) => deleteExpiredRecords(db, now, batchSize))
}

/**
 * Prunes expired idempotency records every `intervalMs`, batch after batch until one comes
 * back short: bounded writes, so requests in between never wait behind one large delete.
 * stop() waits for a pruning under way.
 */
export function startIdempotencyPruning(database: Database, options: PruningOptions): PeriodicTask {
  return startPeriodicTask(async (isStopped) => {
    let deleted = options.batchSize
    while (!isStopped() && deleted === options.batchSize) {
      deleted = await pruneExpiredIdempotencyKeys(database, options.batchSize)
    }
  }, options)
}
