import { sql, type RawBuilder } from 'kysely'
import { dialectOf } from '../db/dialect.js'
import { insertRows } from '../db/multi-row-insert.js'
import { precompiled } from '../db/precompiled.js'
import type { Executor, ProductRow } from '../db/schema.js'
import { toIso } from '../db/values.js'

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

const productById = precompiled((db: Executor, storeId: string, id: string) =>
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

const variantOptionsOfOne = precompiled((db: Executor, storeId: string, productId: string) =>
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

const membershipsOfOne = precompiled((db: Executor, storeId: string, productId: string) =>
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

const updateKeys = precompiled(
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

/** The event a rules change appends when it changes the members: decided by the service. */
export interface MembersChangedEvent {
  id: string
  type: string
  createdAt: string
}

type Replace = (
  db: Executor,
  storeId: string,
  collectionId: string,
  condition: RawBuilder<boolean>,
  sortedBy: string,
  event: MembersChangedEvent,
) => Promise<void>

/** A member of the collection that `condition` (over `p`) no longer holds for. */
function leaving(collectionId: RawBuilder<unknown> | string, condition: RawBuilder<boolean>) {
  return sql<boolean>`cp.collection_id = ${collectionId}
    and not exists (select 1 from products p
      where p.store_id = cp.store_id and p.id = cp.product_id and ${condition})`
}

/** A product of the store that `condition` holds for and that is not a member yet. */
function coming(
  storeId: string,
  collectionId: RawBuilder<unknown> | string,
  condition: RawBuilder<boolean>,
) {
  return sql<boolean>`p.store_id = ${storeId} and ${condition}
    and not exists (select 1 from collection_products cp
      where cp.store_id = p.store_id and cp.collection_id = ${collectionId} and cp.product_id = p.id)`
}

/**
 * PostgreSQL: one statement. The delete and the insert are common table expressions whose
 * returned ids the event's object aggregates (json_agg), appended only when either changed
 * something; the ids never leave the server.
 */
const replaceOnPostgres: Replace = async (
  db,
  storeId,
  collectionId,
  condition,
  sortedBy,
  event,
) => {
  const collection = sql`${collectionId}::uuid`
  await sql`
    with removed as (
      delete from collection_products cp
      where cp.store_id = ${storeId} and ${leaving(collection, condition)}
      returning cp.product_id),
    added as (
      insert into collection_products
        (store_id, collection_id, product_id, position, created_at, name_key, price_e4, status,
          sorted_by)
      select p.store_id, ${collection}, p.id, null, p.created_at, lower(p.name), p.price_e4,
        p.status, ${sortedBy}::text
      from products p
      where ${coming(storeId, collection, condition)}
      returning product_id)
    insert into events (store_id, id, type, object, previous, created_at)
    select ${storeId}::text, ${event.id}::uuid, ${event.type}::text,
      json_build_object('collectionId', ${collectionId}::text,
        'added', coalesce((select json_agg(product_id) from added), '[]'::json),
        'removed', coalesce((select json_agg(product_id) from removed), '[]'::json)),
      null::json, ${event.createdAt}::timestamptz
    where exists (select 1 from added) or exists (select 1 from removed)`.execute(db)
}

/**
 * SQLite (no DML in a common table expression): the event first, its object's `added` and
 * `removed` aggregated (json_group_array) by one evaluation of the condition each; then the
 * delete and the insert read their ids back from that event's row (json_each). Three
 * statements; the ids never reach JavaScript.
 */
const replaceOnSqlite: Replace = async (db, storeId, collectionId, condition, sortedBy, event) => {
  const { rows } = await sql<{ seq: number }>`
    insert into events (store_id, id, type, object, previous, created_at)
    select ${storeId}, ${event.id}, ${event.type},
      json_object('collectionId', ${collectionId}, 'added', json(a.ids), 'removed', json(r.ids)),
      null, ${event.createdAt}
    from (select json_group_array(p.id) as ids, count(*) as n from products p
        where ${coming(storeId, collectionId, condition)}) as a,
      (select json_group_array(cp.product_id) as ids, count(*) as n from collection_products cp
        where cp.store_id = ${storeId} and ${leaving(collectionId, condition)}) as r
    where a.n > 0 or r.n > 0
    returning seq`.execute(db)
  const seq = rows[0]?.seq
  if (seq === undefined) return
  const ids = (key: string) =>
    sql`select value from json_each((select object from events where seq = ${seq}), ${`$.${key}`})`
  await sql`
    delete from collection_products
    where store_id = ${storeId} and collection_id = ${collectionId}
      and product_id in (${ids('removed')})`.execute(db)
  await sql`
    insert into collection_products
      (store_id, collection_id, product_id, position, created_at, name_key, price_e4, status,
        sorted_by)
    select p.store_id, ${collectionId}, p.id, null, p.created_at, unicode_lower(p.name),
      p.price_e4, p.status, ${sortedBy}
    from products p
    where p.store_id = ${storeId} and p.id in (${ids('added')})`.execute(db)
}

const REPLACE: Record<'sqlite' | 'postgres', Replace> = {
  sqlite: replaceOnSqlite,
  postgres: replaceOnPostgres,
}

/**
 * Makes a smart collection's members the products of the store for which `condition` (over
 * `p`, rulesSql) holds, whatever their number, and appends `event` (collection.products_changed,
 * its object `{collectionId, added, removed}` as appendMembersChanged writes it) when the
 * members changed, the ids aggregated in SQL: nothing proportional to the change passes
 * through the process.
 */
export async function replaceMembersWhere(
  db: Executor,
  storeId: string,
  collectionId: string,
  condition: RawBuilder<boolean>,
  sortedBy: string,
  event: MembersChangedEvent,
): Promise<void> {
  await REPLACE[dialectOf(db).name](db, storeId, collectionId, condition, sortedBy, event)
}

/** Moves a collection's member rows to the sort index of its new sort order (sortedBy). */
export async function resortMembers(
  db: Executor,
  storeId: string,
  collectionId: string,
  sortedBy: string,
): Promise<void> {
  await db
    .updateTable('collection_products')
    .set({ sorted_by: sortedBy })
    .where('store_id', '=', storeId)
    .where('collection_id', '=', collectionId)
    .where('sorted_by', '<>', sortedBy)
    .execute()
}

/** How many products of the store `condition` (over `p`, rulesSql) holds for: one count. */
export async function countProductsWhere(
  db: Executor,
  storeId: string,
  condition: RawBuilder<boolean>,
): Promise<number> {
  const { rows } = await sql<{ count: number | string }>`
    select count(*) as count from products p
    where p.store_id = ${storeId} and ${condition}`.execute(db)
  return Number(rows[0]?.count ?? 0)
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

/** Closes the gap a manual member left at `position`. */
export async function closeGap(
  db: Executor,
  storeId: string,
  collectionId: string,
  position: number,
): Promise<void> {
  await db
    .updateTable('collection_products')
    .set((eb) => ({ position: eb('position', '-', 1) }))
    .where('store_id', '=', storeId)
    .where('collection_id', '=', collectionId)
    .where('position', '>', position)
    .execute()
}

/** The products among `ids` that the store has, held against deletes until the transaction ends. */
export async function findStoreProductsForShare(
  db: Executor,
  storeId: string,
  ids: readonly string[],
) {
  return dialectOf(db)
    .forShare(
      db
        .selectFrom('products')
        .select(['id', 'name', 'price_e4', 'status', 'created_at'])
        .where('store_id', '=', storeId)
        .where(dialectOf(db).inList('id', 'uuid', ids)),
    )
    .execute()
}

/** The members among `ids` of a collection. */
export async function findMembersAmong(
  db: Executor,
  storeId: string,
  collectionId: string,
  ids: readonly string[],
): Promise<{ product_id: string; position: number | null }[]> {
  return db
    .selectFrom('collection_products')
    .select(['product_id', 'position'])
    .where('store_id', '=', storeId)
    .where('collection_id', '=', collectionId)
    .where(dialectOf(db).inList('product_id', 'uuid', ids))
    .execute()
}

export async function maxPosition(
  db: Executor,
  storeId: string,
  collectionId: string,
): Promise<number> {
  const row = await db
    .selectFrom('collection_products')
    .select((eb) => eb.fn.max('position').as('max'))
    .where('store_id', '=', storeId)
    .where('collection_id', '=', collectionId)
    .executeTakeFirst()
  return Number(row?.max ?? 0)
}

/** Moves a manual member from `from` to `to` (both within 1..count), shifting those between. */
export async function moveMember(
  db: Executor,
  storeId: string,
  collectionId: string,
  productId: string,
  from: number,
  to: number,
): Promise<void> {
  if (from === to) return
  const [low, high, step] = to < from ? [to, from - 1, 1] : [from + 1, to, -1]
  await db
    .updateTable('collection_products')
    .set((eb) => ({ position: eb('position', '+', step) }))
    .where('store_id', '=', storeId)
    .where('collection_id', '=', collectionId)
    .where('position', '>=', low)
    .where('position', '<=', high)
    .execute()
  await db
    .updateTable('collection_products')
    .set({ position: to })
    .where('store_id', '=', storeId)
    .where('collection_id', '=', collectionId)
    .where('product_id', '=', productId)
    .execute()
}
