import { sql } from 'kysely'
import { dialectOf, type Dialect } from '../db/dialect.js'
import { statement } from '../db/statements.js'
import type { Executor, ProductRow } from '../db/schema.js'

import { VARIANT_ORDER, VARIANT_READ_COLUMNS, type VariantFields } from './variant.columns.js'

/**
 * A product and its variants (by position, then creation). Undefined when the store has no
 * such product.
 *
 * PostgreSQL: one query and one row, the variants as a JSON array built in the database,
 * which saves a round trip per read. SQLite: two point reads by index, which under load cost
 * less than one statement that builds the JSON (and sorts it for the aggregate) plus parsing
 * it back; see docs/decisions/0017-hot-path-statements.md. Run at once, one after the other, they see the same
 * commit. When they cannot be (a group commit's transaction is open on the connection, so
 * they wait their turn) a commit may fall between them: the product's version, which every
 * change of its variants raises, is read again, and the reads are made again if it moved.
 */
export async function findProductWithVariants(
  db: Executor,
  storeId: string,
  productId: string,
): Promise<{ product: ProductRow; variants: VariantFields[] } | undefined> {
  return READ_WITH_VARIANTS[dialectOf(db).name](db, storeId, productId)
}

const READ_WITH_VARIANTS: Record<Dialect, typeof findProductWithVariants> = {
  async postgres(db, storeId, productId) {
    const [row] = await postgresProductRead(db, storeId, productId)
    if (row === undefined) return undefined
    const { variants, ...product } = row
    return { product, variants }
  },
  async sqlite(db, storeId, productId) {
    const product = productById.now(db, storeId, productId)
    const variants = variantsOfProduct.now(db, storeId, productId)
    if (product !== undefined && variants !== undefined) {
      return product[0] && { product: product[0], variants }
    }
    for (let attempt = 0; attempt < MAX_READ_ATTEMPTS; attempt++) {
      const [product] = await productById(db, storeId, productId)
      if (product === undefined) return undefined
      const variants = await variantsOfProduct(db, storeId, productId)
      const [after] = await productById(db, storeId, productId)
      if (after?.version === product.version) return { product, variants }
    }
    throw new Error(`product ${productId} changed during each of ${MAX_READ_ATTEMPTS} reads`)
  },
}

/**
 * How many times SQLite's reads of a product and its variants are made again when a commit
 * moved the product's version between them: each commit of the group commit is one batch,
 * so two in a row are rare, and this many is a product written without pause.
 */
const MAX_READ_ATTEMPTS = 16

/** The columns of VariantFields as JSON object arguments ('id', v.id, 'name', v.name, ...). */
function variantJsonFields() {
  return sql.join(
    VARIANT_READ_COLUMNS.map((column) => sql`${sql.lit(column)}, ${sql.ref(`v.${column}`)}`),
  )
}

const productById = statement((db: Executor, storeId: string, productId: string) =>
  db.selectFrom('products').selectAll().where('store_id', '=', storeId).where('id', '=', productId),
)

const variantsOfProduct = statement((db: Executor, storeId: string, productId: string) =>
  db
    .selectFrom('variants as v')
    .select(VARIANT_READ_COLUMNS)
    .where('store_id', '=', storeId)
    .where('product_id', '=', productId)
    .orderBy(VARIANT_ORDER),
)

const postgresProductRead = statement((db: Executor, storeId: string, productId: string) =>
  db
    .selectFrom('products as p')
    .selectAll('p')
    .select(
      sql<VariantFields[]>`coalesce((select json_agg(json_build_object(${variantJsonFields()})
        order by ${VARIANT_ORDER}) from variants as v
        where v.store_id = p.store_id and v.product_id = p.id), '[]'::json)`.as('variants'),
    )
    .where('p.store_id', '=', storeId)
    .where('p.id', '=', productId),
)

/** One variant of a product; undefined when the store has no such variant under the product. */
export async function findVariant(
  db: Executor,
  storeId: string,
  productId: string,
  variantId: string,
): Promise<VariantFields | undefined> {
  const [row] = await variantById(db, storeId, productId, variantId)
  return row
}

const variantById = statement(
  (db: Executor, storeId: string, productId: string, variantId: string) =>
    db
      .selectFrom('variants as v')
      .select(VARIANT_READ_COLUMNS)
      .where('store_id', '=', storeId)
      .where('id', '=', variantId)
      .where('product_id', '=', productId),
)

/** The variant of the store with this sku, if any (skus are unique in a store). */
export async function findVariantBySku(
  db: Executor,
  storeId: string,
  sku: string,
): Promise<VariantFields | undefined> {
  const [row] = await variantBySku(db, storeId, sku)
  return row
}

const variantBySku = statement((db: Executor, storeId: string, sku: string) =>
  db
    .selectFrom('variants as v')
    .select(VARIANT_READ_COLUMNS)
    .where('store_id', '=', storeId)
    .where('sku', '=', sku),
)
