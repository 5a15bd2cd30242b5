import { decodeCursor, pageOf } from '../http/page-cursor.js'
import type { Executor } from '../db/schema.js'
import { isUuid, nowIso, toIso } from '../db/values.js'
import { AppError } from '../errors.js'
import {
  findCollectionTitles,
  listDeliveryRows,
  retryDeliveryRow,
  type DeliveryRow,
  type ListedDeliveryRow,
} from './delivery.repository.js'
import type { DeliverySubject, ListedWebhookDelivery, WebhookDelivery } from './delivery.schemas.js'
import { findEndpoint } from './webhook-endpoint.repository.js'
import { endpointNotFound } from './webhook-endpoint.service.js'

function deliveryNotFound(): AppError {
  return new AppError('not_found', 'This webhook endpoint has no delivery with this id.')
}

function rowToDelivery(row: DeliveryRow): WebhookDelivery {
  return {
    id: row.id,
    eventId: row.event_id,
    eventType: row.event_type,
    status: row.status,
    attempts: row.attempts,
    lastAttemptAt: row.last_attempt_at === null ? null : toIso(row.last_attempt_at),
    lastStatusCode: row.last_status_code,
    nextAttemptAt: row.next_attempt_at === null ? null : toIso(row.next_attempt_at),
  }
}

/** A stored event's `data.object`, parsed (SQLite keeps it as text). */
function objectOf(row: ListedDeliveryRow): Record<string, unknown> | null {
  if (row.event_object === null) return null
  const object = row.event_object
  return (typeof object === 'string' ? JSON.parse(object) : object) as Record<string, unknown>
}

/**
 * What an event was about: its record's id, name (a collection's title) and sku (a variant's).
 * A collection.products_changed event's object is `{collectionId, added, removed}`: its
 * subject is the collection, named by its title now (`titles`; '' once it is deleted).
 */
function subjectOf(
  row: ListedDeliveryRow,
  titles: ReadonlyMap<string, string>,
): DeliverySubject | null {
  const record = objectOf(row)
  if (record === null) return null
  if (row.event_type === 'collection.products_changed') {
    const id = String(record.collectionId)
    return { id, name: titles.get(id) ?? '', sku: null }
  }
  const name = record.name ?? record.title
  return {
    id: String(record.id),
    name: typeof name === 'string' ? name : '',
    sku: typeof record.sku === 'string' ? record.sku : null,
  }
}

/** A page of the endpoint's deliveries, newest first (404 for an endpoint of no such id). */
export async function listDeliveries(
  db: Executor,
  storeId: string,
  endpointId: string,
  query: { limit?: number | undefined; cursor?: string | undefined },
): Promise<{ data: ListedWebhookDelivery[]; nextCursor: string | null }> {
  const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor)
  if (!isUuid(endpointId)) throw endpointNotFound()
  const id = endpointId.toLowerCase()
  if ((await findEndpoint(db, storeId, id)) === undefined) throw endpointNotFound()
  const limit = query.limit ?? 50
  const rows = await listDeliveryRows(db, storeId, id, after, limit + 1)
  const changedCollections = rows
    .slice(0, limit)
    .filter((row) => row.event_type === 'collection.products_changed')
    .map((row) => objectOf(row)?.collectionId)
    .filter((collectionId): collectionId is string => typeof collectionId === 'string')
  const titles = await findCollectionTitles(db, storeId, changedCollections)
  return pageOf(rows, limit, (row) => ({
    ...rowToDelivery(row),
    subject: subjectOf(row, titles),
  }))
}

/** The unit of work of a manual retry: the delivery pending and due now. */
export function retryDeliveryWork(storeId: string, endpointId: string, deliveryId: string) {
  return async (db: Executor): Promise<WebhookDelivery> => {
    if (!isUuid(endpointId)) throw endpointNotFound()
    const id = endpointId.toLowerCase()
    if ((await findEndpoint(db, storeId, id)) === undefined) throw endpointNotFound()
    if (!isUuid(deliveryId)) throw deliveryNotFound()
    const row = await retryDeliveryRow(db, storeId, id, deliveryId.toLowerCase(), nowIso())
    if (row === undefined) throw deliveryNotFound()
    return rowToDelivery(row)
  }
}
