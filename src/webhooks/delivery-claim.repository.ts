import { sql } from 'kysely'
import { dialectOf, type Dialect } from '../db/dialect.js'
import type { Executor } from '../db/schema.js'
import type {
  ClaimedDelivery,
  ClaimQueries,
  DeliveryKey,
  DueDelivery,
  RecordedOutcome,
} from './claim-queries.js'
import { POSTGRES_CLAIM_QUERIES } from './claim-queries.postgres.js'
import { SQLITE_CLAIM_QUERIES } from './claim-queries.sqlite.js'

/**
 * The dispatcher's statements: which deliveries are due, their claims (a lease on each), what
 * their attempts need, the outcomes recorded and the claims given back, and the age of the
 * oldest pending one. The API's (listing, manual retry) are in delivery.repository.ts.
 */

const QUERIES: Record<Dialect, ClaimQueries> = {
  postgres: POSTGRES_CLAIM_QUERIES,
  sqlite: SQLITE_CLAIM_QUERIES,
}

const queriesOf = (db: Executor): ClaimQueries => QUERIES[dialectOf(db).name]

/**
 * Up to `limit` pending deliveries due at `now`, the longest due first, of enabled endpoints
 * not in `busy` (those at their limit of attempts in flight in this process), at most
 * `perEndpoint` of each. Read endpoint by endpoint (webhook_deliveries_due_by_endpoint), so
 * that the due backlog of a busy endpoint, a dead one say, costs nothing: read in due order
 * across all endpoints, every pass walked through it to reach the others'. On SQLite `cross
 * join` keeps the endpoints outside (SQLite's planner may otherwise scan every delivery and
 * test it against the subquery). Reads only: the claim follows.
 */
export function findDueDeliveries(
  db: Executor,
  now: string,
  busy: string[],
  limit: number,
  perEndpoint: number,
): Promise<DueDelivery[]> {
  return queriesOf(db).findDueDeliveries(db, now, busy, limit, perEndpoint)
}

/** Whether any store has an enabled endpoint: whether a write can have queued a delivery. */
export async function hasEnabledEndpoint(db: Executor): Promise<boolean> {
  const enabled = dialectOf(db).isTrue('enabled')
  const { rows } = await sql`select 1 from webhook_endpoints where ${enabled} limit 1`.execute(db)
  return rows.length > 0
}

/**
 * Claims those of `keys` that are still pending and due at `now` (another dispatcher may have
 * claimed some since they were read): their next_attempt_at becomes `leaseUntil`, so that no
 * other dispatcher takes them before then, and a crash mid-attempt leaves them due again at
 * that time. PostgreSQL skips rows another claim has locked (FOR UPDATE SKIP LOCKED) and
 * re-checks the others once locked. Run in a transaction (the caller's write).
 */
export async function claimDeliveries(
  db: Executor,
  keys: DeliveryKey[],
  now: string,
  leaseUntil: string,
): Promise<DeliveryKey[]> {
  if (keys.length === 0) return []
  return queriesOf(db).claimDeliveries(db, keys, now, leaseUntil)
}

/** What the attempts of claimed deliveries need: the endpoint's URL and secret, the event. */
export async function findAttempts(db: Executor, keys: DeliveryKey[]): Promise<ClaimedDelivery[]> {
  if (keys.length === 0) return []
  const rows = await queriesOf(db).findAttemptRows(db, keys)
  return rows.map((row) => ({
    store_id: row.store_id,
    id: row.id,
    endpoint_id: row.endpoint_id,
    event_id: row.event_id,
    attempts: row.attempts,
    url: row.url,
    secret: row.secret,
    manualRetry: Boolean(row.manual_retry),
    event:
      row.seq === null
        ? null
        : {
            xid: row.xid!,
            seq: Number(row.seq),
            id: row.event_id,
            type: row.type!,
            object: row.object!,
            previous: row.previous,
            created_at: row.created_at!,
          },
  }))
}

/**
 * Records the outcomes of attempts of claimed deliveries, in one statement (a pass records
 * those of all the attempts finished since the last): one statement to compile and run
 * rather than one per delivery.
 */
export async function recordOutcomes(db: Executor, recorded: RecordedOutcome[]): Promise<void> {
  if (recorded.length === 0) return
  await queriesOf(db).recordOutcomes(db, recorded)
}

/**
 * Makes a delivery claimed but not attempted due at `now` again, if its claim is still the
 * one that set next_attempt_at to `leaseUntil`.
 */
export async function releaseDelivery(
  db: Executor,
  key: DeliveryKey,
  leaseUntil: string,
  now: string,
): Promise<void> {
  await db
    .updateTable('webhook_deliveries')
    .set({ next_attempt_at: now })
    .where('store_id', '=', key.store_id)
    .where('id', '=', key.id)
    .where('status', '=', 'pending')
    .where('next_attempt_at', '=', leaseUntil)
    .execute()
}

/**
 * When the oldest pending delivery of an enabled endpoint was enqueued, or undefined when none
 * is pending. A disabled endpoint's deliveries wait on purpose, until it is enabled again: an
 * age that grew with them would look like deliveries stuck.
 */
export async function findOldestPending(db: Executor): Promise<string | Date | undefined> {
  const row = await db
    .selectFrom('webhook_deliveries as d')
    .innerJoin('webhook_endpoints as e', (join) =>
      join.onRef('e.store_id', '=', 'd.store_id').onRef('e.id', '=', 'd.endpoint_id'),
    )
    .select((eb) => eb.fn.min('d.created_at').as('oldest'))
    .where('d.status', '=', 'pending')
    .where(dialectOf(db).isTrue('e.enabled'))
    .executeTakeFirst()
  return (row?.oldest as string | Date | null) ?? undefined
}
