import type { Executor, NewVariantRow, ProductRow, VariantRow } from '../db/schema.js'

export async function insertVariant(db: Executor, row: NewVariantRow): Promise<void> {
  await db.insertInto('variants').values(row).execute()
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

/**
 * A product and its variants (by position, then creation) in one query: a left join, so a
 * product without variants still comes back. Undefined when the store has no such product.
 */
export async function findProductWithVariantRows(
  db: Executor,
  storeId: string,
  productId: string,
): Promise<{ product: ProductRow; variants: VariantRow[] } | undefined> {
  const rows = await db
    .selectFrom('products as p')
    .leftJoin('variants as v', (join) =>
      join.onRef('v.store_id', '=', 'p.store_id').onRef('v.product_id', '=', 'p.id'),
    )
    .selectAll('p')
    .select([
      'v.id as v_id',
      'v.name as v_name',
      'v.sku as v_sku',
      'v.barcode as v_barcode',
      'v.price_e4 as v_price_e4',
      'v.compare_at_price_e4 as v_compare_at_price_e4',
      'v.options as v_options',
      'v.options_key as v_options_key',
      'v.position as v_position',
      'v.created_at as v_created_at',
      'v.updated_at as v_updated_at',
    ])
    .where('p.store_id', '=', storeId)
    .where('p.id', '=', productId)
    .orderBy('v.position')
    .orderBy('v.created_at')
    .orderBy('v.id')
    .execute()
  const first = rows[0]
  if (first === undefined) return undefined
  const product: ProductRow = {
    store_id: first.store_id,
    id: first.id,
    name: first.name,
    slug: first.slug,
    status: first.status,
    description: first.description,
    price_e4: first.price_e4,
    compare_at_price_e4: first.compare_at_price_e4,
    sku: first.sku,
    barcode: first.barcode,
    tax_rate: first.tax_rate,
    created_at: first.created_at,
    updated_at: first.updated_at,
  }
  const variants: VariantRow[] = []
  for (const row of rows) {
    // Every column of a matched variant is present; only the left join's no-match row is null.
    if (row.v_id === null) continue
    variants.push({
      store_id: storeId,
      id: row.v_id,
      product_id: productId,
      name: row.v_name!,
      sku: row.v_sku,
      barcode: row.v_barcode,
      price_e4: row.v_price_e4!,
      compare_at_price_e4: row.v_compare_at_price_e4,
      options: row.v_options!,
      options_key: row.v_options_key,
      position: row.v_position!,
      created_at: row.v_created_at!,
      updated_at: row.v_updated_at!,
    })
  }
  return { product, variants }
}
