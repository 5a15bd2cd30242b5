import { sql } from 'kysely'
import { dialectOf } from '../../db/dialect.js'
import { insertRows } from '../../db/multi-row-insert.js'
import { statement } from '../../db/statements.js'
import type { Executor, ProductRow } from '../../db/schema.js'
import { toIso } from '../../db/values.js'

/** Every statement on collection_products, and the product facts that memberships read. */

/** What a membership row copies of its product: its sort keys and status. */
export interface MemberKeys {
  productId: string
  createdAt: string
  nameKey: string
  priceE4: number
  status: string
}

/** The sort keys of a product row, as its membership rows copy them. */
export function memberKeysOf(row: {
  id: string
  name: string
  price_e4: number | string
  status: string
  created_at: Date | string
}): MemberKeys {
  return {
    productId: row.id,
    createdAt: toIso(row.created_at),
    nameKey: row.name.toLowerCase(),
    priceE4: Number(row.price_e4),
    status: row.status,
  }
}

const MEMBER_COLUMNS = [
  'store_id',
  'collection_id',
  'product_id',
  'position',
  'created_at',
  'name_key',
  'price_e4',
  'status',
  'sorted_by',
]

/**
 * Inserts members: `position` for a manual collection, null in a smart one; `sortedBy` the
 * sort index of the collection's rows (sortedBy of its sort order).
 */
export async function insertMembers(
  db: Executor,
  storeId: string,
  members: readonly {
    collectionId: string
    position: number | null
    sortedBy: string
    keys: MemberKeys
  }[],
): Promise<void> {
  if (members.length === 0) return
  await insertRows(
    db,
    'collection_products',
    MEMBER_COLUMNS,
    members.map(({ collectionId, position, sortedBy, keys }) => [
      storeId,
      collectionId,
      keys.productId,
      position,
      keys.createdAt,
      keys.nameKey,
      keys.priceE4,
      keys.status,
      sortedBy,
    ]),
  )
}

export async function deleteMembers(
  db: Executor,
  storeId: string,
  collectionId: string,
  productIds: readonly string[],
): Promise<void> {
  if (productIds.length === 0) return
  await db
    .deleteFrom('collection_products')
    .where('store_id', '=', storeId)
    .where('collection_id', '=', collectionId)
    .where(dialectOf(db).inList('product_id', 'uuid', productIds))
    .execute()
}

/** The products' rows (those that exist), for their facts and sort keys. */
export async function findProductRows(
  db: Executor,
  storeId: string,
  ids: readonly string[],
): Promise<ProductRow[]> {
  if (ids.length === 1) return productById(db, storeId, ids[0]!)
  return db
    .selectFrom('products')
    .selectAll()
    .where('store_id', '=', storeId)
    .where(dialectOf(db).inList('id', 'uuid', ids))
    .execute()
}

const productById = statement((db: Executor, storeId: string, id: string) =>
  db.selectFrom('products').selectAll().where('store_id', '=', storeId).where('id', '=', id),
)

/** The options of every variant of the products. */
export async function findVariantOptions(
  db: Executor,
  storeId: string,
  productIds: readonly string[],
): Promise<{ product_id: string; options: string | Record<string, string> }[]> {
  if (productIds.length === 1) return variantOptionsOfOne(db, storeId, productIds[0]!)
  return db
    .selectFrom('variants')
    .select(['product_id', 'options'])
    .where('store_id', '=', storeId)
    .where(dialectOf(db).inList('product_id', 'uuid', productIds))
    .execute()
}

const variantOptionsOfOne = statement((db: Executor, storeId: string, productId: string) =>
  db
    .selectFrom('variants')
    .select(['product_id', 'options'])
    .where('store_id', '=', storeId)
    .where('product_id', '=', productId),
)

/** A product's membership in one collection, with the keys its row copies. */
export interface MembershipRow {
  collection_id: string
  product_id: string
  kind: string
  name_key: string
  price_e4: number | string
  status: string
}

const membershipsOfOne = statement((db: Executor, storeId: string, productId: string) =>
  db
    .selectFrom('collection_products as cp')
    .innerJoin('collections as c', (join) =>
      join.onRef('c.store_id', '=', 'cp.store_id').onRef('c.id', '=', 'cp.collection_id'),
    )
    .select(['cp.collection_id', 'cp.product_id', 'c.kind', 'cp.name_key', 'cp.price_e4'])
    .select('cp.status')
    .where('cp.store_id', '=', storeId)
    .where('cp.product_id', '=', productId),
)

/** Every membership of the products, in manual and smart collections. */
export async function findMemberships(
  db: Executor,
  storeId: string,
  productIds: readonly string[],
): Promise<MembershipRow[]> {
  if (productIds.length === 1) return membershipsOfOne(db, storeId, productIds[0]!)
  return db
    .selectFrom('collection_products as cp')
    .innerJoin('collections as c', (join) =>
      join.onRef('c.store_id', '=', 'cp.store_id').onRef('c.id', '=', 'cp.collection_id'),
    )
    .select(['cp.collection_id', 'cp.product_id', 'c.kind', 'cp.name_key', 'cp.price_e4'])
    .select('cp.status')
    .where('cp.store_id', '=', storeId)
    .where(dialectOf(db).inList('cp.product_id', 'uuid', productIds))
    .execute()
}

const updateKeys = statement(
  (
    db: Executor,
    storeId: string,
    productId: string,
    nameKey: string,
    priceE4: number,
    status: string,
  ) =>
    db
      .updateTable('collection_products')
      .set({ name_key: nameKey, price_e4: priceE4, status })
      .where('store_id', '=', storeId)
      .where('product_id', '=', productId),
)

/** Copies a product's changed sort keys and status into every membership row of it. */
export async function updateMemberKeys(
  db: Executor,
  storeId: string,
  keys: MemberKeys,
): Promise<void> {
  await updateKeys(db, storeId, keys.productId, keys.nameKey, keys.priceE4, keys.status)
}

/**
 * Copies the products' sort keys and status into their membership rows where they differ, in
 * one statement that reads nothing back: a product in no collection costs an index probe.
 */
export async function refreshMemberKeys(
  db: Executor,
  storeId: string,
  productIds: readonly string[],
): Promise<void> {
  const dialect = dialectOf(db)
  await sql`
    update collection_products
    set name_key = ${dialect.lower(sql`p.name`)}, price_e4 = p.price_e4, status = p.status
    from products p
    where collection_products.store_id = ${storeId}
      and ${dialect.inList('collection_products.product_id', 'uuid', productIds)}
      and p.store_id = collection_products.store_id and p.id = collection_products.product_id
      and (collection_products.name_key <> ${dialect.lower(sql`p.name`)}
        or collection_products.price_e4 <> p.price_e4 or collection_products.status <> p.status)
  `.execute(db)
}

/** The collections a product is in (before it is deleted), and its rows there removed. */
export async function removeFromEveryCollection(
  db: Executor,
  storeId: string,
  productId: string,
): Promise<{ collectionId: string; position: number | null }[]> {
  const rows = await db
    .deleteFrom('collection_products')
    .where('store_id', '=', storeId)
    .where('product_id', '=', productId)
    .returning(['collection_id', 'position'])
    .execute()
  return rows.map((row) => ({ collectionId: row.collection_id, position: row.position }))
}
