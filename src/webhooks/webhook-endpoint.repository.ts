import { sql } from 'kysely'
import { dialectOf } from '../db/dialect.js'
import type { Executor, WebhookEndpointRow } from '../db/schema.js'

/** The columns of an endpoint as stored, for an insert. */
export interface NewEndpoint {
  storeId: string
  id: string
  url: string
  events: string[]
  description: string | null
  secret: string
  createdAt: string
}

/** The fields a PATCH may change; those left out are unchanged. */
export interface EndpointChanges {
  url?: string
  events?: string[]
  description?: string | null
  enabled?: boolean
}

/**
 * Counts one more endpoint for the store unless it already has `max`: one upsert whose
 * update is conditional, so concurrent creates (on PostgreSQL, each waits for the row lock of
 * the one before and then sees its count) can never go past `max`. Answers whether the
 * endpoint may be created; its insert must follow in the same transaction.
 */
export async function claimEndpointSlot(
  db: Executor,
  storeId: string,
  max: number,
): Promise<boolean> {
  const row = await db
    .insertInto('webhook_endpoint_counts')
    .values({ store_id: storeId, endpoints: 1 })
    .onConflict((conflict) =>
      conflict
        .column('store_id')
        .doUpdateSet({ endpoints: sql<number>`webhook_endpoint_counts.endpoints + 1` })
        .where('webhook_endpoint_counts.endpoints', '<', max),
    )
    .returning('endpoints')
    .executeTakeFirst()
  return row !== undefined
}

/** Counts one endpoint less for the store, in the transaction that deletes it. */
export async function releaseEndpointSlot(db: Executor, storeId: string): Promise<void> {
  await db
    .updateTable('webhook_endpoint_counts')
    .set({ endpoints: sql<number>`endpoints - 1` })
    .where('store_id', '=', storeId)
    .execute()
}

export async function insertEndpoint(db: Executor, row: NewEndpoint): Promise<WebhookEndpointRow> {
  return await db
    .insertInto('webhook_endpoints')
    .values({
      store_id: row.storeId,
      id: row.id,
      url: row.url,
      events: JSON.stringify(row.events),
      description: row.description,
      enabled: dialectOf(db).boolean(true),
      secret: row.secret,
      created_at: row.createdAt,
      updated_at: row.createdAt,
    })
    .returningAll()
    .executeTakeFirstOrThrow()
}

export function findEndpoint(
  db: Executor,
  storeId: string,
  id: string,
): Promise<WebhookEndpointRow | undefined> {
  return db
    .selectFrom('webhook_endpoints')
    .selectAll()
    .where('store_id', '=', storeId)
    .where('id', '=', id)
    .executeTakeFirst()
}

/** The endpoint, locked until the end of the transaction on PostgreSQL (SQLite's writes are serial). */
export function findEndpointForUpdate(
  db: Executor,
  storeId: string,
  id: string,
): Promise<WebhookEndpointRow | undefined> {
  const query = db
    .selectFrom('webhook_endpoints')
    .selectAll()
    .where('store_id', '=', storeId)
    .where('id', '=', id)
  return dialectOf(db).forUpdate(query).executeTakeFirst()
}

/** The store's endpoints, oldest first (ids are UUIDv7: creation order). */
export function listEndpointRows(db: Executor, storeId: string): Promise<WebhookEndpointRow[]> {
  return db
    .selectFrom('webhook_endpoints')
    .selectAll()
    .where('store_id', '=', storeId)
    .orderBy('created_at')
    .orderBy('id')
    .execute()
}

/** Writes the changes; updatedAt moves on, never back (see movedOn). */
export async function updateEndpointRow(
  db: Executor,
  storeId: string,
  id: string,
  changes: EndpointChanges,
  updatedAt: string,
): Promise<WebhookEndpointRow> {
  const dialect = dialectOf(db)
  return await db
    .updateTable('webhook_endpoints')
    .set({
      ...(changes.url !== undefined && { url: changes.url }),
      ...(changes.events !== undefined && { events: JSON.stringify(changes.events) }),
      ...(changes.description !== undefined && { description: changes.description }),
      ...(changes.enabled !== undefined && {
        enabled: dialect.boolean(changes.enabled),
      }),
      updated_at: dialect.movedOn('webhook_endpoints.updated_at', updatedAt),
    })
    .where('store_id', '=', storeId)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow()
}

/** Deletes the endpoint and its deliveries; answers whether there was one. */
export async function deleteEndpointRow(
  db: Executor,
  storeId: string,
  id: string,
): Promise<boolean> {
  await db
    .deleteFrom('webhook_deliveries')
    .where('store_id', '=', storeId)
    .where('endpoint_id', '=', id)
    .execute()
  const result = await db
    .deleteFrom('webhook_endpoints')
    .where('store_id', '=', storeId)
    .where('id', '=', id)
    .executeTakeFirst()
  return result.numDeletedRows > 0n
}
