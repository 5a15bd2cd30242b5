import { sql } from 'kysely'
import { isPostgres } from '../db/database.js'
import type { Executor } from '../db/schema.js'

/**
 * Where an event sits in its store's feed. PostgreSQL: the id of the transaction that wrote
 * it (xid8, as decimal text) and its sequence number. SQLite: xid is always '0', and seq,
 * taken under its single writer, is the order of commits.
 */
export interface EventPosition {
  xid: string
  seq: number
}

/** The position before every event: where the feed of an empty store starts. */
export const START: EventPosition = { xid: '0', seq: 0 }

/** An event as stored; object and previous are rows as JSON (text on SQLite). */
export interface EventRow extends EventPosition {
  id: string
  type: string
  object: string | Record<string, unknown>
  previous: string | Record<string, unknown> | null
  created_at: string | Date
}

// The outbox writer (outbox.ts) writes the rows this module reads; imports of the writer by
// its old names go on working.
export { appendEvents as insertEvents, type EventStamp, type NewEvent } from './outbox.js'

export interface EventPageQuery {
  storeId: string
  /** The page starts just after this position. */
  after: EventPosition
  type: string | undefined
  limit: number
}

/**
 * The store's events after a position, in position order. PostgreSQL returns only events of
 * transactions older than the snapshot's xmin, i.e. of transactions that are over: every
 * transaction still running, and every one that starts later, has a larger xid, so no event
 * can later appear at or before the last position returned (docs/decisions/0010-event-feed-positions.md).
 */
export async function findEventRows(db: Executor, query: EventPageQuery): Promise<EventRow[]> {
  const { storeId, after, type, limit } = query
  if (isPostgres(db)) {
    // Ordered by events.xid, the xid8 column: a bare `xid` names the text output column,
    // which sorts '100000' before '99999' (pages repeated and skipped events at each power of
    // ten of the xid, and sorted every row after the cursor instead of reading the index).
    const { rows } = await sql<EventRow>`
      select xid::text as xid, seq, id, type, object, previous, created_at
      from events
      where store_id = ${storeId}
        and (xid, seq) > (${after.xid}::xid8, ${after.seq}::bigint)
        and xid < pg_snapshot_xmin(pg_current_snapshot())
        ${type === undefined ? sql`` : sql`and type = ${type}`}
      order by events.xid, events.seq
      limit ${limit}
    `.execute(db)
    return rows
  }
  const { rows } = await sql<EventRow>`
    select '0' as xid, seq, id, type, object, previous, created_at
    from events
    where store_id = ${storeId} and seq > ${after.seq}
      ${type === undefined ? sql`` : sql`and type = ${type}`}
    order by seq
    limit ${limit}
  `.execute(db)
  return rows
}

/**
 * PostgreSQL: whether the store has a committed event after `after` (of `type`, if given) that
 * findEventRows holds back, because a transaction older than its own, anywhere on the server,
 * is still running. SQLite holds nothing back.
 */
export async function hasHeldBackEvent(
  db: Executor,
  query: Omit<EventPageQuery, 'limit'>,
): Promise<boolean> {
  if (!isPostgres(db)) return false
  const { storeId, after, type } = query
  const { rows } = await sql`
    select 1 from events
    where store_id = ${storeId}
      and (xid, seq) > (${after.xid}::xid8, ${after.seq}::bigint)
      and xid >= pg_snapshot_xmin(pg_current_snapshot())
      ${type === undefined ? sql`` : sql`and type = ${type}`}
    limit 1
  `.execute(db)
  return rows.length > 0
}

/** Whether the store has an event at exactly this position (one probe of its primary key). */
export async function hasEventAt(
  db: Executor,
  storeId: string,
  position: EventPosition,
): Promise<boolean> {
  if (isPostgres(db)) {
    const { rows } = await sql`
      select 1 from events
      where store_id = ${storeId} and xid = ${position.xid}::xid8 and seq = ${position.seq}
    `.execute(db)
    return rows.length > 0
  }
  if (position.xid !== '0') return false
  const { rows } = await sql`
    select 1 from events where seq = ${position.seq} and store_id = ${storeId}
  `.execute(db)
  return rows.length > 0
}

/** The position of the last event of the store deleted by retention; undefined when none was. */
export async function findPrunedThrough(
  db: Executor,
  storeId: string,
): Promise<EventPosition | undefined> {
  const { rows } = isPostgres(db)
    ? await sql<EventPosition>`
        select xid::text as xid, seq from event_pruning where store_id = ${storeId}`.execute(db)
    : await sql<EventPosition>`
        select '0' as xid, seq from event_pruning where store_id = ${storeId}`.execute(db)
  return rows[0]
}

/**
 * The stores that have events, each found by one index probe (a loose index scan), however
 * many events each has.
 */
export async function findStoresWithEvents(db: Executor): Promise<string[]> {
  const { rows } = await sql<{ store_id: string }>`
    with recursive stores(store_id) as (
      select min(store_id) from events
      union all
      select (select min(e.store_id) from events e where e.store_id > stores.store_id)
      from stores where stores.store_id is not null
    )
    select store_id from stores where store_id is not null
  `.execute(db)
  return rows.map((row) => row.store_id)
}

/**
 * The store's oldest events, at most `limit`, with their times: what retention may delete
 * next. PostgreSQL: of finished transactions only, as the feed reads them.
 */
export async function findOldestEvents(
  db: Executor,
  storeId: string,
  limit: number,
): Promise<(EventPosition & { created_at: string | Date })[]> {
  const { rows } = isPostgres(db)
    ? await sql<EventPosition & { created_at: string }>`
        select xid::text as xid, seq, created_at from events
        where store_id = ${storeId} and xid < pg_snapshot_xmin(pg_current_snapshot())
        order by events.xid, events.seq limit ${limit}`.execute(db)
    : await sql<EventPosition & { created_at: string }>`
        select '0' as xid, seq, created_at from events
        where store_id = ${storeId} order by seq limit ${limit}`.execute(db)
  return rows
}

/**
 * Deletes the store's events up to `through` (included) and records it as how far the store
 * was pruned: a cursor before it is expired. Run in one transaction.
 */
export async function deleteEventsThrough(
  db: Executor,
  storeId: string,
  through: EventPosition,
): Promise<number> {
  if (isPostgres(db)) {
    const result = await sql`
      delete from events
      where store_id = ${storeId} and (xid, seq) <= (${through.xid}::xid8, ${through.seq}::bigint)
    `.execute(db)
    await sql`
      insert into event_pruning (store_id, xid, seq)
      values (${storeId}, ${through.xid}::xid8, ${through.seq})
      on conflict (store_id) do update set xid = excluded.xid, seq = excluded.seq
      where (event_pruning.xid, event_pruning.seq) < (excluded.xid, excluded.seq)
    `.execute(db)
    return Number(result.numAffectedRows ?? 0)
  }
  const result = await sql`
    delete from events where store_id = ${storeId} and seq <= ${through.seq}
  `.execute(db)
  await sql`
    insert into event_pruning (store_id, seq) values (${storeId}, ${through.seq})
    on conflict (store_id) do update set seq = excluded.seq
    where event_pruning.seq < excluded.seq
  `.execute(db)
  return Number(result.numAffectedRows ?? 0)
}
