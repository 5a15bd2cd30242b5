import { sql } from 'kysely'
import { dialectOf, type Dialect } from '../db/dialect.js'
import type { Executor } from '../db/schema.js'
import type { EventQueries } from './event-queries.js'
import { POSTGRES_EVENT_QUERIES } from './event-queries.postgres.js'
import { SQLITE_EVENT_QUERIES } from './event-queries.sqlite.js'

const QUERIES: Record<Dialect, EventQueries> = {
  postgres: POSTGRES_EVENT_QUERIES,
  sqlite: SQLITE_EVENT_QUERIES,
}

const queriesOf = (db: Executor): EventQueries => QUERIES[dialectOf(db).name]

export const findHorizon: EventQueries['findHorizon'] = (db) => queriesOf(db).findHorizon(db)
export const findEventRows: EventQueries['findEventRows'] = (db, query, horizon) =>
  queriesOf(db).findEventRows(db, query, horizon)
export const hasHeldBackEvent: EventQueries['hasHeldBackEvent'] = (db, query, horizon) =>
  queriesOf(db).hasHeldBackEvent(db, query, horizon)
export const hasEventAt: EventQueries['hasEventAt'] = (db, storeId, position) =>
  queriesOf(db).hasEventAt(db, storeId, position)
export const findPrunedThrough: EventQueries['findPrunedThrough'] = (db, storeId) =>
  queriesOf(db).findPrunedThrough(db, storeId)
export const findOldestEvents: EventQueries['findOldestEvents'] = (db, storeId, limit) =>
  queriesOf(db).findOldestEvents(db, storeId, limit)
export const deleteEventsThrough: EventQueries['deleteEventsThrough'] = (db, storeId, through) =>
  queriesOf(db).deleteEventsThrough(db, storeId, through)

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
