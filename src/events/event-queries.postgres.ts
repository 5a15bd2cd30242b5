import { sql } from 'kysely'
import type { EventPageQuery, EventPosition, EventQueries, EventRow } from './event-queries.js'

/**
 * The feed's statements on PostgreSQL: positions are (xid, seq), and only events of
 * transactions older than the snapshot's xmin are read, i.e. of transactions that are over:
 * every transaction still running, and every one that starts later, has a larger xid, so no
 * event can later appear at or before the last position returned
 * (docs/decisions/0010-event-feed-positions.md).
 *
 * Ordered by events.xid, the xid8 column: a bare `xid` names the text output column, which
 * sorts '100000' before '99999' (pages repeated and skipped events at each power of ten of
 * the xid, and sorted every row after the cursor instead of reading the index).
 */
const typeIs = (type: string | undefined) => (type === undefined ? sql`` : sql`and type = ${type}`)

export const POSTGRES_EVENT_QUERIES: EventQueries = {
  async findEventRows(db, { storeId, after, type, limit }: EventPageQuery) {
    const { rows } = await sql<EventRow>`
      select xid::text as xid, seq, id, type, object, previous, created_at
      from events
      where store_id = ${storeId}
        and (xid, seq) > (${after.xid}::xid8, ${after.seq}::bigint)
        and xid < pg_snapshot_xmin(pg_current_snapshot())
        ${typeIs(type)}
      order by events.xid, events.seq
      limit ${limit}
    `.execute(db)
    return rows
  },

  async hasHeldBackEvent(db, { storeId, after, type }) {
    const { rows } = await sql`
      select 1 from events
      where store_id = ${storeId}
        and (xid, seq) > (${after.xid}::xid8, ${after.seq}::bigint)
        and xid >= pg_snapshot_xmin(pg_current_snapshot())
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
    const { rows } = await sql<EventPosition & { created_at: Date }>`
      select xid::text as xid, seq, created_at from events
      where store_id = ${storeId} and xid < pg_snapshot_xmin(pg_current_snapshot())
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
