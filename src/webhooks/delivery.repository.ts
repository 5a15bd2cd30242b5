import { sql, type RawBuilder } from 'kysely'
import { dialectOf, type SqlDialect } from '../db/dialect.js'
import type { Executor } from '../db/schema.js'
import { DELIVERIES_CHANNEL } from './wakeup.js'

/**
 * The deliveries as the API reads and retries them. The dispatcher's statements (claims,
 * outcomes) are in delivery-claim.repository.ts.
 */

/** A delivery as the API lists it. */
export interface DeliveryRow {
  id: string
  event_id: string
  event_type: string
  status: 'pending' | 'succeeded' | 'failed'
  attempts: number
  last_attempt_at: string | Date | null
  last_status_code: number | null
  next_attempt_at: string | Date | null
  created_at: string | Date
}

/** A delivery as the list reads it: with its event's record (null once the event is pruned). */
export interface ListedDeliveryRow extends DeliveryRow {
  event_object: string | Record<string, unknown> | null
}

const DELIVERY_COLUMNS = [
  'id',
  'event_id',
  'event_type',
  'status',
  'attempts',
  'last_attempt_at',
  'last_status_code',
  'next_attempt_at',
  'created_at',
] as const

/**
 * A delivery's event, by the event's key as the dispatcher finds it: (store_id, xid, seq) on
 * PostgreSQL, (store_id, seq) on SQLite, whose events have no xid (seq is the rowid).
 */
const EVENT_OF_DELIVERY: Record<SqlDialect['name'], RawBuilder<boolean>> = {
  sqlite: sql`ev.store_id = d.store_id and ev.seq = d.event_seq`,
  postgres: sql`ev.store_id = d.store_id and ev.seq = d.event_seq and ev.xid = d.event_xid`,
}

/** An endpoint's deliveries, newest first, after the position `after` when given. */
export async function listDeliveryRows(
  db: Executor,
  storeId: string,
  endpointId: string,
  after: { createdAt: string; id: string } | undefined,
  limit: number,
): Promise<ListedDeliveryRow[]> {
  const { cast, name } = dialectOf(db)
  let query = db
    .selectFrom('webhook_deliveries as d')
    .leftJoin('events as ev', (join) => join.on(EVENT_OF_DELIVERY[name]))
    .select(DELIVERY_COLUMNS.map((column) => `d.${column}` as const))
    .select('ev.object as event_object')
    .where('d.store_id', '=', storeId)
    .where('d.endpoint_id', '=', endpointId)
  if (after !== undefined) {
    query = query.where(
      sql<boolean>`(d.created_at, d.id) < (${cast(after.createdAt, 'timestamptz')}, ${cast(after.id, 'uuid')})`,
    )
  }
  return (await query
    .orderBy('d.created_at', 'desc')
    .orderBy('d.id', 'desc')
    .limit(limit)
    .execute()) as ListedDeliveryRow[]
}

/** The current titles of the store's collections of these ids (a deleted one is absent). */
export async function findCollectionTitles(
  db: Executor,
  storeId: string,
  ids: readonly string[],
): Promise<Map<string, string>> {
  if (ids.length === 0) return new Map()
  const rows = await db
    .selectFrom('collections')
    .select(['id', 'title'])
    .where('store_id', '=', storeId)
    .where('id', 'in', [...new Set(ids)])
    .execute()
  return new Map(rows.map((row) => [String(row.id), row.title]))
}

/**
 * Makes the delivery pending and due at `now`, for one more attempt, and answers it; undefined
 * when the endpoint has no such delivery. A finished delivery (failed or succeeded) is marked
 * manual_retry: that attempt alone, failed again if it fails. One already pending for such an
 * attempt is left as it is, so that a retry asked twice makes one attempt, not two at once.
 * On PostgreSQL, NOTIFYs the dispatchers at commit.
 */
export async function retryDeliveryRow(
  db: Executor,
  storeId: string,
  endpointId: string,
  id: string,
  now: string,
): Promise<DeliveryRow | undefined> {
  const row = await db
    .updateTable('webhook_deliveries')
    .set({
      status: 'pending',
      // Each right-hand side reads the row as it was.
      next_attempt_at: sql`case when status = 'pending' and manual_retry then next_attempt_at else ${now} end`,
      manual_retry: sql`(status <> 'pending' or manual_retry)`,
    })
    .where('store_id', '=', storeId)
    .where('endpoint_id', '=', endpointId)
    .where('id', '=', id)
    .returning(DELIVERY_COLUMNS)
    .executeTakeFirst()
  const notify = dialectOf(db).notify(DELIVERIES_CHANNEL)
  if (row !== undefined && notify !== undefined) await notify.execute(db)
  return row as DeliveryRow | undefined
}
