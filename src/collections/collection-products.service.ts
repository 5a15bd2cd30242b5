import { rowToProduct } from '../catalog/catalog.mappers.js'
import type { Product } from '../catalog/catalog-records.schemas.js'
import type { Database } from '../db/database.js'
import type { CollectionRow, Executor } from '../db/schema.js'
import { inTransaction } from '../db/transactions.js'
import { isUuid, toIso } from '../db/values.js'
import { AppError, validationFailed, type FieldProblem } from '../errors.js'
import type {
  AddProductsInput,
  Collection,
  ListCollectionProductsQuery,
  MoveProductInput,
} from './collection.schemas.js'
import type { SortOrder } from './membership/sort-orders.js'
import { collectionNotFound, collectionRecord, lockCollection } from './collection.service.js'
import { findCollection } from './collection.repository.js'
import {
  listMemberRows,
  sortedBy,
  type MemberPosition,
} from './membership/member-page.repository.js'
import {
  closeGap,
  findMembersAmong,
  findStoreProductsForShare,
  maxPosition,
  moveMember,
} from './membership/manual-members.repository.js'
import { deleteMembers, insertMembers, memberKeysOf } from './membership/membership.repository.js'
import { appendMembersChanged } from './membership/membership.js'
import type { Work } from '../db/unit-of-work.js'

/** A manual collection's members: add, move, remove; and every collection's page of products. */

function smartCollection(): AppError {
  return new AppError(
    'smart_collection',
    'The products of a smart collection follow its rules; they cannot be changed by hand.',
  )
}

function notAMember(): AppError {
  return new AppError('not_found', 'No product with this id is in this collection.')
}

/** The manual collection a membership change is about, locked: 404, then 409 when smart. */
async function lockManual(db: Executor, storeId: string, id: string): Promise<CollectionRow> {
  const row = await lockCollection(db, storeId, id)
  if (row.kind === 'smart') throw smartCollection()
  return row
}

/**
 * Appends products to a manual collection in the order sent; those already in stay where
 * they are. Every id must be a product of the store (400 naming each bad one `product_ids[i]`);
 * the products are held against a concurrent delete until the commit.
 */
export function addProductsWork(
  storeId: string,
  id: string,
  input: AddProductsInput,
): Work<Collection> {
  return (db) =>
    inTransaction(db, async (tx) => {
      const collection = await lockManual(tx, storeId, id)
      const sent = input.product_ids.map((value) =>
        typeof value === 'string' && isUuid(value) ? value.toLowerCase() : undefined,
      )
      const ids = [...new Set(sent.filter((value): value is string => value !== undefined))]
      const found = ids.length === 0 ? [] : await findStoreProductsForShare(tx, storeId, ids)
      const byId = new Map(found.map((row) => [row.id, row]))
      const problems: FieldProblem[] = []
      sent.forEach((value, i) => {
        if (value === undefined || !byId.has(value)) {
          problems.push({
            field: `product_ids[${i}]`,
            message: 'must be the id of a product of your store',
          })
        }
      })
      if (problems.length > 0) throw validationFailed(problems)
      const members = await findMembersAmong(tx, storeId, collection.id, ids)
      const already = new Set(members.map((row) => row.product_id))
      const added = ids.filter((productId) => !already.has(productId))
      const last = await maxPosition(tx, storeId, collection.id)
      await insertMembers(
        tx,
        storeId,
        added.map((productId, i) => ({
          collectionId: collection.id,
          position: last + i + 1,
          sortedBy: sortedBy(collection.sort_order as SortOrder),
          keys: memberKeysOf(byId.get(productId)!),
        })),
      )
      await appendMembersChanged(tx, storeId, collection.id, added, [])
      return collectionRecord(tx, collection)
    })
}

/** The place of a member of a locked manual collection: 404 when the product is not in it. */
async function placeOf(db: Executor, collection: CollectionRow, productId: string) {
  if (!isUuid(productId)) throw notAMember()
  const id = productId.toLowerCase()
  const [member] = await findMembersAmong(db, collection.store_id, collection.id, [id])
  if (member === undefined) throw notAMember()
  return { id, position: member.position ?? 0 }
}

/** Moves a member to `position` (1 is first; past the last, it goes last). No event: members stay. */
export function moveProductWork(
  storeId: string,
  id: string,
  productId: string,
  input: MoveProductInput,
): Work<Collection> {
  return (db) =>
    inTransaction(db, async (tx) => {
      const collection = await lockManual(tx, storeId, id)
      const member = await placeOf(tx, collection, productId)
      const count = await maxPosition(tx, storeId, collection.id)
      const to = Math.min(input.position, count)
      await moveMember(tx, storeId, collection.id, member.id, member.position, to)
      return collectionRecord(tx, collection)
    })
}

export function removeProductWork(
  storeId: string,
  id: string,
  productId: string,
): Work<Collection> {
  return (db) =>
    inTransaction(db, async (tx) => {
      const collection = await lockManual(tx, storeId, id)
      const member = await placeOf(tx, collection, productId)
      await deleteMembers(tx, storeId, collection.id, [member.id])
      await closeGap(tx, storeId, collection.id, member.position)
      await appendMembersChanged(tx, storeId, collection.id, [], [member.id])
      return collectionRecord(tx, collection)
    })
}

const TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/

function encodeMemberCursor(sort: SortOrder, position: MemberPosition): string {
  return Buffer.from(
    JSON.stringify([sort, position.key, position.createdAt, position.id]),
  ).toString('base64url')
}

function decodeMemberCursor(sort: SortOrder, cursor: string): MemberPosition {
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'))
    if (Array.isArray(value) && value.length === 4) {
      const [made, key, createdAt, id] = value as unknown[]
      const keyType = sort === 'name' || sort === '-name' ? 'string' : 'number'
      const keyFits =
        sort === 'newest' || sort === 'oldest'
          ? key === null
          : typeof key === keyType && (keyType === 'string' || Number.isSafeInteger(key))
      if (
        made === sort &&
        keyFits &&
        typeof createdAt === 'string' &&
        TIMESTAMP.test(createdAt) &&
        !Number.isNaN(Date.parse(createdAt)) &&
        typeof id === 'string' &&
        isUuid(id)
      ) {
        return { key: key as MemberPosition['key'], createdAt, id: id.toLowerCase() }
      }
    }
  } catch {
    // fall through: not a cursor of this list
  }
  throw validationFailed([
    {
      field: 'cursor',
      message: "must be a nextCursor from a previous page of this collection's products",
    },
  ])
}

/** A page of a collection's products, in its sort order. */
export async function listCollectionProducts(
  database: Database,
  storeId: string,
  id: string,
  query: ListCollectionProductsQuery,
): Promise<{ data: Product[]; nextCursor: string | null }> {
  if (!isUuid(id)) throw collectionNotFound()
  const collection = await findCollection(database.kysely, storeId, id.toLowerCase())
  if (collection === undefined) throw collectionNotFound()
  const sort = collection.sort_order as SortOrder
  const limit = query.limit ?? 50
  const rows = await listMemberRows(database.kysely, {
    storeId,
    collectionId: collection.id,
    sort,
    status: query.status,
    after: query.cursor === undefined ? undefined : decodeMemberCursor(sort, query.cursor),
    limit: limit + 1,
  })
  const page = rows.slice(0, limit)
  const last = page.at(-1)
  let nextCursor: string | null = null
  if (rows.length > limit && last) {
    const key =
      sort === 'manual'
        ? Number(last.cp_position)
        : sort === 'name' || sort === '-name'
          ? last.cp_name_key
          : sort === 'price' || sort === '-price'
            ? Number(last.cp_price_e4)
            : null
    nextCursor = encodeMemberCursor(sort, {
      key,
      createdAt: toIso(last.cp_created_at),
      id: last.id,
    })
  }
  return { data: page.map(rowToProduct), nextCursor }
}
