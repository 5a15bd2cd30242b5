import { sql, type QueryCreator } from 'kysely'
import { dialectOf, POSTGRES, type Dialect, type SqlDialect } from '../db/dialect.js'
import { precompiled } from '../db/precompiled.js'
import type { DB, Executor, NewProductRow, ProductRow } from '../db/schema.js'
import { eventInStatement, eventRow, writeEventRow, type PendingEvent } from '../events/outbox.js'
import { MAX_CLAIM_ATTEMPTS, productSlugs, reservationOf } from './slug-claims.js'

// The list queries, the one-statement PATCH and the bulk insert live in their own files;
// callers that import them from here (the import, the export) go on working.
export * from './product-list.repository.js'
export * from './product-patch.repository.js'
export * from './product-bulk.repository.js'

/** A product row as the service makes it at creation, with the tag keys of its tags. */
export type NewProduct = Omit<NewProductRow, 'slug' | 'max_variant_position' | 'version'> & {
  /** JSON array of the lowercased tags: the rows of product_tags. */
  tag_keys: string
}

/**
 * Inserts a product with the first free slug for `base` (slug-claims.ts: `base` itself, else
 * `base-N` with the next N) and returns the slug, with the product.created event appended
 * (`event` gives its id and time).
 *
 * On PostgreSQL this is one statement, atomic without a transaction block (its tags and its
 * event too). On SQLite the same steps are separate statements and must run inside a
 * transaction (group commit's). Either is tried again when a concurrent write took the slug
 * it generated (rare: a name that reserves that very suffix, committed meanwhile).
 */
export async function insertProductWithUniqueSlug(
  db: Executor,
  row: NewProduct,
  base: string,
  event: PendingEvent,
): Promise<string> {
  const tryInsert = INSERT_CLAIMING_A_SLUG[dialectOf(db).name]
  for (let attempt = 0; attempt < MAX_CLAIM_ATTEMPTS; attempt++) {
    const slug = await tryInsert(db, row, base, event)
    if (slug !== undefined) return slug
  }
  throw new Error(`no free slug for ${base} after ${MAX_CLAIM_ATTEMPTS} claims`)
}

/** One try of insertProductWithUniqueSlug: the slug, or undefined when the claim picked none. */
type InsertClaimingASlug = (
  db: Executor,
  row: NewProduct,
  base: string,
  event: PendingEvent,
) => Promise<string | undefined>

const INSERT_CLAIMING_A_SLUG: Record<Dialect, InsertClaimingASlug> = {
  async postgres(db, row, base, event) {
    const statement = row.tag_keys === '[]' ? insertUntagged : insertTagged
    const [inserted] = await statement(
      db,
      ...rowValues(row),
      row.tag_keys,
      base,
      ...reservationOf(base),
      event.type,
      event.id,
      event.createdAt,
    )
    return inserted?.slug
  },
  async sqlite(db, row, base, event) {
    const storeId = row.store_id
    const slug = await productSlugs.claimGenerated(db, storeId, base)
    if (slug === undefined) return undefined
    const values = rowValues(row)
    await insertProductRow(db, ...values, slug)
    await insertTags(db, storeId, row.id, row.created_at, row.status, row.tag_keys)
    const object = { ...productColumns(values), slug, max_variant_position: 0, version: 1 }
    await writeEventRow(db, eventRow(storeId, event, object))
    return slug
  },
}

/**
 * Inserts a product with a slug set by hand (an import's handle), counted as handed out
 * like a slug set by PATCH (the products_slug_key constraint refuses one another product
 * of the store has). Several statements: run it inside a transaction.
 */
export async function insertProductWithSlugSetByHand(
  db: Executor,
  row: NewProduct,
  slug: string,
): Promise<string> {
  await productSlugs.claimSetByHand(db, row.store_id, slug)
  await insertProductRow(db, ...rowValues(row), slug)
  await insertTags(db, row.store_id, row.id, row.created_at, row.status, row.tag_keys)
  return slug
}

function rowValues(row: NewProduct): RowValues {
  return [
    row.store_id,
    row.id,
    row.name,
    row.status,
    row.description ?? null,
    row.price_e4,
    row.compare_at_price_e4 ?? null,
    row.sku ?? null,
    row.barcode ?? null,
    row.tax_rate ?? null,
    row.vendor ?? null,
    row.product_type ?? null,
    row.tags,
    row.images,
    row.created_at,
    row.updated_at,
    row.metafields ?? '{}',
  ]
}

/** The values of the product's own fields that both a create and a PATCH write, in order. */
type FieldValues = [
  description: string | null,
  priceE4: number,
  compareAtPriceE4: number | null,
  sku: string | null,
  barcode: string | null,
  taxRate: number | null,
  vendor: string | null,
  productType: string | null,
  tags: string,
  images: string,
]

/** The values of a product row but its slug, in the order of the statements below. */
type RowValues = [
  storeId: string,
  id: string,
  name: string,
  status: string,
  ...FieldValues,
  createdAt: string,
  updatedAt: string,
  metafields: string,
]

const ROW_VALUE_COUNT = 17

/** A product's values, its tag keys and the base of its slug: the PostgreSQL insert's. */
type InsertValues = [...RowValues, tagKeys: string, base: string]

/**
 * The PostgreSQL statements of insertProductWithUniqueSlug, compiled once each: with tags to
 * write, or without (a create without tags spares the tags' CTE).
 */
function insertStatement(tagged: boolean) {
  return precompiled(
    (
      db: Executor,
      ...args: [
        ...InsertValues,
        suffixOf: string | null,
        suffix: number | null,
        eventType: string,
        eventId: string,
        eventCreatedAt: string,
      ]
    ) =>
      productInsertStatement(db, args.slice(0, ROW_VALUE_COUNT + 2) as InsertValues, {
        reserved: [
          args[ROW_VALUE_COUNT + 2] as string | null,
          args[ROW_VALUE_COUNT + 3] as number | null,
        ],
        tagged,
        event: {
          type: args[ROW_VALUE_COUNT + 4],
          id: args[ROW_VALUE_COUNT + 5],
          createdAt: args[ROW_VALUE_COUNT + 6],
        },
      }),
  )
}

const insertUntagged = insertStatement(false)
const insertTagged = insertStatement(true)

/** The product row as given; the last value is its slug. */
const insertProductRow = precompiled((db: Executor, ...values: [...RowValues, slug: string]) =>
  db.insertInto('products').values({ ...productColumns(values), slug: values[ROW_VALUE_COUNT] }),
)

/** A product's columns but its slug, named. */
function productColumns(values: RowValues | InsertValues | [...RowValues, string]) {
  const [storeId, id, name, status, description, priceE4, compareAtPriceE4, sku] = values
  const [, , , , , , , , barcode, taxRate, vendor, productType, tags, images] = values
  const [createdAt, updatedAt, metafields] = values.slice(14, 17) as [string, string, string]
  return {
    store_id: storeId,
    id,
    name,
    status,
    description,
    price_e4: priceE4,
    compare_at_price_e4: compareAtPriceE4,
    sku,
    barcode,
    tax_rate: taxRate,
    vendor,
    product_type: productType,
    tags,
    images,
    created_at: createdAt,
    updated_at: updatedAt,
    metafields,
  }
}

/**
 * The PostgreSQL statement of insertProductWithUniqueSlug: the slug's claim (CTEs of
 * slug-claims.ts), the product's tags, the product and its event, then the slug the product
 * got; nothing when the claim picked no slug (the caller claims again).
 */
function productInsertStatement(
  db: Executor,
  values: InsertValues,
  shape: {
    reserved: [suffixOf: string | null, suffix: number | null]
    tagged: boolean
    event: { type: unknown; id: unknown; createdAt: unknown }
  },
) {
  const { reserved, tagged, event } = shape
  const [storeId, id, , status] = values
  const createdAt = values[14]
  const [tagKeys, base] = values.slice(ROW_VALUE_COUNT) as [string, string]
  const claimed = productSlugs.claimInStatement(db, storeId, base, ...reserved)
  // An unreferenced data-modifying CTE still runs, exactly once. The tags' foreign key is
  // checked at the end of the statement, when the product row below exists; like the
  // product, they are written only when the claim picked a slug.
  const withTags = tagged
    ? (claimed.with('tagged', (qc) =>
        tagInsert(
          qc as unknown as QueryCreator<DB>,
          POSTGRES,
          storeId,
          id,
          createdAt,
          status,
          tagKeys,
          'picked',
        ),
      ) as unknown as typeof claimed)
    : claimed
  const columns = productColumns(values)
  return withTags
    .with('inserted', (db) =>
      db
        .insertInto('products')
        .columns([...(Object.keys(columns) as (keyof typeof columns)[]), 'slug'])
        .expression((eb) =>
          eb
            .selectFrom('picked')
            .select([
              ...Object.entries(columns).map(([column, value]) => eb.val(value).as(column)),
              'picked.slug',
            ]),
        )
        .returningAll(),
    )
    .with('event', () => eventInStatement('inserted', storeId, event, sql`to_json(inserted)`, null))
    .selectFrom('inserted')
    .select('slug')
}

/** Inserts one product_tags row per key of the JSON array `tagKeys`. */
function tagInsert(
  db: QueryCreator<DB>,
  dialect: SqlDialect,
  storeId: string,
  productId: string,
  createdAt: string,
  status: string,
  tagKeys: string,
  /** A CTE of the same statement: the tags are written only when it has a row. */
  onlyWith?: 'picked',
) {
  const keys = dialect.jsonArrayElements(tagKeys)
  return db
    .insertInto('product_tags')
    .columns(['store_id', 'product_id', 'tag_key', 'status', 'created_at'])
    .expression((eb) =>
      eb
        .selectFrom(keys.as('k'))
        .select([
          eb.cast<string>(eb.val(storeId), 'text').as('store_id'),
          dialect.cast<string>(productId, 'uuid').as('product_id'),
          sql<string>`k.value`.as('tag_key'),
          eb.cast<string>(eb.val(status), 'text').as('status'),
          dialect.cast<string>(createdAt, 'timestamptz').as('created_at'),
        ])
        .$if(onlyWith !== undefined, (qb) =>
          qb.where(sql<boolean>`exists (select 1 from ${sql.table(onlyWith!)})`),
        ),
    )
}

const insertTags = precompiled(
  (
    db: Executor,
    storeId: string,
    productId: string,
    createdAt: string,
    status: string,
    tagKeys: string,
  ) => tagInsert(db, dialectOf(db), storeId, productId, createdAt, status, tagKeys),
)

const deleteTags = precompiled((db: Executor, storeId: string, productId: string) =>
  db.deleteFrom('product_tags').where('store_id', '=', storeId).where('product_id', '=', productId),
)

/** Replaces the product_tags rows of a product whose tags changed. */
export async function replaceProductTags(
  db: Executor,
  product: { store_id: string; id: string; created_at: string; status: string },
  tagKeys: string,
): Promise<void> {
  await deleteTags(db, product.store_id, product.id)
  await insertTags(db, product.store_id, product.id, product.created_at, product.status, tagKeys)
}

/**
 * The product, its row locked until the transaction ends on PostgreSQL (SQLite's writes
 * are serialized by its group commit). Undefined when the store has no such product.
 */
export async function findProductForUpdate(
  db: Executor,
  storeId: string,
  id: string,
): Promise<ProductRow | undefined> {
  const [row] = await productForUpdate(db, storeId, id)
  return row
}

const productForUpdate = precompiled((db: Executor, storeId: string, id: string) => {
  const query = db
    .selectFrom('products')
    .selectAll()
    .where('store_id', '=', storeId)
    .where('id', '=', id)
  return dialectOf(db).forUpdate(query)
})

/** The columns a PATCH may change, in the order updateProductRow takes them. */
export type ProductChanges = [
  name: string,
  slug: string,
  status: string,
  ...FieldValues,
  updatedAt: string,
  metafields: string,
]

/** Writes a product's new values and raises its version; returns the row as it now is. */
export async function updateProductRow(
  db: Executor,
  storeId: string,
  id: string,
  changes: ProductChanges,
): Promise<ProductRow> {
  const [row] = await updateProduct(db, storeId, id, ...changes)
  if (row === undefined) throw new Error('the product to update is gone')
  return row
}

const updateProduct = precompiled(
  (db: Executor, storeId: string, id: string, ...changes: ProductChanges) => {
    const [name, slug, status, description, priceE4, compareAtPriceE4, sku, barcode] = changes
    const [, , , , , , , , taxRate, vendor, productType, tags, images, updatedAt, metafields] =
      changes
    return db
      .updateTable('products')
      .set((eb) => ({
        name,
        slug,
        status,
        description,
        price_e4: priceE4,
        compare_at_price_e4: compareAtPriceE4,
        sku,
        barcode,
        tax_rate: taxRate,
        vendor,
        product_type: productType,
        tags,
        images,
        metafields,
        updated_at: dialectOf(db).movedOn('products.updated_at', updatedAt),
        version: eb('version', '+', 1),
      }))
      .where('store_id', '=', storeId)
      .where('id', '=', id)
      .returningAll()
  },
)

/**
 * Records a slug set by hand as handed out, so that generation never gives it again
 * (slug-claims.ts).
 */
export async function claimSlugSetByHand(
  db: Executor,
  storeId: string,
  slug: string,
): Promise<void> {
  await productSlugs.claimSetByHand(db, storeId, slug)
}

/** Deletes a product; its variants and tags go with it (foreign keys, on delete cascade). */
export async function deleteProductRow(db: Executor, storeId: string, id: string): Promise<void> {
  await deleteProduct(db, storeId, id)
}

const deleteProduct = precompiled((db: Executor, storeId: string, id: string) =>
  db.deleteFrom('products').where('store_id', '=', storeId).where('id', '=', id),
)

/**
 * Marks a product changed by a change of one of its variants: its version and updatedAt
 * move, and its highest variant position is taken again from the variants (a variant's
 * position may have moved, or the highest one been deleted). The product's row must be
 * locked already (findProductForUpdate).
 */
export async function touchProductForVariants(
  db: Executor,
  storeId: string,
  id: string,
  updatedAt: string,
): Promise<void> {
  await touchProduct(db, storeId, id, updatedAt)
}

const touchProduct = precompiled((db: Executor, storeId: string, id: string, updatedAt: string) =>
  db
    .updateTable('products')
    .set((eb) => ({
      version: eb('version', '+', 1),
      updated_at: dialectOf(db).movedOn('products.updated_at', updatedAt),
      max_variant_position: eb.fn.coalesce(
        eb
          .selectFrom('variants')
          .select((eb) => eb.fn.max('position').as('position'))
          .where('variants.store_id', '=', storeId)
          .where('variants.product_id', '=', id),
        eb.lit(0),
      ),
    }))
    .where('store_id', '=', storeId)
    .where('id', '=', id),
)
