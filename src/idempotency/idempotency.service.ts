import { sql } from 'kysely'
import type { Database } from '../db/database.js'
import type { Executor } from '../db/schema.js'
import { AppError, type ErrorCode } from '../errors.js'
import { errorBody } from '../http/error-handler.js'
import { findLiveRecord, saveRecord, tryLockKey } from './idempotency.repository.js'

/** A write sent with an Idempotency-Key. */
export interface IdempotentCall {
  storeId: string
  key: string
  /** What makes a retry the same request: see requestFingerprint. */
  fingerprint: string
}

/** The answer to send: the request's own, or, when `replayed`, the stored one of its key. */
export interface IdempotentAnswer {
  status: number
  body: unknown
  replayed: boolean
}

/**
 * Errors of a request that began its work, stored and replayed like a 200 (as Stripe does):
 * a retry of the same request gets the same answer, whatever happened since. Refusals of
 * the request itself (400) and failures of the service (5xx) are not stored, so a retry
 * with a fixed body, or after an outage, runs again.
 */
const STORED_ERRORS: ReadonlySet<ErrorCode> = new Set([
  'not_found',
  'precondition_failed',
  'invalid_transition',
  'duplicate_sku',
  'duplicate_options',
  'duplicate_slug',
])

/** Thrown while another request with the same key has not been answered yet. */
function keyInUse(): AppError {
  return new AppError(
    'idempotency_key_in_use',
    'A request with this Idempotency-Key is still running; retry once it is answered.',
  )
}

/** Thrown when a key already answered another request (other body, path or method). */
function keyReused(): AppError {
  return new AppError(
    'idempotency_key_reused',
    'This Idempotency-Key was already used for a different request; use a new key.',
  )
}

/**
 * Runs writes sent with an Idempotency-Key at most once per store and key, and replays
 * the stored answer to retries for `ttlSeconds`.
 *
 * The record is written in the transaction of the write itself (on SQLite the group
 * commit's, on PostgreSQL a transaction of its own instead of the single-statement path),
 * so a crash leaves both or neither. A request whose key is already running is refused:
 * within this process by the set of keys in flight, across instances of one PostgreSQL by
 * a transaction-scoped advisory lock, and in the end by the records' primary key.
 */
export function createIdempotentWriter(database: Database, options: { ttlSeconds: number }) {
  const ttlMs = options.ttlSeconds * 1000
  const inFlight = new Set<string>()

  return {
    async run<T>(
      call: IdempotentCall,
      work: (db: Executor) => Promise<T>,
    ): Promise<IdempotentAnswer> {
      // Store ids have no ':', so the slot names one store's key.
      const slot = `${call.storeId}:${call.key}`
      if (inFlight.has(slot)) throw keyInUse()
      inFlight.add(slot)
      try {
        const outcome = await database.write((tx) => runOnce(tx, call, work, ttlMs))
        // A stored error is answered like any error, once its record is committed.
        if (outcome.error) throw outcome.error
        return outcome
      } finally {
        inFlight.delete(slot)
      }
    },
  }
}

type Outcome = IdempotentAnswer & { error?: AppError }

async function runOnce<T>(
  tx: Executor,
  call: IdempotentCall,
  work: (db: Executor) => Promise<T>,
  ttlMs: number,
): Promise<Outcome> {
  const { storeId, key, fingerprint } = call
  const now = new Date()
  const createdAt = now.toISOString()
  if (!(await tryLockKey(tx, storeId, key))) throw keyInUse()
  const found = await findLiveRecord(tx, storeId, key, createdAt)
  if (found) {
    if (found.fingerprint !== fingerprint) throw keyReused()
    return { status: found.status, body: JSON.parse(found.body), replayed: true }
  }
  const outcome = await runWork(tx, work)
  const saved = await saveRecord(tx, {
    storeId,
    key,
    fingerprint,
    status: outcome.status,
    body: JSON.stringify(outcome.body),
    createdAt,
    expiresAt: new Date(now.getTime() + ttlMs).toISOString(),
  })
  if (!saved) throw keyInUse()
  return outcome
}

/**
 * The work, in a savepoint: an error to store rolls back what the work did (PostgreSQL
 * needs that to go on after a failed statement), and the transaction goes on to store it.
 * The savepoint is left for the commit (or the enclosing one's release) to drop, sparing a
 * round trip.
 */
async function runWork<T>(tx: Executor, work: (db: Executor) => Promise<T>): Promise<Outcome> {
  await sql`savepoint idempotent_work`.execute(tx)
  try {
    const data = await work(tx)
    return { status: 200, body: { data }, replayed: false }
  } catch (error) {
    if (!(error instanceof AppError) || !STORED_ERRORS.has(error.code)) throw error
    await sql`rollback to idempotent_work`.execute(tx)
    return { status: error.statusCode, body: errorBody(error), replayed: false, error }
  }
}
