import { sql } from 'kysely'
import { isPostgres } from '../db/database.js'
import { precompiled } from '../db/precompiled.js'
import type { Executor, NewVariantRow, ProductRow, VariantRow } from '../db/schema.js'

/** What the caller decides of a new variant; price and position may be left to the product. */
export type NewVariantFields = Omit<NewVariantRow, 'price_e4' | 'position'> & {
  price_e4: number | null
  position: number | null
}

/**
 * Inserts a variant, taking its default price from the product and its default position
 * from the product's `max_variant_position` (one more than the highest so far), which is
 * raised in the same step. The product's row is locked by that update until the insert
 * commits, so concurrent additions to one product get distinct positions.
 * Undefined when the store has no such product. One statement on PostgreSQL; on SQLite two,
 * to run inside a transaction.
 */
export async function insertVariantIntoProduct(
  db: Executor,
  fields: NewVariantFields,
): Promise<{ price_e4: number; position: number } | undefined> {
  if (isPostgres(db)) {
    const statement = insertVariantStatements[statementShape(fields)]
    const [inserted] = await statement(
      db,
      ...variantValues(fields, fields.price_e4, fields.position),
    )
    return inserted
  }
  const [product] =
    fields.position === null
      ? await raiseToNextPosition(db, fields.store_id, fields.product_id)
      : await raiseToPosition(db, fields.store_id, fields.product_id, fields.position)
  if (!product) return undefined
  const priceE4 = fields.price_e4 ?? product.price_e4
  const position = fields.position ?? product.max_variant_position
  await insertVariantRow(db, ...variantValues(fields, priceE4, position))
  return { price_e4: priceE4, position }
}

/** The values of the insert statements, in the order of VARIANT_INSERT_COLUMNS. */
function variantValues(
  fields: NewVariantFields,
  priceE4: number | null,
  position: number | null,
): VariantValues {
  return [
    fields.store_id,
    fields.id,
    fields.product_id,
    fields.name,
    fields.sku ?? null,
    fields.barcode ?? null,
    priceE4,
    fields.compare_at_price_e4 ?? null,
    fields.options,
    fields.options_key ?? null,
    position,
    fields.created_at,
    fields.updated_at,
  ]
}

type VariantValues = [
  storeId: string,
  id: string,
  productId: string,
  name: string,
  sku: string | null,
  barcode: string | null,
  priceE4: number | null,
  compareAtPriceE4: number | null,
  options: string,
  optionsKey: string | null,
  position: number | null,
  createdAt: string,
  updatedAt: string,
]

/** Whether the price and the position are the product's defaults: each way is its own SQL. */
type StatementShape = `${'price' | 'default-price'}/${'position' | 'default-position'}`

function statementShape(fields: NewVariantFields): StatementShape {
  return `${fields.price_e4 === null ? 'default-price' : 'price'}/${
    fields.position === null ? 'default-position' : 'position'
  }`
}

function insertVariantStatement(defaultPrice: boolean, defaultPosition: boolean) {
  return precompiled((db: Executor, ...values: VariantValues) => {
    const [storeId, id, productId, name, sku, barcode, priceE4, compareAtPriceE4] = values
    const [, , , , , , , , options, optionsKey, position, createdAt, updatedAt] = values
    return db
      .with('product', (db) =>
        raiseMaxVariantPosition(
          db as unknown as Executor,
          storeId,
          productId,
          defaultPosition ? null : position,
        ),
      )
      .insertInto('variants')
      .columns(VARIANT_INSERT_COLUMNS)
      .expression((db) =>
        db
          .selectFrom('product')
          .select((eb) => [
            eb.cast<string>(eb.val(storeId), 'text').as('store_id'),
            eb.cast<string>(eb.val(id), 'uuid').as('id'),
            eb.cast<string>(eb.val(productId), 'uuid').as('product_id'),
            eb.cast<string>(eb.val(name), 'text').as('name'),
            eb.cast<string | null>(eb.val(sku), 'text').as('sku'),
            eb.cast<string | null>(eb.val(barcode), 'text').as('barcode'),
            defaultPrice
              ? eb.ref('product.price_e4').as('price_e4')
              : eb.cast<number>(eb.val(priceE4), 'bigint').as('price_e4'),
            eb.cast<number | null>(eb.val(compareAtPriceE4), 'bigint').as('compare_at_price_e4'),
            eb.cast<string>(eb.val(options), 'json').as('options'),
            eb.cast<string | null>(eb.val(optionsKey), 'text').as('options_key'),
            defaultPosition
              ? eb.ref('product.max_variant_position').as('position')
              : eb.cast<number>(eb.val(position), 'integer').as('position'),
            eb.cast<string>(eb.val(createdAt), 'timestamptz').as('created_at'),
            eb.cast<string>(eb.val(updatedAt), 'timestamptz').as('updated_at'),
          ]),
      )
      .returning(['price_e4', 'position'])
  })
}

/** The PostgreSQL statements of insertVariantIntoProduct, one per shape, compiled once each. */
const insertVariantStatements: Record<StatementShape, ReturnType<typeof insertVariantStatement>> = {
  'price/position': insertVariantStatement(false, false),
  'price/default-position': insertVariantStatement(false, true),
  'default-price/position': insertVariantStatement(true, false),
  'default-price/default-position': insertVariantStatement(true, true),
}

// SQLite's two steps of insertVariantIntoProduct, each compiled once.
const raiseToNextPosition = precompiled((db: Executor, storeId: string, productId: string) =>
  raiseMaxVariantPosition(db, storeId, productId, null),
)

const raiseToPosition = precompiled(
  (db: Executor, storeId: string, productId: string, position: number) =>
    raiseMaxVariantPosition(db, storeId, productId, position),
)

/** The values in the order of VARIANT_INSERT_COLUMNS, as the PostgreSQL statements take them. */
const insertVariantRow = precompiled((db: Executor, ...values: VariantValues) =>
  db
    .insertInto('variants')
    .values(
      Object.fromEntries(
        VARIANT_INSERT_COLUMNS.map((column, i) => [column, values[i]]),
      ) as NewVariantRow,
    ),
)

const VARIANT_INSERT_COLUMNS = [
  'store_id',
  'id',
  'product_id',
  'name',
  'sku',
  'barcode',
  'price_e4',
  'compare_at_price_e4',
  'options',
  'options_key',
  'position',
  'created_at',
  'updated_at',
] as const

/** Raises the product's max_variant_position to the new variant's position, and returns it. */
function raiseMaxVariantPosition(
  db: Executor,
  storeId: string,
  productId: string,
  position: number | null,
) {
  return db
    .updateTable('products')
    .set((eb) => ({
      max_variant_position:
        position === null
          ? eb('max_variant_position', '+', 1)
          : eb
              .case()
              .when('max_variant_position', '<', position)
              .then(position)
              .else(eb.ref('max_variant_position'))
              .end(),
    }))
    .where('store_id', '=', storeId)
    .where('id', '=', productId)
    .returning(['price_e4', 'max_variant_position'])
}

/** A variant as the product read returns it: every column the API shows. */
export type VariantFields = Omit<VariantRow, 'store_id' | 'options_key'>

/**
 * A product and its variants (by position, then creation). Undefined when the store has no
 * such product.
 *
 * PostgreSQL: one query and one row, the variants as a JSON array built in the database,
 * which saves a round trip per read. SQLite: two point reads by index, which under load cost
 * less than one statement that builds the JSON (and sorts it for the aggregate) plus parsing
 * it back; see docs/decisions.md. They are two read transactions, and a commit may fall
 * between them: the variants are then the newer read. The product columns the API shows
 * never change once written, so the answer is still what the store held at the second read.
 */
export async function findProductWithVariants(
  db: Executor,
  storeId: string,
  productId: string,
): Promise<{ product: ProductRow; variants: VariantFields[] } | undefined> {
  if (isPostgres(db)) {
    const [row] = await postgresProductRead(db, storeId, productId)
    if (row === undefined) return undefined
    const { variants, ...product } = row
    return { product, variants }
  }
  const [product] = await productById(db, storeId, productId)
  if (product === undefined) return undefined
  return { product, variants: await variantsOfProduct(db, storeId, productId) }
}

/** The columns of VariantFields: what the product read returns of each variant. */
const VARIANT_READ_COLUMNS = VARIANT_INSERT_COLUMNS.filter(
  (column) => column !== 'store_id' && column !== 'options_key',
)

/** The columns of VariantFields as JSON object arguments ('id', v.id, 'name', v.name, ...). */
function variantJsonFields() {
  return sql.join(
    VARIANT_READ_COLUMNS.map((column) => sql`${sql.lit(column)}, ${sql.ref(`v.${column}`)}`),
  )
}

/** The order of a product's variants, on both dialects: by position, then creation. */
const VARIANT_ORDER = sql`v.position, v.created_at, v.id`

const productById = precompiled((db: Executor, storeId: string, productId: string) =>
  db.selectFrom('products').selectAll().where('store_id', '=', storeId).where('id', '=', productId),
)

const variantsOfProduct = precompiled((db: Executor, storeId: string, productId: string) =>
  db
    .selectFrom('variants as v')
    .select(VARIANT_READ_COLUMNS)
    .where('store_id', '=', storeId)
    .where('product_id', '=', productId)
    .orderBy(VARIANT_ORDER),
)

const postgresProductRead = precompiled((db: Executor, storeId: string, productId: string) =>
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
