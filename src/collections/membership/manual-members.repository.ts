import { dialectOf } from '../../db/dialect.js'
import type { Executor } from '../../db/schema.js'

/** The statements of a manual collection's positions: gaps closed, members moved, products checked. */

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
