import type { Executor, MetafieldDefinitionRow } from '../../db/schema.js'
import {
  definitionsOfStore,
  readDefinitionStamp,
  renewDefinitionStamp,
} from './metafield-definition.repository.js'

/**
 * The store's metafield definitions as a write checks and indexes values with, held in
 * memory by the store's definition stamp (migration 2026-11-30T04), a random token: every
 * change of a definition renews it in its transaction (metafield-definition.repository.ts), and
 * every write reads the stamp afresh, once per transaction, before it uses the definitions.
 * So a change made by another process, or another instance on one database, is honoured by
 * the next write that starts after it commits, as when the definitions were read each time;
 * and a write reads one row instead of every definition (none at all when the store never
 * had one).
 */

/** The store's definitions under one stamp, oldest first. */
export interface StoreDefinitions {
  stamp: string | undefined
  rows: readonly MetafieldDefinitionRow[]
}

const NONE: StoreDefinitions = { stamp: undefined, rows: [] }
/** Definitions by stamp (a random token: unique across stores and databases). */
const MAX_CACHED = 1000
const byStamp = new Map<string, StoreDefinitions>()

/**
 * What a transaction has read, by store: one stamp read per transaction and store (on SQLite,
 * per group commit of several units, which see one another's writes).
 */
const inTransaction = new WeakMap<Executor, Map<string, StoreDefinitions>>()

/**
 * The stores whose definitions a transaction changed: read afresh for the rest of it, never
 * remembered, since a change may yet be rolled back to a savepoint (SQLite's group commit runs
 * several units in one transaction).
 */
const changedIn = new WeakMap<Executor, Set<string>>()

/** The store's definitions (both owners) as they stand for the write running on `db`. */
export async function storeDefinitions(db: Executor, storeId: string): Promise<StoreDefinitions> {
  const memo = db.isTransaction ? inTransaction.get(db) : undefined
  const seen = memo?.get(storeId)
  if (seen) return seen
  const definitions = await readDefinitions(db, storeId)
  if (db.isTransaction && !changedIn.get(db)?.has(storeId)) {
    if (memo) memo.set(storeId, definitions)
    else inTransaction.set(db, new Map([[storeId, definitions]]))
  }
  return definitions
}

/**
 * The same as storeDefinitions, given the stamp as a statement of the write read it (with
 * other rows, sparing its own read): the definitions under it, read only when not held.
 */
export async function storeDefinitionsUnderStamp(
  db: Executor,
  storeId: string,
  stamp: string | undefined,
): Promise<StoreDefinitions> {
  const memo = db.isTransaction ? inTransaction.get(db) : undefined
  const seen = memo?.get(storeId)
  if (seen) return seen
  if (changedIn.get(db)?.has(storeId)) return storeDefinitions(db, storeId)
  const definitions = await definitionsUnder(db, storeId, stamp)
  if (db.isTransaction) {
    if (memo) memo.set(storeId, definitions)
    else inTransaction.set(db, new Map([[storeId, definitions]]))
  }
  return definitions
}

/**
 * Stamps a write's first statement read (PostgreSQL's rules state, product_write_state, after
 * the store's rules lock), by transaction and store: the first use of the definitions in the
 * transaction takes the stamp from there instead of reading it.
 */
const stampsRead = new WeakMap<Executor, Map<string, string | undefined>>()

/**
 * Records the store's definition stamp as a statement at the start of the transaction read it
 * (null: the store never had a definition), for its first use of the definitions. For a write
 * that creates products only: a write of existing products reads it after their row locks
 * (a definition change rebuilding their documents may hold them).
 */
export function stampReadAtStart(db: Executor, storeId: string, stamp: string | null): void {
  if (!db.isTransaction || changedIn.get(db)?.has(storeId)) return
  const read = stampsRead.get(db)
  if (read) read.set(storeId, stamp ?? undefined)
  else stampsRead.set(db, new Map([[storeId, stamp ?? undefined]]))
}

async function readDefinitions(db: Executor, storeId: string): Promise<StoreDefinitions> {
  const read = stampsRead.get(db)
  if (read?.has(storeId) && !changedIn.get(db)?.has(storeId)) {
    return definitionsUnder(db, storeId, read.get(storeId))
  }
  return definitionsUnder(db, storeId, await readDefinitionStamp(db, storeId))
}

async function definitionsUnder(
  db: Executor,
  storeId: string,
  stamp: string | undefined,
): Promise<StoreDefinitions> {
  if (stamp === undefined) return NONE
  const cached = byStamp.get(stamp)
  if (cached) return cached
  // Read after the stamp: as new as it or newer (then the newer stamp reads them again).
  const fresh = { stamp, rows: await definitionsOfStore(db, storeId) }
  if (byStamp.size >= MAX_CACHED) byStamp.delete(byStamp.keys().next().value!)
  byStamp.set(stamp, fresh)
  return fresh
}

/**
 * Records a change of the store's definitions (an insert, update or delete of one, in the
 * same transaction): renews the stamp, and from then on the transaction reads them afresh,
 * so that what it does next (re-indexing, an import's products) sees the change.
 */
export async function definitionsChanged(db: Executor, storeId: string): Promise<void> {
  await renewDefinitionStamp(db, storeId)
  inTransaction.get(db)?.delete(storeId)
  const changed = changedIn.get(db)
  if (changed) changed.add(storeId)
  else changedIn.set(db, new Set([storeId]))
}
