import { sql } from 'kysely'
import type { Executor } from '../db/schema.js'
import type { EventPageQuery, EventPosition, EventQueries, EventRow } from './event-queries.js'

/**
 * The feed's statements on PostgreSQL: positions are (xid, seq), and only events of
 * transactions below the horizon are read, i.e. of transactions that are over: every
 * transaction still running, and every one that starts later, has an xid at or above it, so no
 * event can later appear at or before the last position returned
 * (docs/decisions/0010-event-feed-positions.md).
 *
 * Ordered by events.xid, the xid8 column: a bare `xid` names the text output column, which
 * sorts '100000' before '99999' (pages repeated and skipped events at each power of ten of
 * the xid, and sorted every row after the cursor instead of reading the index).
 */
const typeIs = (type: string | undefined) => (type === undefined ? sql`` : sql`and type = ${type}`)

/**
 * The feed's horizon (xid8, as decimal text): the oldest xid still running in this database,
 * or the snapshot's xmax when none is. Only transactions of this database can write its
 * events, so one running in another database of the server (a CREATE DATABASE, another
 * service's batch) does not hold the feed back, as the snapshot's xmin, which is the whole
 * server's, did.
 *
 * Read in a statement of its own, before the statement that reads below it: a transaction of
 * this database running when the snapshot was taken is either listed here (so the horizon is
 * at or below its xid) or over before the next statement's snapshot, which then sees its
 * events. pg_stat_activity's backend_xid is a 32-bit xid: its xid8 is the one within 2^31 of
 * the snapshot's xmax (above it for a transaction that took its xid since).
 */
async function horizonOf(db: Executor): Promise<string> {
  const { rows } = await sql<{ horizon: string }>`
    with snapshot as (select pg_snapshot_xmax(pg_current_snapshot())::text::bigint as xmax)
    select least(snapshot.xmax, (
      -- backend_xid's distance from xmax, in (-2^31, 2^31): one taken since is above it
      select min(snapshot.xmax + ((backend_xid::text::bigint - snapshot.xmax + 2147483648)
                                  % 4294967296 + 4294967296) % 4294967296 - 2147483648)
      from pg_stat_activity
      where datname = current_database() and backend_xid is not null
    ))::text as horizon
    from snapshot
  `.execute(db)
  return rows[0]!.horizon
}

export const POSTGRES_EVENT_QUERIES: EventQueries = {
  findHorizon: horizonOf,

  async findEventRows(db, { storeId, after, type, limit }: EventPageQuery, horizon) {
    const { rows } = await sql<EventRow>`
      select xid::text as xid, seq, id, type, object, previous, created_at
      from events
      where store_id = ${storeId}
        and (xid, seq) > (${after.xid}::xid8, ${after.seq}::bigint)
        and xid < ${horizon!}::xid8
        ${typeIs(type)}
      order by events.xid, events.seq
      limit ${limit}
    `.execute(db)
    return rows
  },

  async hasHeldBackEvent(db, { storeId, after, type }, horizon) {
    const { rows } = await sql`
      select 1 from events
      where store_id = ${storeId}
        and (xid, seq) > (${after.xid}::xid8, ${after.seq}::bigint)
        and xid >= ${horizon!}::xid8
        ${typeIs(type)}
      limit 1
    `.execute(db)
    return rows.length > 0
  },

  async hasEventAt(db, storeId, position) {
    const { rows } = await sql`
      select 1 from events
      where store_id = ${storeId} and xid = ${position.xid}::xid8 and seq = ${position.seq}
    `.execute(db)
    return rows.length > 0
  },

  async findPrunedThrough(db, storeId) {
    const { rows } = await sql<EventPosition>`
      select xid::text as xid, seq from event_pruning where store_id = ${storeId}
    `.execute(db)
    return rows[0]
  },

  async findOldestEvents(db, storeId, limit) {
    const horizon = await horizonOf(db)
    const { rows } = await sql<EventPosition & { created_at: Date }>`
      select xid::text as xid, seq, created_at from events
      where store_id = ${storeId} and xid < ${horizon}::xid8
      order by events.xid, events.seq limit ${limit}
    `.execute(db)
    return rows
  },

  async deleteEventsThrough(db, storeId, through) {
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
  },
}
