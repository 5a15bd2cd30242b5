import { sql } from 'kysely'
import { dialectOf, type SqlDialect } from '../db/dialect.js'
import { sqlStatement, statement } from '../db/statements.js'
import { newId } from '../db/values.js'
import type { CollectionRow, CollectionTable, Executor } from '../db/schema.js'
import type { Insertable } from 'kysely'

/** Every statement on the collections table, and the store's lock around smart rules. */

export type NewCollectionRow = Insertable<CollectionTable>

/**
 * Takes the store's lock on the smart rules until the transaction ends (PostgreSQL; SQLite
 * runs one write at a time): shared by every product write, exclusive by a rules change,
 * so that neither decides a membership from what the other has not committed. Each side
 * takes it before any row lock, so the two never wait on each other in a circle.
 */
export async function lockStoreRules(
  db: Executor,
  storeId: string,
  mode: 'shared' | 'exclusive',
): Promise<void> {
  const lock = dialectOf(db).transactionLock(rulesLockKey(storeId), mode)
  if (lock !== undefined) await lock.execute(db)
}

/** What a product write needs to know of the store's collections, read under the rules lock. */
export interface RulesState {
  /** The rules token: undefined while the store never had a smart collection. */
  token: string | undefined
  /** Whether the store has any collection, manual or smart. */
  collections: boolean
  /**
   * PostgreSQL: the store's metafield definition stamp, read after the lock by the same query
   * (null while the store never had a definition); undefined where it was not read (SQLite).
   */
  definitionStamp?: string | null
}

type StateRow = {
  token: string | null
  collections: boolean | number
  definition_stamp?: string | null
}

/**
 * Each dialect's one statement of lockForProductWrite, named once, given the lock's key and the
 * store (SQLite, one writer at a time, takes no lock).
 */
const RULES_STATE: Record<
  SqlDialect['name'],
  (db: Executor, lockKey: string, storeId: string) => Promise<StateRow[]>
> = {
  sqlite: sqlStatement(
    (_lockKey: string, storeId: string) => sql<StateRow>`select
    (select token from collection_rules_tokens where store_id = ${storeId}) as token,
    exists (select 1 from collections where store_id = ${storeId}) as collections`,
  ),
  postgres: sqlStatement(
    (lockKey: string, storeId: string) => sql<StateRow>`select token, collections, definition_stamp
    from product_write_state(${lockKey}, ${storeId})`,
  ),
}

/**
 * Takes the store's rules lock, shared, and reads the store's rules state after it, in one
 * statement (on PostgreSQL the function product_write_state, migration 2026-11-30T11, which
 * reads the definition stamp too): what lockStoreRules(shared) and the token's read do in two.
 */
export async function lockForProductWrite(db: Executor, storeId: string): Promise<RulesState> {
  const [row] = await RULES_STATE[dialectOf(db).name](db, rulesLockKey(storeId), storeId)
  return rulesStateOf(row)
}

/** The key of the store's rules lock (lockStoreRules, product_write_state). */
export function rulesLockKey(storeId: string): string {
  return `collections:${storeId}`
}

/**
 * The rules lock taken, and the state read, inside a PostgreSQL statement of a product write
 * (product_write_state): a set-returning call for its FROM, one row. The statement must make
 * every row lock it takes depend on it, so that the lock comes first (lockStoreRules).
 */
export function rulesStateInStatement(lockKey: unknown, storeId: unknown) {
  return sql<StateRow>`product_write_state(${lockKey}, ${storeId})`
}

/** A rules state as its statement answers it (no row: a store that never had a collection). */
export function rulesStateOf(row: StateRow | undefined): RulesState {
  return {
    token: row?.token ?? undefined,
    collections: Boolean(row?.collections),
    ...(row?.definition_stamp !== undefined && { definitionStamp: row.definition_stamp }),
  }
}

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

/** A smart collection's rules as stored. */
export interface SmartCollectionRow {
  id: string
  rules: string | unknown[] | null
  disjunctive: boolean | number
  sort_order: string
}

const smartOfStore = statement((db: Executor, storeId: string) =>
  db
    .selectFrom('collections')
    .select(['id', 'rules', 'disjunctive', 'sort_order'])
    .where('store_id', '=', storeId)
    .where('kind', '=', 'smart'),
)

/** Every smart collection of the store, with its rules: one query, whatever their number. */
export async function findSmartCollections(
  db: Executor,
  storeId: string,
): Promise<SmartCollectionRow[]> {
  return smartOfStore(db, storeId)
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

/** Gives the store's smart rules a new token: call it with every change of them. */
export async function renewRulesToken(db: Executor, storeId: string): Promise<void> {
  await db
    .insertInto('collection_rules_tokens')
    .values({ store_id: storeId, token: newId() })
    .onConflict((oc) =>
      oc.column('store_id').doUpdateSet((eb) => ({ token: eb.ref('excluded.token') })),
    )
    .execute()
}
