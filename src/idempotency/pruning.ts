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
 * The timer does not keep the process alive; stop() waits for a pruning under way.
 */
export function startIdempotencyPruning(database: Database, options: PruningOptions) {
  let running: Promise<void> | undefined
  let stopped = false

  const pruneAll = async () => {
    try {
      let deleted = options.batchSize
      while (!stopped && deleted === options.batchSize) {
        deleted = await pruneExpiredIdempotencyKeys(database, options.batchSize)
      }
    } catch (error) {
      options.onError?.(error)
    }
  }

  const timer = setInterval(() => {
    // A pruning that outlasts the interval is not joined by another.
    if (running || stopped) return
    running = pruneAll().finally(() => {
      running = undefined
    })
  }, options.intervalMs)
  timer.unref()

  return {
    async stop(): Promise<void> {
      stopped = true
      clearInterval(timer)
      await running
    },
  }
}
