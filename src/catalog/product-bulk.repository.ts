import type { Executor, ProductRow } from '../db/schema.js'
import { insertRows } from '../db/multi-row-insert.js'
import { productSlugs } from '../slugs/slug-claims.js'

/** Every column of a product row. */
export const PRODUCT_COLUMNS = [
  'store_id',
  'id',
  'name',
  'slug',
  'status',
  'description',
  'price_e4',
  'compare_at_price_e4',
  'sku',
  'barcode',
  'tax_rate',
  'vendor',
  'product_type',
  'tags',
  'images',
  'max_variant_position',
  'version',
  'created_at',
  'updated_at',
  'metafields',
] as const satisfies readonly (keyof ProductRow)[]

/** A product as a bulk create inserts it: its row, its variants already counted; its tag keys. */
export interface CountedNewProduct {
  row: ProductRow & { tags: string; images: string; created_at: string; updated_at: string }
  tagKeys: string[]
}

/**
 * Inserts new products whose slugs were set by hand (a bulk create's), several at once:
 * the slugs counted as handed out and their suffixes reserved, as claimSlugSetByHand does one
 * by one, then the rows and their tags, a few statements whatever their number. The slugs
 * must differ from each other; the products_slug_key constraint refuses one that another
 * product of the store has (the caller rolls the whole insert back).
 */
export async function insertProductsWithSlugsSetByHand(
  db: Executor,
  storeId: string,
  products: readonly CountedNewProduct[],
): Promise<void> {
  if (products.length === 0) return
  await productSlugs.claimAllSetByHand(
    db,
    storeId,
    products.map(({ row }) => row.slug),
  )
  await insertRows(
    db,
    'products',
    PRODUCT_COLUMNS,
    products.map(({ row }) => PRODUCT_COLUMNS.map((column) => row[column])),
  )
  await insertRows(
    db,
    'product_tags',
    ['store_id', 'product_id', 'tag_key', 'status', 'created_at'],
    products.flatMap(({ row, tagKeys }) =>
      tagKeys.map((tagKey) => [storeId, row.id, tagKey, row.status, row.created_at]),
    ),
  )
}
