import { sql } from 'kysely'
import { dialectOf, POSTGRES, type Dialect, type SqlDialect } from '../db/dialect.js'
import { statement } from '../db/statements.js'
import { eventInStatement, eventRow, writeEventRow, type PendingEvent } from '../outbox/outbox.js'
import type { Executor, NewVariantRow } from '../db/schema.js'
import {
  VARIANT_INSERT_COLUMNS,
  VARIANT_READ_COLUMNS,
  type VariantFields,
} from './variant.columns.js'

// The reads, the one-statement PATCH and the bulk functions live in their own files.

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
 * The variant.created event is appended with it (`event` gives its id and time).
 * Undefined when the store has no such product. One statement on PostgreSQL; on SQLite
 * three, to run inside a transaction.
 */
export async function insertVariantIntoProduct(
  db: Executor,
  fields: NewVariantFields,
  event: PendingEvent,
): Promise<{ price_e4: number; position: number } | undefined> {
  return INSERT_INTO_PRODUCT[dialectOf(db).name](db, fields, event)
}

const INSERT_INTO_PRODUCT: Record<Dialect, typeof insertVariantIntoProduct> = {
  async postgres(db, fields, event) {
    const statement = insertVariantStatements[statementShape(fields)]
    const [inserted] = await statement(
      db,
      ...variantValues(fields, fields.price_e4, fields.position),
      event.type,
      event.id,
      event.createdAt,
    )
    return inserted
  },
  async sqlite(db, fields, event) {
    const [product] =
      fields.position === null
        ? await raiseToNextPosition(db, fields.store_id, fields.product_id, fields.updated_at)
        : await raiseToPosition(
            db,
            fields.store_id,
            fields.product_id,
            fields.position,
            fields.updated_at,
          )
    if (!product) return undefined
    const priceE4 = fields.price_e4 ?? product.price_e4
    const position = fields.position ?? product.max_variant_position
    const values = variantValues(fields, priceE4, position)
    await insertVariantRow(db, ...values)
    const row = Object.fromEntries(VARIANT_INSERT_COLUMNS.map((column, i) => [column, values[i]]))
    await writeEventRow(db, eventRow(fields.store_id, event, { ...row, version: 1 }))
    return { price_e4: priceE4, position }
  },
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
    fields.weight_grams ?? null,
    fields.created_at,
    fields.updated_at,
    fields.metafields ?? '{}',
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
  weightGrams: number | null,
  createdAt: string,
  updatedAt: string,
  metafields: string,
]

/** Whether the price and the position are the product's defaults: each way is its own SQL. */
type StatementShape = `${'price' | 'default-price'}/${'position' | 'default-position'}`

function statementShape(fields: NewVariantFields): StatementShape {
  return `${fields.price_e4 === null ? 'default-price' : 'price'}/${
    fields.position === null ? 'default-position' : 'position'
  }`
}

function insertVariantStatement(defaultPrice: boolean, defaultPosition: boolean) {
  return statement((db: Executor, ...args: [...VariantValues, string, string, string]) => {
    const values = args.slice(0, VARIANT_INSERT_COLUMNS.length) as VariantValues
    const [eventType, eventId, eventAt] = args.slice(VARIANT_INSERT_COLUMNS.length)
    const [storeId, id, productId, name, sku, barcode, priceE4, compareAtPriceE4] = values
    const [, , , , , , , , options, optionsKey, position, weightGrams, createdAt, updatedAt] =
      values
    const metafields = values[VARIANT_INSERT_COLUMNS.length - 1]
    return db
      .with('product', (db) =>
        raiseMaxVariantPosition(
          db as unknown as Executor,
          POSTGRES,
          storeId,
          productId,
          defaultPosition ? null : position,
          updatedAt,
        ),
      )
      .with('inserted', (db) =>
        db
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
                eb
                  .cast<number | null>(eb.val(compareAtPriceE4), 'bigint')
                  .as('compare_at_price_e4'),
                eb.cast<string>(eb.val(options), 'json').as('options'),
                eb.cast<string | null>(eb.val(optionsKey), 'text').as('options_key'),
                defaultPosition
                  ? eb.ref('product.max_variant_position').as('position')
                  : eb.cast<number>(eb.val(position), 'integer').as('position'),
                eb.cast<number | null>(eb.val(weightGrams), 'bigint').as('weight_grams'),
                eb.cast<string>(eb.val(createdAt), 'timestamptz').as('created_at'),
                eb.cast<string>(eb.val(updatedAt), 'timestamptz').as('updated_at'),
                eb.cast<string>(eb.val(metafields), 'json').as('metafields'),
              ]),
          )
          .returning(VARIANT_READ_COLUMNS),
      )
      .with('event', () =>
        eventInStatement(
          'inserted',
          storeId,
          { type: eventType, id: eventId, createdAt: eventAt },
          sql`to_json(inserted)`,
          null,
        ),
      )
      .selectFrom('inserted')
      .select(['price_e4', 'position'])
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
const raiseToNextPosition = statement(
  (db: Executor, storeId: string, productId: string, updatedAt: string) =>
    raiseMaxVariantPosition(db, dialectOf(db), storeId, productId, null, updatedAt),
)

const raiseToPosition = statement(
  (db: Executor, storeId: string, productId: string, position: number, updatedAt: string) =>
    raiseMaxVariantPosition(db, dialectOf(db), storeId, productId, position, updatedAt),
)

/** The values in the order of VARIANT_INSERT_COLUMNS, as the PostgreSQL statements take them. */
const insertVariantRow = statement((db: Executor, ...values: VariantValues) =>
  db
    .insertInto('variants')
    .values(
      Object.fromEntries(
        VARIANT_INSERT_COLUMNS.map((column, i) => [column, values[i]]),
      ) as NewVariantRow,
    ),
)

/**
 * Raises the product's max_variant_position to the new variant's position, and returns it.
 * The product has changed: its version and updatedAt move too.
 */
function raiseMaxVariantPosition(
  db: Executor,
  dialect: SqlDialect,
  storeId: string,
  productId: string,
  position: number | null,
  updatedAt: string,
) {
  return db
    .updateTable('products')
    .set((eb) => ({
      version: eb('version', '+', 1),
      updated_at: dialect.movedOn('products.updated_at', updatedAt),
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

/** The columns a PATCH may change, in the order updateVariantRow takes them. */
export type VariantChanges = [
  name: string,
  sku: string | null,
  barcode: string | null,
  priceE4: number,
  compareAtPriceE4: number | null,
  options: string,
  optionsKey: string | null,
  position: number,
  weightGrams: number | null,
  updatedAt: string,
  metafields: string,
]

/** Writes a variant's new values and raises its version; returns the variant as it now is. */
export async function updateVariantRow(
  db: Executor,
  storeId: string,
  variantId: string,
  changes: VariantChanges,
): Promise<VariantFields> {
  const [row] = await updateVariant(db, storeId, variantId, ...changes)
  if (row === undefined) throw new Error('the variant to update is gone')
  return row
}

const updateVariant = statement(
  (db: Executor, storeId: string, variantId: string, ...changes: VariantChanges) => {
    const [name, sku, barcode, priceE4, compareAtPriceE4, options, optionsKey] = changes
    const [, , , , , , , position, weightGrams, updatedAt, metafields] = changes
    return db
      .updateTable('variants')
      .set((eb) => ({
        name,
        sku,
        barcode,
        price_e4: priceE4,
        compare_at_price_e4: compareAtPriceE4,
        options,
        options_key: optionsKey,
        position,
        weight_grams: weightGrams,
        metafields,
        updated_at: dialectOf(db).movedOn('variants.updated_at', updatedAt),
        version: eb('version', '+', 1),
      }))
      .where('store_id', '=', storeId)
      .where('id', '=', variantId)
      .returning(VARIANT_READ_COLUMNS)
  },
)

export async function deleteVariantRow(
  db: Executor,
  storeId: string,
  variantId: string,
): Promise<void> {
  await deleteVariant(db, storeId, variantId)
}

const deleteVariant = statement((db: Executor, storeId: string, variantId: string) =>
  db.deleteFrom('variants').where('store_id', '=', storeId).where('id', '=', variantId),
)
