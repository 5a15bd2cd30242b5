import type { Executor, NewVariantRow, VariantRow } from '../db/schema.js'

export async function insertVariant(db: Executor, row: NewVariantRow): Promise<void> {
  await db.insertInto('variants').values(row).execute()
}

/** A product's variants by position, then creation. */
export function listVariantRows(
  db: Executor,
  storeId: string,
  productId: string,
): Promise<VariantRow[]> {
  return db
    .selectFrom('variants')
    .selectAll()
    .where('store_id', '=', storeId)
    .where('product_id', '=', productId)
    .orderBy('position')
    .orderBy('created_at')
    .orderBy('id')
    .execute()
}

/** The highest position among a product's variants, or 0 when it has none. */
export async function highestVariantPosition(
  db: Executor,
  storeId: string,
  productId: string,
): Promise<number> {
  const row = await db
    .selectFrom('variants')
    .select((eb) => eb.fn.max('position').as('highest'))
    .where('store_id', '=', storeId)
    .where('product_id', '=', productId)
    .executeTakeFirst()
  return row?.highest ?? 0
}
