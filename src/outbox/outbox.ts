import { sql, type RawBuilder } from 'kysely'
import { insertRows } from '../db/multi-row-insert.js'
import { statement } from '../db/statements.js'
import type { Executor } from '../db/schema.js'
import { newId, nowIso } from '../db/values.js'
import type { EventType } from './event-types.js'

/**
 * The event outbox: the one writer of event rows, below the catalogue (it imports nothing of
 * it). The service that decides a change says which event it emits (`pendingEvent`); every
 * path writes that event's row through this module: one by one (`appendEvent`), several at
 * once (`appendEvents`, an import's batch), or inside the PostgreSQL statement of the change
 * (`eventInStatement`). The feed that reads them back sits above the catalogue
 * (event.service.ts).
 */

export { EVENT_TYPES, type EventType } from './event-types.js'

/** The event a service decided a change emits: its type, id and time. */
export interface PendingEvent {
  type: EventType
  id: string
  createdAt: string
}

/**
 * The event a change emits, stamped now (or at `createdAt`, the time of the change's rows): the
 * service decides it, a repository writes it.
 */
export function pendingEvent(type: EventType, createdAt: string = nowIso()): PendingEvent {
  return { type, id: newId(), createdAt }
}

/** An event's row as the outbox writes it: the record's row after the change (before it, for a delete). */
export interface NewEvent {
  storeId: string
  id: string
  type: string
  createdAt: string
  /** JSON text of the record's row. */
  object: string
  /** JSON text of the row before an update; null otherwise. */
  previous: string | null
}

/** The row of `event` for a record: `object` after the change, `previous` before an update. */
export function eventRow(
  storeId: string,
  event: PendingEvent,
  object: object,
  previous: object | null = null,
): NewEvent {
  return {
    storeId,
    id: event.id,
    type: event.type,
    createdAt: event.createdAt,
    object: JSON.stringify(object),
    previous: previous === null ? null : JSON.stringify(previous),
  }
}

/** A change and its rows, as a service appends it. */
export type Change<Row extends object = object> =
  | {
      type:
        | 'product.created'
        | 'product.deleted'
        | 'variant.created'
        | 'variant.deleted'
        | 'collection.created'
        | 'collection.deleted'
        | 'collection.products_changed'
      object: Row
    }
  | {
      type: 'product.updated' | 'variant.updated' | 'collection.updated'
      object: Row
      previous: Row
    }

/**
 * Appends the event of a change in the unit of work that makes it (so in its transaction):
 * `event` as decided before (pendingEvent), or a new one of the change's type.
 */
export async function appendEvent(
  db: Executor,
  storeId: string,
  change: Change,
  event: PendingEvent = pendingEvent(change.type),
): Promise<void> {
  const previous = 'previous' in change ? change.previous : null
  await writeEventRow(
    db,
    eventRow(storeId, { ...event, type: change.type }, change.object, previous),
  )
}

/** Writes one event's row, in the caller's transaction. */
export async function writeEventRow(db: Executor, event: NewEvent): Promise<void> {
  await insertEventRow(
    db,
    event.storeId,
    event.id,
    event.type,
    event.object,
    event.previous,
    event.createdAt,
  )
}

const insertEventRow = statement(
  (
    db: Executor,
    storeId: string,
    id: string,
    type: string,
    object: string,
    previous: string | null,
    createdAt: string,
  ) =>
    db
      .insertInto('events')
      .values({ store_id: storeId, id, type, object, previous, created_at: createdAt }),
)

/** Appends events in the order given, several in one statement: a bulk create's. */
export async function appendEvents(db: Executor, events: readonly NewEvent[]): Promise<void> {
  await insertRows(
    db,
    'events',
    ['store_id', 'id', 'type', 'object', 'previous', 'created_at'],
    events.map((e) => [e.storeId, e.id, e.type, e.object, e.previous, e.createdAt]),
  )
}

/**
 * The PostgreSQL common table expression that appends an event in the statement of its change
 * (the one-statement creates and PATCHes): one event per row of `from`, whose `object` and
 * `previous` are SQL over that row (e.g. `to_json(inserted)`), as eventRow makes them in
 * JavaScript. The values are parameters of a precompiled statement: `storeId` and the
 * event's are stand-ins, used as values only. (Typed `any`: Kysely takes a raw expression as
 * a CTE of some row type; this one has none.)
 */
export function eventInStatement(
  from: string,
  storeId: unknown,
  event: { type: unknown; id: unknown; createdAt: unknown },
  object: RawBuilder<unknown>,
  previous: RawBuilder<unknown> | null,
): RawBuilder<any> {
  return sql`(insert into events (store_id, id, type, object, previous, created_at)
    select ${storeId}::text, ${event.id}::uuid, ${event.type}::text, ${object},
      ${previous ?? sql`null::json`}, ${event.createdAt}::timestamptz
    from ${sql.raw(from)})`
}
