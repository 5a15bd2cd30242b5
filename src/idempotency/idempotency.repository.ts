import { sql } from 'kysely'
import { dialectOf } from '../db/dialect.js'
import type { Executor } from '../db/schema.js'

/** A stored answer, as replayed. */
export interface IdempotencyRecord {
  fingerprint: string
  status: number
  /** JSON text of the response body. */
  body: string
}

/**
 * PostgreSQL: takes a transaction-scoped advisory lock on the store's key, or answers false
 * at once when another transaction (of any instance) holds it, i.e. while a request with
 * this key runs. Released by the commit or rollback. SQLite has a single writer: true.
 */
export async function tryLockKey(db: Executor, storeId: string, key: string): Promise<boolean> {
  if (!dialectOf(db).concurrentWriters) return true
  const { rows } = await sql<{ locked: boolean }>`
    select pg_try_advisory_xact_lock(hashtextextended(${`${storeId}:${key}`}, 0)) as locked
  `.execute(db)
  return rows[0]?.locked === true
}

/** The record of the store's key, unless there is none or it expired by `now`. */
export async function findLiveRecord(
  db: Executor,
  storeId: string,
  key: string,
  now: string,
): Promise<IdempotencyRecord | undefined> {
  return db
    .selectFrom('idempotency_keys')
    .select(['fingerprint', 'status', 'body'])
    .where('store_id', '=', storeId)
    .where('key', '=', key)
    .where('expires_at', '>', now)
    .executeTakeFirst()
}

/**
 * Stores the answer under the store's key, replacing an expired record. False when a live
 * record holds the key: the primary key is the final guard against two requests racing.
 */
export async function saveRecord(
  db: Executor,
  record: IdempotencyRecord & {
    storeId: string
    key: string
    createdAt: string
    expiresAt: string
  },
): Promise<boolean> {
  const saved = await db
    .insertInto('idempotency_keys')
    .values({
      store_id: record.storeId,
      key: record.key,
      fingerprint: record.fingerprint,
      status: record.status,
      body: record.body,
      created_at: record.createdAt,
      expires_at: record.expiresAt,
    })
    .onConflict((oc) =>
      oc
        .columns(['store_id', 'key'])
        .doUpdateSet((eb) => ({
          fingerprint: eb.ref('excluded.fingerprint'),
          status: eb.ref('excluded.status'),
          body: eb.ref('excluded.body'),
          created_at: eb.ref('excluded.created_at'),
          expires_at: eb.ref('excluded.expires_at'),
        }))
        .where('idempotency_keys.expires_at', '<=', record.createdAt),
    )
    .returning('key')
    .executeTakeFirst()
  return saved !== undefined
}

/**
 * Deletes at most `limit` records expired by `now`; returns how many. On PostgreSQL rows
 * locked by a request replacing them are skipped, and several instances may prune at once.
 */
export async function deleteExpiredRecords(
  db: Executor,
  now: string,
  limit: number,
): Promise<number> {
  let expired = db
    .selectFrom('idempotency_keys')
    .select(['store_id', 'key'])
    .where('expires_at', '<=', now)
    .limit(limit)
  expired = dialectOf(db).forUpdateSkipLocked(expired)
  const result = await db
    .deleteFrom('idempotency_keys')
    .where((eb) => eb(eb.refTuple('store_id', 'key'), 'in', expired.$asTuple('store_id', 'key')))
    .executeTakeFirst()
  return Number(result.numDeletedRows)
}
