import { sql } from 'kysely'
import { isPostgres } from '../db/database.js'
import { patchedColumns, sentPairs, setEntries } from '../db/merge-patch-sql.js'
import { precompiled } from '../db/precompiled.js'
import { eventInStatement, eventRow, writeEventRow, type PendingEvent } from '../events/outbox.js'
import { movedOn } from '../db/timestamps.js'
import { insertRows } from '../db/multi-row-insert.js'
import { inList } from '../db/values.js'
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
 * The variant.created event is appended with it (`event` gives its id and time).
 * Undefined when the store has no such product. One statement on PostgreSQL; on SQLite
 * three, to run inside a transaction.
 */
export async function insertVariantIntoProduct(
  db: Executor,
  fields: NewVariantFields,
  event: PendingEvent,
): Promise<{ price_e4: number; position: number } | undefined> {
  if (isPostgres(db)) {
    const statement = insertVariantStatements[statementShape(fields)]
    const [inserted] = await statement(
      db,
      ...variantValues(fields, fields.price_e4, fields.position),
      event.type,
      event.id,
      event.createdAt,
    )
    return inserted
  }
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
]

/** Whether the price and the position are the product's defaults: each way is its own SQL. */
type StatementShape = `${'price' | 'default-price'}/${'position' | 'default-position'}`

function statementShape(fields: NewVariantFields): StatementShape {
  return `${fields.price_e4 === null ? 'default-price' : 'price'}/${
    fields.position === null ? 'default-position' : 'position'
  }`
}

function insertVariantStatement(defaultPrice: boolean, defaultPosition: boolean) {
  return precompiled((db: Executor, ...args: [...VariantValues, string, string, string]) => {
    const values = args.slice(0, VARIANT_INSERT_COLUMNS.length) as VariantValues
    const [eventType, eventId, eventAt] = args.slice(VARIANT_INSERT_COLUMNS.length)
    const [storeId, id, productId, name, sku, barcode, priceE4, compareAtPriceE4] = values
    const [, , , , , , , , options, optionsKey, position, weightGrams, createdAt, updatedAt] =
      values
    return db
      .with('product', (db) =>
        raiseMaxVariantPosition(
          db as unknown as Executor,
          true,
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
const raiseToNextPosition = precompiled(
  (db: Executor, storeId: string, productId: string, updatedAt: string) =>
    raiseMaxVariantPosition(db, false, storeId, productId, null, updatedAt),
)

const raiseToPosition = precompiled(
  (db: Executor, storeId: string, productId: string, position: number, updatedAt: string) =>
    raiseMaxVariantPosition(db, false, storeId, productId, position, updatedAt),
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

export const VARIANT_INSERT_COLUMNS = [
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
  'weight_grams',
  'created_at',
  'updated_at',
] as const

/**
 * Raises the product's max_variant_position to the new variant's position, and returns it.
 * The product has changed: its version and updatedAt move too.
 */
function raiseMaxVariantPosition(
  db: Executor,
  postgres: boolean,
  storeId: string,
  productId: string,
  position: number | null,
  updatedAt: string,
) {
  return db
    .updateTable('products')
    .set((eb) => ({
      version: eb('version', '+', 1),
      updated_at: movedOn(postgres, 'products.updated_at', updatedAt),
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

/** A variant as the reads return it: every column the API shows. */
export type VariantFields = Omit<VariantRow, 'store_id' | 'options_key'>

/**
 * A product and its variants (by position, then creation). Undefined when the store has no
 * such product.
 *
 * PostgreSQL: one query and one row, the variants as a JSON array built in the database,
 * which saves a round trip per read. SQLite: two point reads by index, which under load cost
 * less than one statement that builds the JSON (and sorts it for the aggregate) plus parsing
 * it back; see docs/decisions.md. Run at once, one after the other, they see the same
 * commit. When they cannot be (a group commit's transaction is open on the connection, so
 * they wait their turn) a commit may fall between them: the product's version, which every
 * change of its variants raises, is read again, and the reads are made again if it moved.
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
  const product = productById.now(db, storeId, productId)
  const variants = variantsOfProduct.now(db, storeId, productId)
  if (product !== undefined && variants !== undefined) {
    return product[0] && { product: product[0], variants }
  }
  for (;;) {
    const [product] = await productById(db, storeId, productId)
    if (product === undefined) return undefined
    const variants = await variantsOfProduct(db, storeId, productId)
    const [after] = await productById(db, storeId, productId)
    if (after?.version === product.version) return { product, variants }
  }
}

/** The columns of VariantFields: what the reads return of each variant. */
const VARIANT_READ_COLUMNS = [
  ...VARIANT_INSERT_COLUMNS.filter((column) => column !== 'store_id' && column !== 'options_key'),
  'version',
] as const

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

const variantById = precompiled(
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

const variantBySku = precompiled((db: Executor, storeId: string, sku: string) =>
  db
    .selectFrom('variants as v')
    .select(VARIANT_READ_COLUMNS)
    .where('store_id', '=', storeId)
    .where('sku', '=', sku),
)

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

const updateVariant = precompiled(
  (db: Executor, storeId: string, variantId: string, ...changes: VariantChanges) => {
    const [name, sku, barcode, priceE4, compareAtPriceE4, options, optionsKey] = changes
    const [, , , , , , , position, weightGrams, updatedAt] = changes
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
        updated_at: movedOn(isPostgres(db), 'variants.updated_at', updatedAt),
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

const deleteVariant = precompiled((db: Executor, storeId: string, variantId: string) =>
  db.deleteFrom('variants').where('store_id', '=', storeId).where('id', '=', variantId),
)

/**
 * The variant columns a PATCH can change in one statement, with their PostgreSQL types. A
 * PATCH of the position takes the transaction path: the product's highest position is taken
 * again from its variants after the change, which one statement's snapshot cannot see.
 */
const ONE_STATEMENT_COLUMNS = {
  name: 'text',
  sku: 'text',
  barcode: 'text',
  price_e4: 'bigint',
  compare_at_price_e4: 'bigint',
  weight_grams: 'integer',
} as const

export interface OneStatementVariantPatch {
  storeId: string
  productId: string
  variantId: string
  changes: Partial<Record<keyof typeof ONE_STATEMENT_COLUMNS, string | number | null>>
  /** Options sent, as JSON text with their key (see optionsKey); undefined when not sent. */
  options: { text: string; key: string | null } | undefined
  /** The versions If-Match allows, or 'any'. */
  versions: 'any' | number[]
  updatedAt: string
  /** The event the service decided, appended by the same statement. */
  event: PendingEvent
}

/**
 * A variant's PATCH as one statement on PostgreSQL: the product's row is locked first (as on
 * the transaction path), the variant's columns sent are set and its version raised only if
 * its version is one If-Match allows and a value sent differs from the stored one (options as
 * a set: the same set in another key order is no change), and then the product's version
 * and updatedAt move, and the variant.updated event is appended with the variant's row before
 * (read by the statement's snapshot) and after. The update applies only to the version that
 * snapshot read: when another write of the variant committed in between, nothing is written
 * (rather than stale old values reported). Undefined when nothing was written, or on SQLite:
 * the caller takes the transaction path. A sku or options another variant holds fails as the
 * unique index says.
 */
export async function patchVariantInOneStatement(
  db: Executor,
  patch: OneStatementVariantPatch,
): Promise<VariantFields | undefined> {
  if (!isPostgres(db)) return undefined
  const { storeId, productId, variantId, changes, options, versions, updatedAt, event } = patch
  const sent = sentPairs(ONE_STATEMENT_COLUMNS, changes)
  const [row] = await patchVariant(
    db,
    storeId,
    productId,
    variantId,
    versions === 'any',
    versions === 'any' ? [] : versions,
    updatedAt,
    options !== undefined,
    options?.text ?? null,
    options?.key ?? null,
    event.type,
    event.id,
    event.createdAt,
    ...sent,
  )
  return row
}

/** The parameters before the columns' (sent, value) pairs, in patchVariantInOneStatement's order. */
const FIXED_PARAMS = 12

const patchVariant = precompiled((db: Executor, ...params: unknown[]) => {
  const [storeId, productId, variantId, anyVersion, versions, updatedAt] = params as [
    string,
    string,
    string,
    boolean,
    number[],
    string,
  ]
  const [optionsSent, optionsText, optionsKeySent, eventType, eventId, eventAt] = params.slice(
    6,
    FIXED_PARAMS,
  )
  const columns = patchedColumns('variants', ONE_STATEMENT_COLUMNS, params, FIXED_PARAMS)
  const optionsDiffer = sql`${optionsSent}::boolean and ${optionsKeySent}::text is distinct from variants.options_key`
  return db
    .with('product', (db) =>
      db
        .selectFrom('products')
        .select(['store_id', 'id'])
        .where('store_id', '=', storeId)
        .where('id', '=', productId)
        .forNoKeyUpdate(),
    )
    .with('old', (db) =>
      db
        .selectFrom('variants as v')
        .select(VARIANT_READ_COLUMNS)
        .where('store_id', '=', storeId)
        .where('id', '=', variantId)
        .where('product_id', '=', productId),
    )
    .with('updated', (db) =>
      db
        .updateTable('variants')
        .from(['product', 'old'])
        .set((eb) => ({
          ...setEntries(columns),
          options: sql`case when ${optionsDiffer} then ${optionsText}::json else variants.options end`,
          options_key: sql`case when ${optionsSent}::boolean then ${optionsKeySent}::text else variants.options_key end`,
          version: eb('variants.version', '+', 1),
          updated_at: movedOn(true, 'variants.updated_at', updatedAt),
        }))
        .whereRef('variants.store_id', '=', 'product.store_id')
        .whereRef('variants.product_id', '=', 'product.id')
        .whereRef('variants.id', '=', 'old.id')
        .whereRef('variants.version', '=', 'old.version')
        .where(
          sql<boolean>`(${anyVersion}::boolean or variants.version = any(${versions}::integer[]))`,
        )
        .where(
          sql<boolean>`((${optionsDiffer}) or ${sql.join(
            columns.map((c) => c.changed),
            sql` or `,
          )})`,
        )
        .returning(VARIANT_READ_COLUMNS.map((column) => `variants.${column}` as const)),
    )
    .with('touched', (db) =>
      db
        .updateTable('products')
        .from('updated')
        .set((eb) => ({
          version: eb('products.version', '+', 1),
          updated_at: movedOn(true, 'products.updated_at', updatedAt),
        }))
        // The product's key as a value, not only as the join's: joined alone, the planner
        // scanned the store's whole range of the primary key for it (every product).
        .where('products.store_id', '=', storeId)
        .where('products.id', '=', productId)
        .whereRef('products.id', '=', 'updated.product_id'),
    )
    .with('event', () =>
      eventInStatement(
        'updated, old',
        storeId,
        { type: eventType, id: eventId, createdAt: eventAt },
        sql`to_json(updated)`,
        sql`to_json(old)`,
      ),
    )
    .selectFrom('updated')
    .selectAll()
})

/**
 * The most option names one product of the store uses (across its variants, each name once),
 * counted in the database: what an export needs before its header, without reading the store.
 */
export async function maxOptionNamesOfAProduct(db: Executor, storeId: string): Promise<number> {
  const keys = isPostgres(db)
    ? sql`variants v cross join lateral json_object_keys(v.options) as k(name)`
    : sql`variants v, json_each(v.options) as k`
  const name = isPostgres(db) ? sql`k.name` : sql`k.key`
  const { rows } = await sql<{ names: number | null }>`
    select max(names) as names from (
      select count(distinct ${name}) as names from ${keys}
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
 * Inserts new variants as given, several at once (an import's new products, whose rows
 * already count them): the unique indexes refuse a sku another variant of the store has.
 */
export async function insertVariantRows(
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
