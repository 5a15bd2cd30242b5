import type { Executor, ImportTable } from '../db/schema.js'
import type { Selectable } from 'kysely'
import type { PagePosition } from '../http/page-cursor.js'

export type ImportRow = Selectable<ImportTable>

/** The counts and errors of an import as it goes (or as it ended). */
export interface ImportCounts {
  rows_processed: number
  products_created: number
  products_updated: number
  variants_created: number
  variants_updated: number
  rows_failed: number
  columns_not_stored: string
  errors: string
  warnings?: string
  skus_cleared?: number
  products_failed?: number
  duplicate_sku_products?: number
  duplicate_sku_rows?: number
  error_count?: number
}

/** Where an import came from: POST /imports, or `catalog import`. */
export type ImportSource = 'http' | 'cli'

export async function insertImport(
  db: Executor,
  row: {
    store_id: string
    id: string
    instance_id: string
    created_at: string
    source?: ImportSource
    duplicate_skus?: string
  },
): Promise<ImportRow> {
  return db
    .insertInto('imports')
    .values({ ...row, status: 'running', heartbeat_at: row.created_at })
    .returningAll()
    .executeTakeFirstOrThrow()
}

export async function findImport(
  db: Executor,
  storeId: string,
  id: string,
): Promise<ImportRow | undefined> {
  return db
    .selectFrom('imports')
    .selectAll()
    .where('store_id', '=', storeId)
    .where('id', '=', id)
    .executeTakeFirst()
}

export type ImportListRow = Omit<ImportRow, 'errors' | 'warnings' | 'instance_id' | 'heartbeat_at'>

/**
 * A page of the store's imports, newest first, after `after` (the last of the page before),
 * without their errors.
 */
export async function listImportRows(
  db: Executor,
  storeId: string,
  after: PagePosition | undefined,
  limit: number,
): Promise<ImportListRow[]> {
  let query = db
    .selectFrom('imports')
    .select([
      'store_id',
      'id',
      'status',
      'rows_processed',
      'products_created',
      'products_updated',
      'variants_created',
      'variants_updated',
      'rows_failed',
      'columns_not_stored',
      'skus_cleared',
      'source',
      'duplicate_skus',
      'products_failed',
      'duplicate_sku_products',
      'duplicate_sku_rows',
      'error_count',
      'failure_reason',
      'created_at',
      'finished_at',
    ])
    .where('store_id', '=', storeId)
  if (after) {
    query = query.where((eb) =>
      eb(eb.refTuple('created_at', 'id'), '<', eb.tuple(after.createdAt, after.id)),
    )
  }
  return query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).execute()
}

/** Writes the import's counts so far; only while it is running (a sweep may have failed it). */
export async function updateImportCounts(
  db: Executor,
  storeId: string,
  id: string,
  counts: ImportCounts,
  now: string,
): Promise<void> {
  await db
    .updateTable('imports')
    .set({ ...counts, heartbeat_at: now })
    .where('store_id', '=', storeId)
    .where('id', '=', id)
    .where('status', '=', 'running')
    .execute()
}

export async function finishImport(
  db: Executor,
  storeId: string,
  id: string,
  end: { status: 'succeeded' | 'failed'; failure_reason: string | null; finished_at: string },
  counts: ImportCounts | undefined,
): Promise<void> {
  await db
    .updateTable('imports')
    .set({ ...counts, ...end })
    .where('store_id', '=', storeId)
    .where('id', '=', id)
    .where('status', '=', 'running')
    .execute()
}

/** Tells that the imports this process runs are alive. */
export async function beatImports(db: Executor, instanceId: string, now: string): Promise<void> {
  await db
    .updateTable('imports')
    .set({ heartbeat_at: now })
    .where('instance_id', '=', instanceId)
    .where('status', '=', 'running')
    .execute()
}

/**
 * Marks failed the running imports whose process stopped telling it runs them (killed, or
 * stopped before they ended): their heartbeat is older than `staleBefore`. Each gets the
 * reason of its source (a server's job, or a `catalog import` process). Returns how many.
 */
export async function failStaleImports(
  db: Executor,
  staleBefore: string,
  reasons: Record<ImportSource, string>,
  now: string,
): Promise<number> {
  const result = await db
    .updateTable('imports')
    .set((eb) => ({
      status: 'failed',
      failure_reason: eb
        .case()
        .when('source', '=', 'cli')
        .then(reasons.cli)
        .else(reasons.http)
        .end(),
      finished_at: now,
    }))
    .where('status', '=', 'running')
    .where('heartbeat_at', '<', staleBefore)
    .executeTakeFirst()
  return Number(result.numUpdatedRows)
}
