import type { Database } from '../db/database.js'
import { toIso } from '../db/values.js'
import { AppError } from '../errors.js'
import { rowToProduct, rowToVariant } from '../catalog/catalog.mappers.js'
import type { Product, Variant } from '../catalog/catalog-records.schemas.js'
import { eventRowToCollection } from '../collections/collection.mappers.js'
import type { Collection } from '../collections/collection.schemas.js'
import {
  cursorNotMade,
  decodeEventCursor,
  encodeEventCursor,
  isBefore,
  isSamePosition,
} from './event-cursor.js'
import {
  findEventRows,
  findHorizon,
  findPrunedThrough,
  hasEventAt,
  hasHeldBackEvent,
} from './event.repository.js'
import { START, type EventPageQuery, type EventPosition, type EventRow } from './event-queries.js'
import type { EventType } from '../outbox/outbox.js'

// The types are the outbox's; the webhooks take them from here.

/** The object of a collection.products_changed event. */
interface ProductsChanged {
  collectionId: string
  added: string[]
  removed: string[]
}

/** An event as the feed (and, later, a webhook) shows it. */
export interface CatalogEvent {
  id: string
  type: EventType
  createdAt: string
  data: {
    object: Product | Variant | Collection | ProductsChanged
    previousAttributes?: Partial<Product> | Partial<Variant> | Partial<Collection>
  }
}

/** Fields of a record that previousAttributes never lists: they move with every change. */
const NOT_ATTRIBUTES = new Set(['id', 'productId', 'version', 'createdAt', 'updatedAt'])

/**
 * A stored event in the API's shape: the rows become records through the mappers every
 * answer uses, and previousAttributes lists each field whose value differs between the row
 * before and the row after, with the value before.
 */
export function rowToEvent(row: EventRow): CatalogEvent {
  const toRecord = recordMapper(row.type) as unknown as (row: unknown) => Record<string, unknown>
  const object = toRecord(fromJson(row.object))
  const event: CatalogEvent = {
    id: row.id,
    type: row.type as EventType,
    createdAt: toIso(row.created_at),
    data: { object: object as unknown as CatalogEvent['data']['object'] },
  }
  if (row.previous !== null) {
    const before = toRecord(fromJson(row.previous))
    const previousAttributes: Record<string, unknown> = {}
    for (const [field, value] of Object.entries(before)) {
      if (NOT_ATTRIBUTES.has(field)) continue
      if (field === 'metafields') {
        const changed = changedKeys(value as JsonObject, object[field] as JsonObject)
        if (changed !== undefined) previousAttributes[field] = changed
      } else if (JSON.stringify(value) !== JSON.stringify(object[field])) {
        previousAttributes[field] = value
      }
    }
    event.data.previousAttributes = previousAttributes
  }
  return event
}

/** The mapper from an event's stored row to the record its type shows. */
function recordMapper(type: string) {
  if (type === 'collection.products_changed') return (object: unknown) => object
  if (type.startsWith('collection.')) return eventRowToCollection
  return type.startsWith('product.') ? rowToProduct : rowToVariant
}

type JsonObject = Record<string, unknown>

/**
 * previousAttributes.metafields: the old value of each key whose value changed, null for a
 * key that was not set; undefined when none changed.
 */
function changedKeys(before: JsonObject, after: JsonObject): JsonObject | undefined {
  const changed: JsonObject = {}
  for (const key of new Set([...Object.keys(before), ...Object.keys(after)])) {
    if (JSON.stringify(before[key]) !== JSON.stringify(after[key]))
      changed[key] = before[key] ?? null
  }
  return Object.keys(changed).length > 0 ? changed : undefined
}

function fromJson(value: string | Record<string, unknown>): unknown {
  return typeof value === 'string' ? JSON.parse(value) : value
}

export interface EventFeedQuery {
  after?: string | undefined
  limit: number
  type?: EventType | undefined
}

export interface EventPage {
  data: CatalogEvent[]
  nextCursor: string
  hasMore: boolean
}

/** Thrown when a cursor names a place before events that retention has deleted. */
function cursorExpired(): AppError {
  return new AppError(
    'cursor_expired',
    'Events after this cursor are past their retention and were deleted; start again without after.',
  )
}

/** How long a read that reaches the end of the feed waits for the events held back there. */
const HELD_BACK_WAIT_MS = 1000
const HELD_BACK_POLL_MS = 10

/**
 * The rows of a page. On PostgreSQL an event committed a moment ago is held back while any
 * older transaction of the database is still running (findEventRows), so a client that reads
 * the feed right after its write's 200 could miss its own event; a page that reaches the end
 * of what is shown waits for such events, up to HELD_BACK_WAIT_MS, re-reading every few
 * milliseconds. A long transaction elsewhere still delays them, never for longer than that.
 */
async function readEventRows(database: Database, query: EventPageQuery): Promise<EventRow[]> {
  const deadline = Date.now() + HELD_BACK_WAIT_MS
  const db = database.kysely
  for (;;) {
    // One horizon for both reads: had the held-back check taken a newer one, an event held
    // back by a transaction that ended between the two would be below it, so neither read
    // nor waited for (the page missed a write answered before it).
    const horizon = await findHorizon(db)
    const rows = await findEventRows(db, query, horizon)
    if (rows.length === query.limit || Date.now() >= deadline) return rows
    const last: EventPosition = rows.at(-1) ?? query.after
    if (!(await hasHeldBackEvent(db, { ...query, after: last }, horizon))) return rows
    await new Promise((resolve) => setTimeout(resolve, HELD_BACK_POLL_MS))
  }
}

/**
 * A page of the store's event feed, oldest first, after the cursor sent (or from the oldest
 * kept event). The pruning mark is read after the events: had retention deleted any event
 * after the cursor before they were read, the mark, which only moves forward, shows it.
 */
export async function listEvents(
  database: Database,
  storeId: string,
  query: EventFeedQuery,
): Promise<EventPage> {
  const sent = query.after === undefined ? undefined : decodeEventCursor(query.after)
  const rows = await readEventRows(database, {
    storeId,
    after: sent ?? START,
    type: query.type,
    limit: query.limit + 1,
  })
  // Checked before the pruning mark is read: an event deleted since the check is then at or
  // before the mark, so the cursor is expired (or is the mark), never taken as forged.
  const sentIsMade =
    sent === undefined ||
    isSamePosition(sent, START) ||
    (await hasEventAt(database.kysely, storeId, sent))
  const pruned = await findPrunedThrough(database.kysely, storeId)
  if (sent && pruned && isBefore(sent, pruned)) throw cursorExpired()
  if (sent && !sentIsMade && !isSamePosition(sent, pruned)) throw cursorNotMade()
  const page = rows.slice(0, query.limit)
  const last = page.at(-1)
  // An empty page hands back the cursor sent; without one, where the kept events start.
  const next = last ?? sent ?? pruned ?? START
  return {
    data: page.map(rowToEvent),
    nextCursor: encodeEventCursor({ xid: next.xid, seq: Number(next.seq) }),
    hasMore: rows.length > query.limit,
  }
}
