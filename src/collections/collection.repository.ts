import { sql } from 'kysely'
import { dialectOf } from '../db/dialect.js'
import { statement } from '../db/statements.js'
import type { CollectionRow, CollectionTable, Executor } from '../db/schema.js'
import type { Insertable } from 'kysely'

/** Every statement on the collections table (the rules lock and state: membership/rules-state.repository.ts). */

export type NewCollectionRow = Insertable<CollectionTable>

export async function insertCollectionRow(db: Executor, row: NewCollectionRow): Promise<void> {
  await db.insertInto('collections').values(row).execute()
}

const collectionById = statement((db: Executor, storeId: string, id: string) =>
  db.selectFrom('collections').selectAll().where('store_id', '=', storeId).where('id', '=', id),
)

const collectionForUpdate = statement((db: Executor, storeId: string, id: string) =>
  dialectOf(db).forUpdate(
    db.selectFrom('collections').selectAll().where('store_id', '=', storeId).where('id', '=', id),
  ),
)

export async function findCollection(
  db: Executor,
  storeId: string,
  id: string,
  options: { forUpdate?: boolean } = {},
): Promise<CollectionRow | undefined> {
  const [row] = await (options.forUpdate ? collectionForUpdate : collectionById)(db, storeId, id)
  return row
}

const handleTaken = statement((db: Executor, storeId: string, handle: string) =>
  db
    .selectFrom('collections')
    .select('id')
    .where('store_id', '=', storeId)
    .where('handle', '=', handle),
)

/** The id of the store's collection with this handle, if any. */
export async function findCollectionIdByHandle(
  db: Executor,
  storeId: string,
  handle: string,
): Promise<string | undefined> {
  const [row] = await handleTaken(db, storeId, handle)
  return row?.id
}

const collectionCount = statement((db: Executor, storeId: string) =>
  db
    .selectFrom('collections')
    .select((eb) => eb.fn.countAll<number | string>().as('count'))
    .where('store_id', '=', storeId),
)

export async function countCollections(db: Executor, storeId: string): Promise<number> {
  const [row] = await collectionCount(db, storeId)
  return Number(row?.count ?? 0)
}

/** The columns a collection's PATCH writes, in order. */
export interface CollectionChanges {
  title: string
  handle: string
  description: string | null
  rules: string | null
  disjunctive: boolean
  sort_order: string
  updated_at: string
}

export async function updateCollectionRow(
  db: Executor,
  storeId: string,
  id: string,
  changes: CollectionChanges,
): Promise<CollectionRow> {
  const dialect = dialectOf(db)
  const row = await db
    .updateTable('collections')
    .set((eb) => ({
      ...changes,
      disjunctive: dialect.boolean(changes.disjunctive),
      updated_at: dialect.movedOn('collections.updated_at', changes.updated_at),
      version: eb('version', '+', 1),
    }))
    .where('store_id', '=', storeId)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst()
  if (row === undefined) throw new Error('the collection to update is gone')
  return row
}

/** Deletes a collection; its members go with it (foreign key, on delete cascade). */
export async function deleteCollectionRow(db: Executor, storeId: string, id: string) {
  await db.deleteFrom('collections').where('store_id', '=', storeId).where('id', '=', id).execute()
}

/** A page of the store's collections, newest first, after `after`. */
export async function listCollectionRows(
  db: Executor,
  query: {
    storeId: string
    handle?: string | undefined
    after?: { createdAt: string; id: string } | undefined
    limit: number
  },
): Promise<CollectionRow[]> {
  const dialect = dialectOf(db)
  let q = db.selectFrom('collections').selectAll().where('store_id', '=', query.storeId)
  if (query.handle !== undefined) q = q.where('handle', '=', query.handle)
  if (query.after !== undefined) {
    const { createdAt, id } = query.after
    q = q.where(
      sql<boolean>`(created_at, id) < (${dialect.cast(createdAt, 'timestamptz')}, ${dialect.cast(id, 'uuid')})`,
    )
  }
  return q.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(query.limit).execute()
}

const memberCount = statement((db: Executor, storeId: string, id: string) =>
  db
    .selectFrom('collection_products')
    .select((eb) => eb.fn.countAll<number | string>().as('count'))
    .where('store_id', '=', storeId)
    .where('collection_id', '=', id),
)

export async function countMembers(db: Executor, storeId: string, id: string): Promise<number> {
  const [row] = await memberCount(db, storeId, id)
  return Number(row?.count ?? 0)
}
