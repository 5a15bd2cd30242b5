import { sql } from 'kysely'
import type { ClaimedRow, ClaimQueries, DeliveryKey, DueDelivery } from './claim-queries.js'

/**
 * The dispatcher's statements on SQLite: keys passed as one JSON array (json_each); one
 * writer at a time, so a claim needs no lock.
 */
export const SQLITE_CLAIM_QUERIES: ClaimQueries = {
  async findDueDeliveries(db, now, busy, limit, perEndpoint) {
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
  },

  async claimDeliveries(db, keys, now, leaseUntil) {
    const { rows } = await sql<DeliveryKey>`
      update webhook_deliveries set next_attempt_at = ${leaseUntil}
      where (store_id, id) in (
          select value ->> 0, value ->> 1 from json_each(${JSON.stringify(keys.map((k) => [k.store_id, k.id]))}))
        and status = 'pending' and next_attempt_at <= ${now}
      returning store_id, id`.execute(db)
    return rows
  },

  async findAttemptRows(db, keys) {
    const { rows } = await sql<ClaimedRow>`
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
    return rows
  },

  async recordOutcomes(db, recorded) {
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
  },
}
