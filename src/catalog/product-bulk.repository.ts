import type { Executor, ProductRow } from '../db/schema.js'
import { inList } from '../db/values.js'
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

/** A stored product an import's handle may name, and the handle recorded with it, if any. */
export interface ProductOfHandle {
  product: ProductRow
  importHandle: string | null
}

/**
 * The store's products an import's chunk may name, two queries: those recorded with these
 * handles (handles made into another slug, recordImportHandle), and those with these slugs,
 * each with the handle recorded with it (a product created for another handle is not one a
 * handle matches by its slug: decision 0059).
 */
export async function findProductsOfHandles(
  db: Executor,
  storeId: string,
  handles: readonly string[],
  slugs: readonly string[],
): Promise<{ byHandle: Map<string, ProductRow>; bySlug: Map<string, ProductOfHandle> }> {
  const split = ({ import_handle, ...product }: ProductRow & { import_handle: string | null }) => ({
    product: product as ProductRow,
    importHandle: import_handle,
  })
  const recorded =
    handles.length === 0
      ? []
      : await db
          .selectFrom('product_import_handles as h')
          .innerJoin('products as p', (join) =>
            join.onRef('p.store_id', '=', 'h.store_id').onRef('p.id', '=', 'h.product_id'),
          )
          .selectAll('p')
          .select('h.handle as import_handle')
          .where('h.store_id', '=', storeId)
          .where(inList(db, 'h.handle', 'text', handles))
          .execute()
  const withSlugs =
    slugs.length === 0
      ? []
      : await db
          .selectFrom('products as p')
          .leftJoin('product_import_handles as h', (join) =>
            join.onRef('h.store_id', '=', 'p.store_id').onRef('h.product_id', '=', 'p.id'),
          )
          .selectAll('p')
          .select('h.handle as import_handle')
          .where('p.store_id', '=', storeId)
          .where(inList(db, 'p.slug', 'text', slugs))
          .execute()
  return {
    byHandle: new Map(recorded.map((row) => [row.import_handle, split(row).product])),
    bySlug: new Map(withSlugs.map((row) => [row.slug, split(row)])),
  }
}

/** Records the handle an import made into another slug with the product it created. */
export async function recordImportHandle(
  db: Executor,
  storeId: string,
  handle: string,
  productId: string,
): Promise<void> {
  await db
    .insertInto('product_import_handles')
    .values({ store_id: storeId, handle, product_id: productId })
    .onConflict((oc) => oc.columns(['store_id', 'handle']).doUpdateSet({ product_id: productId }))
    .execute()
}
