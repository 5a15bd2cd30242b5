import { sql, type QueryCreator, type SelectQueryBuilder } from 'kysely'
import { isPostgres } from '../db/database.js'
import { patchedColumns, sentPairs, setEntries } from '../db/merge-patch-sql.js'
import { movedOn } from '../db/timestamps.js'
import { precompiled } from '../db/precompiled.js'
import type { DB, Executor, NewProductRow, ProductRow } from '../db/schema.js'
import { insertRows } from '../db/multi-row-insert.js'
import { inList } from '../db/values.js'
import { eventInStatement, eventRow, writeEventRow, type PendingEvent } from '../events/outbox.js'
import { PRODUCT_STATUSES } from './catalog.schemas.js'
import { MAX_CLAIM_ATTEMPTS, productSlugs, reservationOf } from './slug-claims.js'

/** The filters of a product list, each exact; `tag` is a tag key (lowercased). */
export interface ProductFilters {
  status?: string | undefined
  slug?: string | undefined
  vendor?: string | undefined
  productType?: string | undefined
  tag?: string | undefined
}

export interface ProductPageQuery {
  storeId: string
  limit: number
  filters: ProductFilters
  /** The last product of the previous page: this page starts just after it. */
  after?: { createdAt: string; id: string } | undefined
}

const FILTERS = ['status', 'slug', 'vendor', 'productType', 'tag'] as const
type Filter = (typeof FILTERS)[number]

const FILTER_COLUMNS = {
  status: 'status',
  slug: 'slug',
  vendor: 'vendor',
  productType: 'product_type',
} as const

/**
 * Newest first, by (created_at, id) descending: index range scans bounded by the page's size
 * whatever the store's size, for each filter and for each with a status (status and slug
 * have an index on the products; vendor and product type one with the status after them; a
 * tag, the rows of product_tags, which keep their product's status). Tag, vendor and product
 * type together are served by one of them, the others checked on the rows it yields.
 */
export function listProductRows(db: Executor, query: ProductPageQuery): Promise<ProductRow[]> {
  const { storeId, limit, filters, after } = query
  const present = FILTERS.filter((name) => filters[name] !== undefined)
  const page = pageStatement(present, after !== undefined)
  const values = present.map((name) => filters[name]!)
  const position = after ? [after.createdAt, after.id] : []
  return page(db, storeId, ...values, ...position, limit)
}

type PageStatement = (db: Executor, ...params: (string | number)[]) => Promise<ProductRow[]>

/** One compiled statement per combination of filters and cursor: 64 at most. */
const pageStatements = new Map<string, PageStatement>()

function pageStatement(filters: Filter[], withCursor: boolean): PageStatement {
  const shape = `${filters.join(',')}${withCursor ? '|after' : ''}`
  let statement = pageStatements.get(shape)
  if (statement === undefined) {
    statement = precompiled((db: Executor, ...params: (string | number)[]) =>
      pageQuery(db, filters, withCursor, params),
    )
    pageStatements.set(shape, statement)
  }
  return statement
}

/** The page's query; `params` are the store, the filters' values, the cursor's, the limit. */
function pageQuery(
  db: Executor,
  filters: Filter[],
  withCursor: boolean,
  params: (string | number)[],
) {
  const [storeId, ...rest] = params as [string, ...(string | number)[]]
  const valueOf = (filter: Filter) => rest[filters.indexOf(filter)] as string
  const [createdAt, id] = rest.slice(filters.length, filters.length + 2) as [string, string]
  const limit = rest.at(-1) as number
  const newestFirst = <Q extends SelectQueryBuilder<DB, any, any>>(
    query: Q,
    [created, key]: [string, string],
  ) =>
    (withCursor
      ? query.where((eb) =>
          eb(eb.refTuple(created as any, key as any), '<', eb.tuple(createdAt, id)),
        )
      : query
    )
      .orderBy(created as any, 'desc')
      .orderBy(key as any, 'desc')
      .limit(limit) as Q
  /**
   * A tag, vendor or product type is served by an index on (that, status, created_at, id):
   * with a status, one range of it; without, the newest `limit` of each status (named as a
   * literal), merged.
   */
  const byStatus = <R>(
    arm: (status: unknown) => SelectQueryBuilder<DB, any, R>,
    key: 'id' | 'product_id',
  ): SelectQueryBuilder<DB, any, R> => {
    if (filters.includes('status')) return arm(valueOf('status'))
    const [first, ...others] = PRODUCT_STATUSES.map((status) =>
      db.selectFrom(arm(sql.lit(status)).as(`of_${status}`)).selectAll(),
    )
    const union = others.reduce((union, next) => union.unionAll(next), first!)
    return union
      .orderBy('created_at' as any, 'desc')
      .orderBy(key as any, 'desc')
      .limit(limit) as unknown as SelectQueryBuilder<DB, any, R>
  }
  const otherFilters = filters.filter((filter) => filter !== 'tag' && filter !== 'status')
  /** The tag's rows of one status (its index's range), before what is read of them. */
  const tagRows = (status: unknown) =>
    db
      .selectFrom('product_tags as t')
      .where('t.store_id', '=', storeId)
      .where('t.tag_key', '=', valueOf('tag'))
      .where('t.status', '=', status as string)
  if (filters.includes('tag') && otherFilters.length === 0) {
    // The page is chosen from the tag's index alone, then its products are read by key.
    // PostgreSQL plans this once per connection (a generic plan); three arms that each joined
    // the products were planned anew for every request (about 1 ms, more than they ran).
    const page = byStatus(
      (status) =>
        newestFirst(tagRows(status).select(['t.created_at', 't.product_id']), [
          't.created_at',
          't.product_id',
        ]),
      'product_id',
    )
    return db
      .selectFrom(page.as('page'))
      .innerJoin('products as p', (join) =>
        join.on('p.store_id', '=', storeId).onRef('p.id', '=', 'page.product_id'),
      )
      .selectAll('p')
      .orderBy('page.created_at', 'desc')
      .orderBy('page.product_id', 'desc')
  }
  if (filters.includes('tag') && !filters.includes('slug')) {
    // With a vendor or type too, they are checked before the page's limit: joined in each arm.
    return byStatus(
      (status) =>
        newestFirst(
          otherFilters.reduce(
            (query, filter) => query.where(`p.${FILTER_COLUMNS[filter]}`, '=', valueOf(filter)),
            tagRows(status)
              .innerJoin('products as p', (join) =>
                join.onRef('p.store_id', '=', 't.store_id').onRef('p.id', '=', 't.product_id'),
              )
              .selectAll('p'),
          ),
          ['t.created_at', 't.product_id'],
        ),
      'id',
    )
  }
  const products = (status?: unknown) => {
    let query = db.selectFrom('products').selectAll().where('store_id', '=', storeId)
    for (const filter of filters) {
      if (filter === 'tag') {
        query = query.where(({ exists, selectFrom }) =>
          exists(
            selectFrom('product_tags as t')
              .select('t.product_id')
              .whereRef('t.store_id', '=', 'products.store_id')
              .whereRef('t.product_id', '=', 'products.id')
              .where('t.tag_key', '=', valueOf('tag')),
          ),
        )
      } else if (filter !== 'status' || status === undefined) {
        query = query.where(FILTER_COLUMNS[filter], '=', valueOf(filter))
      }
    }
    if (status !== undefined) query = query.where('status', '=', status as string)
    return newestFirst(query, ['created_at', 'id'])
  }
  if (
    !filters.includes('slug') &&
    (filters.includes('vendor') || filters.includes('productType'))
  ) {
    return byStatus(products, 'id')
  }
  return products()
}

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
  const values = rowValues(row)
  for (let attempt = 0; attempt < MAX_CLAIM_ATTEMPTS; attempt++) {
    if (isPostgres(db)) {
      const statement = row.tag_keys === '[]' ? insertUntagged : insertTagged
      const [inserted] = await statement(
        db,
        ...values,
        row.tag_keys,
        base,
        ...reservationOf(base),
        event.type,
        event.id,
        event.createdAt,
      )
      if (inserted) return inserted.slug
      continue
    }
    const storeId = row.store_id
    const slug = await productSlugs.claimGenerated(db, storeId, base)
    if (slug === undefined) continue
    await insertProductRow(db, ...values, slug)
    await insertTags(db, storeId, row.id, row.created_at, row.status, row.tag_keys)
    const object = { ...productColumns(values), slug, max_variant_position: 0, version: 1 }
    await writeEventRow(db, eventRow(storeId, event, object))
    return slug
  }
  throw new Error(`no free slug for ${base} after ${MAX_CLAIM_ATTEMPTS} claims`)
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
]

const ROW_VALUE_COUNT = 16

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
  const [createdAt, updatedAt] = values.slice(14, 16) as [string, string]
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
          true,
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
  postgres: boolean,
  storeId: string,
  productId: string,
  createdAt: string,
  status: string,
  tagKeys: string,
  /** A CTE of the same statement: the tags are written only when it has a row. */
  onlyWith?: 'picked',
) {
  const keys = postgres
    ? sql<{ value: string }>`json_array_elements_text(${tagKeys}::json)`
    : sql<{ value: string }>`json_each(${tagKeys})`
  return db
    .insertInto('product_tags')
    .columns(['store_id', 'product_id', 'tag_key', 'status', 'created_at'])
    .expression((eb) =>
      eb
        .selectFrom(keys.as('k'))
        .select([
          eb.cast<string>(eb.val(storeId), 'text').as('store_id'),
          (postgres
            ? eb.cast<string>(eb.val(productId), 'uuid')
            : eb.cast<string>(eb.val(productId), 'text')
          ).as('product_id'),
          sql<string>`k.value`.as('tag_key'),
          eb.cast<string>(eb.val(status), 'text').as('status'),
          (postgres
            ? eb.cast<string>(eb.val(createdAt), 'timestamptz')
            : eb.cast<string>(eb.val(createdAt), 'text')
          ).as('created_at'),
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
  ) => tagInsert(db, isPostgres(db), storeId, productId, createdAt, status, tagKeys),
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
  return isPostgres(db) ? query.forUpdate() : query
})

/** The columns a PATCH may change, in the order updateProductRow takes them. */
export type ProductChanges = [
  name: string,
  slug: string,
  status: string,
  ...FieldValues,
  updatedAt: string,
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
    const [, , , , , , , , taxRate, vendor, productType, tags, images, updatedAt] = changes
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
        updated_at: movedOn(isPostgres(db), 'products.updated_at', updatedAt),
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
      updated_at: movedOn(isPostgres(db), 'products.updated_at', updatedAt),
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

/**
 * The product columns a PATCH can change in one statement, with their PostgreSQL types. A
 * PATCH of the slug or the tags has more to write (slug counters, product_tags) and takes the
 * transaction path.
 */
const ONE_STATEMENT_COLUMNS = {
  name: 'text',
  description: 'text',
  status: 'text',
  price_e4: 'bigint',
  compare_at_price_e4: 'bigint',
  sku: 'text',
  barcode: 'text',
  tax_rate: 'double precision',
  vendor: 'text',
  product_type: 'text',
  images: 'json',
} as const

/** The values a PATCH sends for those columns; a column left out is not sent. */
export type OneStatementChanges = Partial<
  Record<keyof typeof ONE_STATEMENT_COLUMNS, string | number | null>
>

export interface OneStatementPatch {
  storeId: string
  id: string
  changes: OneStatementChanges
  /** The versions If-Match allows, or 'any'. */
  versions: 'any' | number[]
  /** The statuses a product may not leave for the status sent (the transition rule). */
  statusesBarred: string[]
  updatedAt: string
  /** The event the service decided, appended by the same statement. */
  event: PendingEvent
}

/**
 * A product's PATCH as one statement on PostgreSQL, as a create is: the columns sent are set,
 * the version raised, and only if the version is one If-Match allows, the status may change
 * to the one sent, and a value sent differs from the stored one. The same statement appends
 * the product.updated event, with the row before (read by the statement's snapshot) and the
 * row after; the update applies only to the version that snapshot read, so when another
 * write commits in between, this one writes nothing rather than report stale old values.
 * The row it answers is the product after the change; undefined when nothing was written (no
 * such product, another version, a barred transition, no change, a write in between, or
 * SQLite, where the group commit runs the transaction path at no round-trip cost): the
 * caller then takes the transaction path, which finds out which and answers it.
 */
export async function patchProductInOneStatement(
  db: Executor,
  patch: OneStatementPatch,
): Promise<ProductRow | undefined> {
  if (!isPostgres(db)) return undefined
  const { storeId, id, changes, versions, statusesBarred, updatedAt, event } = patch
  const sent = sentPairs(ONE_STATEMENT_COLUMNS, changes)
  const [row] = await patchProduct(
    db,
    storeId,
    id,
    versions === 'any',
    versions === 'any' ? [] : versions,
    statusesBarred,
    updatedAt,
    event.type,
    event.id,
    event.createdAt,
    ...sent,
  )
  return row
}

/** The parameters before the columns' (sent, value) pairs, in patchProductInOneStatement's order. */
const FIXED_PARAMS = 9

const patchProduct = precompiled((db: Executor, ...params: unknown[]) => {
  const [storeId, id, anyVersion, versions, statusesBarred, updatedAt, type, eventId, eventAt] =
    params as [string, string, boolean, number[], string[], string, string, string, string]
  const columns = patchedColumns('products', ONE_STATEMENT_COLUMNS, params, FIXED_PARAMS)
  const statusSent = params[FIXED_PARAMS + 2 * Object.keys(ONE_STATEMENT_COLUMNS).indexOf('status')]
  return db
    .with('old', (db) =>
      db.selectFrom('products').selectAll().where('store_id', '=', storeId).where('id', '=', id),
    )
    .with('updated', (db) =>
      db
        .updateTable('products')
        .from('old')
        .set((eb) => ({
          ...setEntries(columns),
          version: eb('products.version', '+', 1),
          updated_at: movedOn(true, 'products.updated_at', updatedAt),
        }))
        .whereRef('products.store_id', '=', 'old.store_id')
        .whereRef('products.id', '=', 'old.id')
        .whereRef('products.version', '=', 'old.version')
        .where(
          sql<boolean>`(${anyVersion}::boolean or products.version = any(${versions}::integer[]))`,
        )
        .where(
          sql<boolean>`not (${statusSent}::boolean and products.status = any(${statusesBarred}::text[]))`,
        )
        .where(
          sql<boolean>`(${sql.join(
            columns.map((c) => c.changed),
            sql` or `,
          )})`,
        )
        .returningAll('products'),
    )
    .with('event', () =>
      eventInStatement(
        'updated, old',
        storeId,
        { type, id: eventId, createdAt: eventAt },
        sql`to_json(updated)`,
        sql`to_json(old)`,
      ),
    )
    .selectFrom('updated')
    .selectAll()
})

/** The store's products with these slugs: an import looks up a batch's handles at once. */
export function findProductsBySlugs(
  db: Executor,
  storeId: string,
  slugs: readonly string[],
): Promise<ProductRow[]> {
  if (slugs.length === 0) return Promise.resolve([])
  return db
    .selectFrom('products')
    .selectAll()
    .where('store_id', '=', storeId)
    .where(inList(db, 'slug', 'text', slugs))
    .execute()
}

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
] as const satisfies readonly (keyof ProductRow)[]

/** A product as an import inserts it: its row with its variants already counted, its tag keys. */
export interface ImportedProduct {
  row: ProductRow & { tags: string; images: string; created_at: string; updated_at: string }
  tagKeys: string[]
}

/**
 * Inserts new products whose slugs were set by hand (an import's handles), several at once:
 * the slugs counted as handed out and their suffixes reserved, as claimSlugSetByHand does one
 * by one, then the rows and their tags, a few statements whatever their number. The slugs
 * must differ from each other; the products_slug_key constraint refuses one that another
 * product of the store has (the caller rolls the whole insert back).
 */
export async function insertProductsSetByHand(
  db: Executor,
  storeId: string,
  products: readonly ImportedProduct[],
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

/**
 * A page of a store's products, oldest first, by (created_at, id): an export reads the
 * whole store this way, and an import of the file creates them in the same order again.
 */
export function listProductsOldestFirst(
  db: Executor,
  storeId: string,
  after: { createdAt: string; id: string } | undefined,
  limit: number,
): Promise<ProductRow[]> {
  let query = db.selectFrom('products').selectAll().where('store_id', '=', storeId)
  if (after) {
    query = query.where((eb) =>
      eb(eb.refTuple('created_at', 'id'), '>', eb.tuple(after.createdAt, after.id)),
    )
  }
  return query.orderBy('created_at').orderBy('id').limit(limit).execute()
}
