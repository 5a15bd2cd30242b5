import { sql, type RawBuilder } from 'kysely'
import { dialectOf } from '../../db/dialect.js'
import type { Executor } from '../../db/schema.js'

/** The statements of a rules change or a sort order change: a collection's members replaced or moved in SQL. */

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
