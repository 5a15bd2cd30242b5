import { decodeCursor, encodeCursor } from '../http/page-cursor.js'
import { collectionHandles } from '../slugs/slug-claims.js'
import { slugify } from '../slugs/slug.js'
import type { Database } from '../db/database.js'
import { dialectOf } from '../db/dialect.js'
import { violatedUniqueConstraint } from '../db/driver-errors.js'
import type { CollectionRow, Executor } from '../db/schema.js'
import { inTransaction } from '../db/transactions.js'
import { isUuid, newId, nowIso, toIso } from '../db/values.js'
import { AppError, preconditionFailed, validationFailed } from '../errors.js'
import { appendEvent } from '../outbox/outbox.js'
import { ifMatchAllows } from '../http/conditional.js'
import {
  countCollections,
  countMembers,
  deleteCollectionRow,
  findCollection,
  findCollectionIdByHandle,
  insertCollectionRow,
  listCollectionRows,
  updateCollectionRow,
  type CollectionChanges,
} from './collection.repository.js'
import { rowToCollection } from './collection.mappers.js'
import {
  MAX_COLLECTIONS,
  type Collection,
  type CreateCollectionInput,
  type ListCollectionsQuery,
  type UpdateCollectionInput,
} from './collection.schemas.js'
import type { SortOrder } from './membership/sort-orders.js'
import {
  applyRules,
  lockForRulesChange,
  rulesChanged,
  sortOrderChanged,
} from './membership/membership.js'
import { ruleAttributes } from './membership/metafield-rules.js'
import { checkRules, type Rule } from './membership/rules.js'
import type { Deleted, Work } from '../db/unit-of-work.js'

/** Collections: create, read, list, PATCH and DELETE, with their rules and handles. */

export function collectionNotFound(): AppError {
  return new AppError('not_found', 'No collection with this id exists in your store.')
}

function duplicateHandle(): AppError {
  return new AppError(
    'duplicate_handle',
    'Another collection in your store already has this handle.',
  )
}

/** The record of a row, its productsCount read now. */
export async function collectionRecord(db: Executor, row: CollectionRow): Promise<Collection> {
  return rowToCollection(row, await countMembers(db, row.store_id, row.id))
}

function sortOrderOf(kind: 'manual' | 'smart', sent: SortOrder | null | undefined): SortOrder {
  const sortOrder = sent ?? (kind === 'manual' ? 'manual' : 'newest')
  if (kind === 'smart' && sortOrder === 'manual') {
    throw validationFailed([
      {
        field: 'sort_order',
        message: 'manual is for manual collections; a smart one sorts by a field',
      },
    ])
  }
  return sortOrder
}

/**
 * The unit of work of a create. It holds the store's rules lock exclusively (PostgreSQL), so
 * that the count of collections is exact and a smart one's first members are computed over
 * every product committed, none being written meanwhile.
 */
export function createCollectionWork(
  storeId: string,
  input: CreateCollectionInput,
): Work<Collection> {
  return (db) =>
    inTransaction(db, async (tx) => {
      // The lock comes first: a rule is checked against the attributes as they stand under
      // it, so no `filterable` switch (which takes it too) slips between check and insert.
      await lockForRulesChange(tx, storeId)
      const rules =
        input.rules == null
          ? null
          : checkRules(input.rules, await ruleAttributes(tx, storeId, input.rules))
      const kind = rules === null ? 'manual' : 'smart'
      const sortOrder = sortOrderOf(kind, input.sort_order)
      if ((await countCollections(tx, storeId)) >= MAX_COLLECTIONS) {
        throw validationFailed([
          { field: 'body', message: `a store has at most ${MAX_COLLECTIONS} collections` },
        ])
      }
      const handle =
        input.handle == null
          ? await generatedHandle(tx, storeId, input.title)
          : await handSetHandle(tx, storeId, input.handle)
      const now = nowIso()
      const row = {
        store_id: storeId,
        id: newId(),
        title: input.title,
        handle,
        description: input.description ?? null,
        kind,
        rules: rules === null ? null : JSON.stringify(rules),
        sort_order: sortOrder,
        version: 1,
        created_at: now,
        updated_at: now,
      } as const
      const disjunctive = input.disjunctive ?? false
      try {
        await insertCollectionRow(tx, { ...row, disjunctive: dialectOf(tx).boolean(disjunctive) })
      } catch (error) {
        if (violatedUniqueConstraint(error) === 'collections_handle_key') throw duplicateHandle()
        throw error
      }
      if (rules !== null) {
        await rulesChanged(tx, storeId)
        await applyRules(tx, storeId, { id: row.id, rules, disjunctive, sortOrder })
      }
      const stored = (await findCollection(tx, storeId, row.id))!
      const record = await collectionRecord(tx, stored)
      await appendEvent(tx, storeId, {
        type: 'collection.created',
        object: { ...stored, products_count: record.productsCount },
      })
      return record
    })
}

async function generatedHandle(db: Executor, storeId: string, title: string): Promise<string> {
  const base = slugify(title)
  for (let attempt = 0; attempt < 16; attempt++) {
    const handle = await collectionHandles.claimGenerated(db, storeId, base)
    if (handle !== undefined && (await findCollectionIdByHandle(db, storeId, handle)) === undefined)
      return handle
  }
  throw new Error(`no free handle for ${base}`)
}

async function handSetHandle(db: Executor, storeId: string, handle: string): Promise<string> {
  if ((await findCollectionIdByHandle(db, storeId, handle)) !== undefined) throw duplicateHandle()
  await collectionHandles.claimSetByHand(db, storeId, handle)
  return handle
}

/** The collection a write is about, locked: 404, then 412 when If-Match names another version. */
export async function lockCollection(
  db: Executor,
  storeId: string,
  id: string,
  ifMatch?: string,
): Promise<CollectionRow> {
  if (!isUuid(id)) throw collectionNotFound()
  const row = await findCollection(db, storeId, id.toLowerCase(), { forUpdate: true })
  if (row === undefined) throw collectionNotFound()
  if (!ifMatchAllows(ifMatch, row.version)) throw preconditionFailed()
  return row
}

function rulesOf(row: CollectionRow): Rule[] | null {
  const rules = typeof row.rules === 'string' ? JSON.parse(row.rules) : row.rules
  return (rules ?? null) as Rule[] | null
}

/**
 * The unit of work of a PATCH (merge patch). A change of the rules or of `disjunctive`
 * takes the store's rules lock exclusively before the collection's row, as a create does,
 * and recomputes the members over every product.
 */
export function updateCollectionWork(
  storeId: string,
  id: string,
  patch: UpdateCollectionInput,
  ifMatch: string | undefined,
): Work<Collection> {
  return (db) =>
    inTransaction(db, async (tx) => {
      // A change of the sort order moves the member rows (sortOrderChanged): no product write
      // may add one under the old order meanwhile.
      const rulesChange =
        patch.rules !== undefined ||
        patch.disjunctive !== undefined ||
        patch.sort_order !== undefined
      if (rulesChange) await lockForRulesChange(tx, storeId)
      const row = await lockCollection(tx, storeId, id, ifMatch)
      const currentRules = rulesOf(row)
      let rules = currentRules
      if (row.kind === 'manual' && patch.rules != null) {
        throw validationFailed([
          { field: 'rules', message: 'a manual collection has no rules; its kind never changes' },
        ])
      }
      if (row.kind === 'smart' && patch.rules === null) {
        throw validationFailed([
          {
            field: 'rules',
            message: 'a smart collection keeps 1 to 60 rules; its kind never changes',
          },
        ])
      }
      if (patch.rules != null) {
        rules = checkRules(patch.rules, await ruleAttributes(tx, storeId, patch.rules))
      }
      const sortOrder =
        patch.sort_order === undefined
          ? (row.sort_order as SortOrder)
          : sortOrderOf(row.kind, patch.sort_order)
      const next: CollectionChanges = {
        title: patch.title ?? row.title,
        handle: patch.handle ?? row.handle,
        description: patch.description === undefined ? row.description : patch.description,
        rules: rules === null ? null : JSON.stringify(rules),
        disjunctive: patch.disjunctive ?? Boolean(row.disjunctive),
        sort_order: sortOrder,
        updated_at: nowIso(),
      }
      const sameRules = JSON.stringify(rules) === JSON.stringify(currentRules)
      const unchanged =
        next.title === row.title &&
        next.handle === row.handle &&
        next.description === row.description &&
        sameRules &&
        next.disjunctive === Boolean(row.disjunctive) &&
        next.sort_order === row.sort_order
      if (unchanged) return collectionRecord(tx, row)
      if (next.handle !== row.handle) await handSetHandle(tx, storeId, next.handle)
      let updated: CollectionRow
      try {
        updated = await updateCollectionRow(tx, storeId, row.id, next)
      } catch (error) {
        if (violatedUniqueConstraint(error) === 'collections_handle_key') throw duplicateHandle()
        throw error
      }
      if (next.sort_order !== row.sort_order) {
        await sortOrderChanged(tx, storeId, row, sortOrder)
      }
      if (rules !== null && (!sameRules || next.disjunctive !== Boolean(row.disjunctive))) {
        await rulesChanged(tx, storeId)
        await applyRules(tx, storeId, {
          id: row.id,
          rules,
          disjunctive: next.disjunctive,
          sortOrder,
        })
      }
      const record = await collectionRecord(tx, updated)
      const count = record.productsCount
      await appendEvent(tx, storeId, {
        type: 'collection.updated',
        object: { ...updated, products_count: count },
        previous: { ...row, products_count: count },
      })
      return record
    })
}

/** The unit of work of a DELETE: the collection goes, its products stay; only collection.deleted. */
export function deleteCollectionWork(
  storeId: string,
  id: string,
  ifMatch: string | undefined,
): Work<Deleted> {
  return (db) =>
    inTransaction(db, async (tx) => {
      // A product write evaluating this collection's rules must not outlive it.
      await lockForRulesChange(tx, storeId)
      const row = await lockCollection(tx, storeId, id, ifMatch)
      const count = await countMembers(tx, storeId, row.id)
      if (row.kind === 'smart') await rulesChanged(tx, storeId)
      await deleteCollectionRow(tx, storeId, row.id)
      await appendEvent(tx, storeId, {
        type: 'collection.deleted',
        object: { ...row, products_count: count },
      })
      return { id: row.id, deleted: true }
    })
}

export async function getCollection(
  database: Database,
  storeId: string,
  id: string,
): Promise<Collection> {
  if (!isUuid(id)) throw collectionNotFound()
  const row = await findCollection(database.kysely, storeId, id.toLowerCase())
  if (row === undefined) throw collectionNotFound()
  return collectionRecord(database.kysely, row)
}

export async function listCollections(
  database: Database,
  storeId: string,
  query: ListCollectionsQuery,
): Promise<{ data: Collection[]; nextCursor: string | null }> {
  const limit = query.limit ?? 50
  const rows = await listCollectionRows(database.kysely, {
    storeId,
    handle: query.handle,
    after: query.cursor === undefined ? undefined : decodeCursor(query.cursor),
    limit: limit + 1,
  })
  const page = rows.slice(0, limit)
  const data = await Promise.all(page.map((row) => collectionRecord(database.kysely, row)))
  const last = page.at(-1)
  const nextCursor =
    rows.length > limit && last
      ? encodeCursor({ createdAt: toIso(last.created_at), id: last.id })
      : null
  return { data, nextCursor }
}
