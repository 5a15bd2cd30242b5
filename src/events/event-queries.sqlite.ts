import { sql } from 'kysely'
import type { EventPageQuery, EventPosition, EventQueries, EventRow } from './event-queries.js'

/**
 * The feed's statements on SQLite: xid is always '0' and seq, taken under the single writer,
 * is the order of commits, so nothing is ever held back.
 */
const typeIs = (type: string | undefined) => (type === undefined ? sql`` : sql`and type = ${type}`)

export const SQLITE_EVENT_QUERIES: EventQueries = {
  findHorizon: async () => undefined,

  async findEventRows(db, { storeId, after, type, limit }: EventPageQuery) {
    const { rows } = await sql<EventRow>`
      select '0' as xid, seq, id, type, object, previous, created_at
      from events
      where store_id = ${storeId} and seq > ${after.seq}
        ${typeIs(type)}
      order by seq
      limit ${limit}
    `.execute(db)
    return rows
  },

  hasHeldBackEvent: async () => false,

  async hasEventAt(db, storeId, position) {
    if (position.xid !== '0') return false
    const { rows } = await sql`
      select 1 from events where seq = ${position.seq} and store_id = ${storeId}
    `.execute(db)
    return rows.length > 0
  },

  async findPrunedThrough(db, storeId) {
    const { rows } = await sql<EventPosition>`
      select '0' as xid, seq from event_pruning where store_id = ${storeId}
    `.execute(db)
    return rows[0]
  },

  async findOldestEvents(db, storeId, limit) {
    const { rows } = await sql<EventPosition & { created_at: string }>`
      select '0' as xid, seq, created_at from events
      where store_id = ${storeId} order by seq limit ${limit}
    `.execute(db)
    return rows
  },

  async deleteEventsThrough(db, storeId, through) {
    const result = await sql`
      delete from events where store_id = ${storeId} and seq <= ${through.seq}
    `.execute(db)
    await sql`
      insert into event_pruning (store_id, seq) values (${storeId}, ${through.seq})
      on conflict (store_id) do update set seq = excluded.seq
      where event_pruning.seq < excluded.seq
    `.execute(db)
    return Number(result.numAffectedRows ?? 0)
  },
}
