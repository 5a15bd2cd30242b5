import { sql } from 'kysely'
import { isPostgres } from '../db/database.js'
import type { Executor } from '../db/schema.js'
import type { EventRow } from '../events/event.repository.js'
import type { DeliveryOutcome } from './delivery-outcome.js'

/**
 * The dispatcher's statements: which deliveries are due, their claims (a lease on each), what
 * their attempts need, the outcomes recorded and the claims given back, and the age of the
 * oldest pending one. The API's (listing, manual retry) are in delivery.repository.ts.
 */

/** A delivery's key: deliveries are per store, like everything else. */
export interface DeliveryKey {
  store_id: string
  id: string
}

/** A due delivery, as the claim first sees it. */
export interface DueDelivery extends DeliveryKey {
  endpoint_id: string
}

/** A claimed delivery with what its attempt needs: the endpoint and the event (null if pruned). */
export interface ClaimedDelivery extends DeliveryKey {
  endpoint_id: string
  event_id: string
  attempts: number
  url: string
  secret: string
  /** A manual retry of a finished delivery: its one attempt, after which it is finished again. */
  manualRetry: boolean
  event: EventRow | null
}

/**
 * Up to `limit` pending deliveries due at `now`, the longest due first, of enabled endpoints
 * not in `busy` (those at their limit of attempts in flight in this process), at most
 * `perEndpoint` of each. Read endpoint by endpoint (webhook_deliveries_due_by_endpoint), so
 * that the due backlog of a busy endpoint, a dead one say, costs nothing: read in due order
 * across all endpoints, every pass walked through it to reach the others'. On SQLite `cross
 * join` keeps the endpoints outside (SQLite's planner may otherwise scan every delivery and
 * test it against the subquery). Reads only: the claim follows.
 */
export async function findDueDeliveries(
  db: Executor,
  now: string,
  busy: string[],
  limit: number,
  perEndpoint: number,
): Promise<DueDelivery[]> {
  if (isPostgres(db)) {
    const { rows } = await sql<DueDelivery>`
      select d.store_id, d.id, d.endpoint_id from webhook_endpoints e
      cross join lateral (
        select x.store_id, x.id, x.endpoint_id, x.next_attempt_at from webhook_deliveries x
        where x.store_id = e.store_id and x.endpoint_id = e.id
          and x.status = 'pending' and x.next_attempt_at <= ${now}::timestamptz
        order by x.next_attempt_at
        limit ${perEndpoint}) d
      where e.enabled and not (e.id = any(${busy}::uuid[]))
      order by d.next_attempt_at
      limit ${limit}`.execute(db)
    return rows
  }
  const { rows } = await sql<DueDelivery>`
    select d.store_id, d.id, d.endpoint_id from webhook_endpoints e
    cross join webhook_deliveries d on d.rowid in (
      select x.rowid from webhook_deliveries x
      where x.store_id = e.store_id and x.endpoint_id = e.id
        and x.status = 'pending' and x.next_attempt_at <= ${now}
      order by x.next_attempt_at
      limit ${perEndpoint})
    where e.enabled = 1 and e.id not in (select value from json_each(${JSON.stringify(busy)}))
    order by d.next_attempt_at
    limit ${limit}`.execute(db)
  return rows
}

/** Whether any store has an enabled endpoint: whether a write can have queued a delivery. */
export async function hasEnabledEndpoint(db: Executor): Promise<boolean> {
  const enabled = isPostgres(db) ? sql`enabled` : sql`enabled = 1`
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
  if (isPostgres(db)) {
    // The rows are found by their key, then checked once locked (a lock returns the row's
    // latest version). With the checks beside the key, the planner took the partial index
    // of due deliveries and walked every due delivery of the store for each key. Each key is
    // looked up on its own, in a LATERAL subquery with LIMIT 1: one the planner cannot pull
    // up into a join, so a probe of the primary key whatever the statistics say (joined to
    // unnest(), a fresh or growing table was hash joined, read whole on every pass). The
    // UPDATE finds the locked rows by their key (not their ctid: see recordOutcomes): its
    // estimate of the CTE's rows once filtered is PostgreSQL's default selectivities, not
    // the table's statistics (about one row), so it probes the primary key too.
    const { rows } = await sql<DeliveryKey>`
      with locked as (
        select d.store_id, d.id, d.status, d.next_attempt_at
        from unnest(${keys.map((k) => k.store_id)}::text[], ${keys.map((k) => k.id)}::uuid[])
          as k(store_id, id)
        cross join lateral (
          select x.store_id, x.id, x.status, x.next_attempt_at from webhook_deliveries x
          where x.store_id = k.store_id and x.id = k.id
          limit 1
          for update skip locked) d
      )
      update webhook_deliveries d set next_attempt_at = ${leaseUntil}::timestamptz
      from locked c
      where d.store_id = c.store_id and d.id = c.id
        and c.status = 'pending' and c.next_attempt_at <= ${now}::timestamptz
      returning d.store_id, d.id`.execute(db)
    return rows
  }
  const { rows } = await sql<DeliveryKey>`
    update webhook_deliveries set next_attempt_at = ${leaseUntil}
    where (store_id, id) in (
        select value ->> 0, value ->> 1 from json_each(${JSON.stringify(keys.map((k) => [k.store_id, k.id]))}))
      and status = 'pending' and next_attempt_at <= ${now}
    returning store_id, id`.execute(db)
  return rows
}

interface ClaimedRow {
  store_id: string
  id: string
  endpoint_id: string
  event_id: string
  attempts: number
  url: string
  secret: string
  manual_retry: boolean | number
  xid: string | null
  seq: number | null
  type: string | null
  object: string | Record<string, unknown> | null
  previous: string | Record<string, unknown> | null
  created_at: string | Date | null
}

/** What the attempts of claimed deliveries need: the endpoint's URL and secret, the event. */
export async function findAttempts(db: Executor, keys: DeliveryKey[]): Promise<ClaimedDelivery[]> {
  if (keys.length === 0) return []
  const postgres = isPostgres(db)
  const { rows } = postgres
    ? // Key by key, each table in a LATERAL with LIMIT 1: probes of primary keys, never a
      // scan, whatever the statistics say (as an IN over unnest() on a table never analyzed,
      // the planner read every delivery of the endpoint through webhook_deliveries_of_endpoint).
      await sql<ClaimedRow>`
        select d.store_id, d.id, d.endpoint_id, d.event_id, d.attempts, w.url, w.secret,
          d.manual_retry, ev.xid::text as xid, ev.seq, ev.type, ev.object, ev.previous, ev.created_at
        from unnest(${keys.map((k) => k.store_id)}::text[], ${keys.map((k) => k.id)}::uuid[])
          as k(store_id, id)
        cross join lateral (
          select x.store_id, x.id, x.endpoint_id, x.event_id, x.attempts, x.manual_retry,
            x.event_xid, x.event_seq
          from webhook_deliveries x where x.store_id = k.store_id and x.id = k.id
          limit 1) d
        cross join lateral (
          select x.url, x.secret from webhook_endpoints x
          where x.store_id = d.store_id and x.id = d.endpoint_id
          limit 1) w
        left join lateral (
          select x.xid, x.seq, x.type, x.object, x.previous, x.created_at from events x
          where x.store_id = d.store_id and x.xid = d.event_xid and x.seq = d.event_seq
          limit 1) ev on true`.execute(db)
    : await sql<ClaimedRow>`
        select d.store_id, d.id, d.endpoint_id, d.event_id, d.attempts, w.url, w.secret,
          d.manual_retry, case when ev.seq is null then null else '0' end as xid, ev.seq, ev.type, ev.object,
          ev.previous, ev.created_at
        from webhook_deliveries d
        join webhook_endpoints w on w.store_id = d.store_id and w.id = d.endpoint_id
        left join events ev on ev.seq = d.event_seq
        where (d.store_id, d.id) in (
          select value ->> 0, value ->> 1 from json_each(${JSON.stringify(keys.map((k) => [k.store_id, k.id]))}))`.execute(
        db,
      )
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

/** An outcome to record, with the delivery it is of. */
export interface RecordedOutcome {
  delivery: DeliveryKey
  outcome: DeliveryOutcome
}

/**
 * Records the outcomes of attempts of claimed deliveries, in one statement (a pass records
 * those of all the attempts finished since the last): one statement to compile and run
 * rather than one per delivery.
 */
export async function recordOutcomes(db: Executor, recorded: RecordedOutcome[]): Promise<void> {
  if (recorded.length === 0) return
  const column = <T>(pick: (r: RecordedOutcome) => T) => recorded.map(pick)
  if (isPostgres(db)) {
    // Joined to unnest(), a fresh or growing table was hash joined, read whole on every pass,
    // and an UPDATE's target cannot be a LATERAL subquery. Nor can the rows be locked by key
    // in a CTE and updated by the ctid it returns: when the lock waits for another
    // transaction's update of the row (a manual retry), it returns the new version, which
    // this statement's snapshot does not see, and the outcome is silently not recorded
    // (tried: UPDATE 0); and that join on ctid was hash joined over a scan all the same. So
    // the plan is steered instead: with sequential scans off for the rest of the transaction
    // (the dispatcher's write, whose other statements are key lookups too), each outcome is a
    // probe of the primary key. The statement is unchanged, so a concurrent update is
    // rechecked as in any UPDATE, and no outcome is skipped. Outside a transaction the
    // setting lasts for its own statement only: no effect, no harm.
    await sql`select set_config('enable_seqscan', 'off', true)`.execute(db)
    await sql`
      update webhook_deliveries d set status = o.status, attempts = o.attempts,
        last_attempt_at = o.last_attempt_at, last_status_code = o.last_status_code,
        last_error = o.last_error, next_attempt_at = o.next_attempt_at, manual_retry = false
      from unnest(
        ${column((r) => r.delivery.store_id)}::text[], ${column((r) => r.delivery.id)}::uuid[],
        ${column((r) => r.outcome.status)}::text[], ${column((r) => r.outcome.attempts)}::integer[],
        ${column((r) => r.outcome.lastAttemptAt)}::timestamptz[],
        ${column((r) => r.outcome.lastStatusCode)}::integer[],
        ${column((r) => r.outcome.lastError)}::text[],
        ${column((r) => r.outcome.nextAttemptAt)}::timestamptz[]
      ) as o(store_id, id, status, attempts, last_attempt_at, last_status_code, last_error,
        next_attempt_at)
      where d.store_id = o.store_id and d.id = o.id`.execute(db)
    return
  }
  const rows = recorded.map(({ delivery, outcome }) => [
    delivery.store_id,
    delivery.id,
    outcome.status,
    outcome.attempts,
    outcome.lastAttemptAt,
    outcome.lastStatusCode,
    outcome.lastError,
    outcome.nextAttemptAt,
  ])
  await sql`
    update webhook_deliveries set status = o.value ->> 2, attempts = o.value ->> 3,
      last_attempt_at = o.value ->> 4, last_status_code = o.value ->> 5,
      last_error = o.value ->> 6, next_attempt_at = o.value ->> 7, manual_retry = 0
    from json_each(${JSON.stringify(rows)}) as o
    where webhook_deliveries.store_id = o.value ->> 0
      and webhook_deliveries.id = o.value ->> 1`.execute(db)
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
    .where(isPostgres(db) ? sql<boolean>`e.enabled` : sql<boolean>`e.enabled = 1`)
    .executeTakeFirst()
  return (row?.oldest as string | Date | null) ?? undefined
}
