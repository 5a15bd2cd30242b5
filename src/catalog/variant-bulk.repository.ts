import { sql } from 'kysely'
import { dialectOf } from '../db/dialect.js'
import { insertRows } from '../db/multi-row-insert.js'
import { inList } from '../db/values.js'
import type { Executor, NewVariantRow } from '../db/schema.js'

import {
  VARIANT_INSERT_COLUMNS,
  VARIANT_ORDER,
  VARIANT_READ_COLUMNS,
  type VariantFields,
} from './variant.columns.js'

/**
 * The most option names one product of the store uses (across its variants, each name once),
 * counted in the database: what an export needs before its header, without reading the store.
 */
export async function maxOptionNamesOfAProduct(db: Executor, storeId: string): Promise<number> {
  const keys = dialectOf(db).joinJsonObjectKeys('v.options', 'k')
  const { rows } = await sql<{ names: number | null }>`
    select max(names) as names from (
      select count(distinct k.key) as names from variants v ${keys}
      where v.store_id = ${storeId} group by v.product_id
    ) as counted
  `.execute(db)
  return Number(rows[0]?.names ?? 0)
}

/** The variants of these products, each product's in their order: an import's batch at once. */
export async function findVariantsOfProducts(
  db: Executor,
  storeId: string,
  productIds: readonly string[],
): Promise<VariantFields[]> {
  if (productIds.length === 0) return []
  return db
    .selectFrom('variants as v')
    .select(VARIANT_READ_COLUMNS)
    .where('store_id', '=', storeId)
    .where(inList(db, 'product_id', 'uuid', productIds))
    .orderBy(sql`v.product_id, ${VARIANT_ORDER}`)
    .execute()
}

/** Which products of the store hold these skus, if any. */
export async function findSkuHolders(
  db: Executor,
  storeId: string,
  skus: readonly string[],
): Promise<{ sku: string; product_id: string }[]> {
  if (skus.length === 0) return []
  const rows = await db
    .selectFrom('variants')
    .select(['sku', 'product_id'])
    .where('store_id', '=', storeId)
    .where(inList(db, 'sku', 'text', skus))
    .execute()
  return rows.map((row) => ({ sku: row.sku!, product_id: row.product_id }))
}

/**
 * Inserts new variants as given, several at once (a bulk create's, whose product rows already
 * count them): the unique indexes refuse a sku another variant of the store has.
 */
export async function insertNewVariantRows(
  db: Executor,
  rows: readonly (NewVariantRow & { position: number; price_e4: number })[],
): Promise<void> {
  await insertRows(
    db,
    'variants',
    VARIANT_INSERT_COLUMNS,
    rows.map((row) => VARIANT_INSERT_COLUMNS.map((column) => row[column])),
  )
}
