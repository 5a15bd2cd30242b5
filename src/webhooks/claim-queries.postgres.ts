import { sql } from 'kysely'
import type { ClaimedRow, ClaimQueries, DeliveryKey, DueDelivery } from './claim-queries.js'

/**
 * The dispatcher's statements on PostgreSQL: endpoints walked with LATERAL subqueries, keys
 * passed as arrays through unnest(), claims that skip rows another dispatcher locked.
 */
export const POSTGRES_CLAIM_QUERIES: ClaimQueries = {
  async findDueDeliveries(db, now, busy, limit, perEndpoint) {
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
  },

  async claimDeliveries(db, keys, now, leaseUntil) {
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
  },

  async findAttemptRows(db, keys) {
    // Key by key, each table in a LATERAL with LIMIT 1: probes of primary keys, never a
    // scan, whatever the statistics say (as an IN over unnest() on a table never analyzed,
    // the planner read every delivery of the endpoint through webhook_deliveries_of_endpoint).
    const { rows } = await sql<ClaimedRow>`
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
    return rows
  },

  async recordOutcomes(db, recorded) {
    const column = <T>(pick: (r: (typeof recorded)[number]) => T) => recorded.map(pick)
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
  },
}
