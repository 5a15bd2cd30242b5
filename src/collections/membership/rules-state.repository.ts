import { sql } from 'kysely'
import { dialectOf, type SqlDialect } from '../../db/dialect.js'
import { sqlStatement, statement } from '../../db/statements.js'
import { newId } from '../../db/values.js'
import type { Executor } from '../../db/schema.js'

/**
 * The store's lock around its smart rules and what a product write reads under it: the
 * rules state (token, whether the store has collections) and the smart collections' rules.
 */

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
  await LOCK_STORE_RULES[dialectOf(db).name](db, storeId, mode === 'exclusive')
}

/** Each dialect's rules lock: PostgreSQL's function lock_store_rules (migration 2026-12-08T01). */
const LOCK_STORE_RULES: Record<
  SqlDialect['name'],
  (db: Executor, storeId: string, exclusive: boolean) => Promise<unknown>
> = {
  sqlite: async () => {},
  postgres: sqlStatement(
    (storeId: string, exclusive: boolean) => sql`select lock_store_rules(${storeId}, ${exclusive})`,
  ),
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
  (db: Executor, storeId: string) => Promise<StateRow[]>
> = {
  sqlite: sqlStatement(
    (storeId: string) => sql<StateRow>`select
    (select token from collection_rules_tokens where store_id = ${storeId}) as token,
    exists (select 1 from collections where store_id = ${storeId}) as collections`,
  ),
  postgres: sqlStatement(
    (storeId: string) => sql<StateRow>`select token, collections, definition_stamp
    from product_write_state(${storeId})`,
  ),
}

/**
 * Takes the store's rules lock, shared, and reads the store's rules state after it, in one
 * statement (on PostgreSQL the function product_write_state, migrations 2026-11-30T11 and 2026-12-08T01, which
 * reads the definition stamp too): what lockStoreRules(shared) and the token's read do in two.
 */
export async function lockForProductWrite(db: Executor, storeId: string): Promise<RulesState> {
  const [row] = await RULES_STATE[dialectOf(db).name](db, storeId)
  return rulesStateOf(row)
}

/**
 * The rules lock taken, and the state read, inside a PostgreSQL statement of a product write
 * (product_write_state): a set-returning call for its FROM, one row. The statement must make
 * every row lock it takes depend on it, so that the lock comes first (lockStoreRules).
 */
export function rulesStateInStatement(storeId: unknown) {
  return sql<StateRow>`product_write_state(${storeId})`
}

/** A rules state as its statement answers it (no row: a store that never had a collection). */
export function rulesStateOf(row: StateRow | undefined): RulesState {
  return {
    token: row?.token ?? undefined,
    collections: Boolean(row?.collections),
    ...(row?.definition_stamp !== undefined && { definitionStamp: row.definition_stamp }),
  }
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
