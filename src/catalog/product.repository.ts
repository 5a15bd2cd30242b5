import { sql, type QueryCreator } from 'kysely'
import { isPostgres } from '../db/database.js'
import { precompiled } from '../db/precompiled.js'
import type { DB, Executor, NewProductRow, ProductRow } from '../db/schema.js'
import { splitSuffix, withSuffix } from './slug.js'

export interface ProductPageQuery {
  storeId: string
  limit: number
  status?: string | undefined
  /** The last product of the previous page: this page starts just after it. */
  after?: { createdAt: string; id: string } | undefined
}

/** Newest first, by (created_at, id) descending, one index range scan whatever the page. */
export function listProductRows(db: Executor, query: ProductPageQuery): Promise<ProductRow[]> {
  const { storeId, limit, status, after } = query
  if (after === undefined) {
    return status === undefined
      ? firstPage(db, storeId, limit)
      : firstPageWithStatus(db, storeId, status, limit)
  }
  return status === undefined
    ? nextPage(db, storeId, after.createdAt, after.id, limit)
    : nextPageWithStatus(db, storeId, status, after.createdAt, after.id, limit)
}

function newestFirst(db: Executor, storeId: string, limit: number) {
  return db
    .selectFrom('products')
    .selectAll()
    .where('store_id', '=', storeId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
}

const firstPage = precompiled((db: Executor, storeId: string, limit: number) =>
  newestFirst(db, storeId, limit),
)

const firstPageWithStatus = precompiled(
  (db: Executor, storeId: string, status: string, limit: number) =>
    newestFirst(db, storeId, limit).where('status', '=', status),
)

const nextPage = precompiled(
  (db: Executor, storeId: string, createdAt: string, id: string, limit: number) =>
    newestFirst(db, storeId, limit).where((eb) =>
      eb(eb.refTuple('created_at', 'id'), '<', eb.tuple(createdAt, id)),
    ),
)

const nextPageWithStatus = precompiled(
  (db: Executor, storeId: string, status: string, createdAt: string, id: string, limit: number) =>
    newestFirst(db, storeId, limit)
      .where('status', '=', status)
      .where((eb) => eb(eb.refTuple('created_at', 'id'), '<', eb.tuple(createdAt, id))),
)

/**
 * Inserts a product with the first free slug for `base`: `base` itself, else `base-N` with
 * the next N. Returns the slug. Every slug handed out is counted in slug_counters, so the
 * next suffix is found by one upsert, however many products share the name:
 *
 * 1. `base` is claimed: its first claim gets `base`, each later one the next suffix;
 * 2. a suffixed slug handed out (`t-shirt-2`) is counted as claimed too, so a product
 *    named "T-Shirt 2" later gets `t-shirt-2-2`;
 * 3. a base that looks suffixed (`t-shirt-2`, from "T-Shirt 2") reserves that suffix under
 *    its own base, so a later "T-Shirt" skips `t-shirt-2`.
 *
 * On PostgreSQL this is one statement, atomic without a transaction block. On SQLite the
 * same steps are separate statements and must run inside a transaction (group commit's).
 */
export async function insertProductWithUniqueSlug(
  db: Executor,
  row: Omit<NewProductRow, 'slug'>,
  base: string,
): Promise<string> {
  const reserved = splitSuffix(base)
  const values = rowValues(row)
  if (isPostgres(db)) {
    const [inserted] = reserved
      ? await insertReservingSuffix(db, ...values, base, reserved.base, reserved.n)
      : await insertClaimingSlug(db, ...values, base)
    return inserted!.slug
  }
  const storeId = row.store_id
  if (reserved) await reserveSlugSuffixOnce(db, storeId, reserved.base, reserved.n)
  const [claim] = await claimSlugOnce(db, storeId, base)
  if (claim === undefined) throw new Error('the slug claim returned no row')
  const slug = claim.claims === 1 ? base : withSuffix(base, claim.last_suffix)
  if (claim.claims > 1) await countSuffixedSlugOnce(db, storeId, slug)
  await insertProductRow(db, ...values, slug)
  return slug
}

function rowValues(row: Omit<NewProductRow, 'slug'>): RowValues {
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
    row.created_at,
    row.updated_at,
  ]
}

/** The values of a product row but its slug, in the order of the statements below. */
type RowValues = [
  storeId: string,
  id: string,
  name: string,
  status: string,
  description: string | null,
  priceE4: number,
  compareAtPriceE4: number | null,
  sku: string | null,
  barcode: string | null,
  taxRate: number | null,
  createdAt: string,
  updatedAt: string,
]

/** A product's values and the slug it is to get, or the base of that slug. */
type ProductValues = [...RowValues, slugOrBase: string]

const insertClaimingSlug = precompiled((db: Executor, ...values: ProductValues) =>
  productInsertStatement(db, values),
)

const insertReservingSuffix = precompiled(
  (db: Executor, ...args: [...ProductValues, reservedBase: string, reservedN: number]) =>
    productInsertStatement(db, args.slice(0, 13) as ProductValues, { base: args[13], n: args[14] }),
)

// SQLite's steps of insertProductWithUniqueSlug, each compiled once.
const claimSlugOnce = precompiled((db: Executor, storeId: string, slug: string) =>
  claimSlug(db, storeId, slug),
)

const countSuffixedSlugOnce = precompiled((db: Executor, storeId: string, slug: string) =>
  countSuffixedSlug(db, storeId, slug),
)

const reserveSlugSuffixOnce = precompiled(
  (db: Executor, storeId: string, slug: string, n: number) =>
    reserveSlugSuffix(db, storeId, slug, n),
)

/** The product row as given; the last value is its slug. */
const insertProductRow = precompiled((db: Executor, ...values: ProductValues) =>
  db.insertInto('products').values({ ...productColumns(values), slug: values[12] }),
)

/** A product's columns but its slug, named. */
function productColumns(values: RowValues | ProductValues) {
  const [storeId, id, name, status, description, priceE4, compareAtPriceE4, sku, barcode] = values
  const [, , , , , , , , , taxRate, createdAt, updatedAt] = values
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
    created_at: createdAt,
    updated_at: updatedAt,
  }
}

/** The PostgreSQL statement of insertProductWithUniqueSlug: CTEs for the counters, then the insert. */
function productInsertStatement(
  db: Executor,
  values: ProductValues,
  reserved?: { base: string; n: number },
) {
  const [storeId] = values
  const base = values[12]
  const counted = db
    .with('claim', (db) => claimSlug(db, storeId, base))
    .with('counted', (db) =>
      db
        .insertInto('slug_counters')
        .columns(['store_id', 'slug', 'claims', 'last_suffix'])
        .expression((eb) =>
          eb
            .selectFrom('claim')
            .select([
              eb.val(storeId).as('store_id'),
              sql<string>`${base} || '-' || claim.last_suffix`.as('slug'),
              eb.lit(1).as('claims'),
              eb.lit(1).as('last_suffix'),
            ])
            .where('claim.claims', '>', 1),
        )
        .onConflict((oc) =>
          oc.columns(['store_id', 'slug']).doUpdateSet((eb) => ({
            claims: eb('slug_counters.claims', '+', 1),
          })),
        ),
    )
  // An unreferenced data-modifying CTE still runs, exactly once.
  const query = reserved
    ? (counted.with('reserved', (db) =>
        reserveSlugSuffix(db as unknown as QueryCreator<DB>, storeId, reserved.base, reserved.n),
      ) as unknown as typeof counted)
    : counted
  return query
    .insertInto('products')
    .values((eb) => ({
      ...productColumns(values),
      slug: eb
        .selectFrom('claim')
        .select(
          sql<string>`case when claim.claims = 1 then ${base} else ${base} || '-' || claim.last_suffix end`.as(
            'slug',
          ),
        ),
    }))
    .returning('slug')
}

/** Claims `slug` for one more product; its first claim returns claims = 1. */
function claimSlug(db: QueryCreator<DB>, storeId: string, slug: string) {
  return db
    .insertInto('slug_counters')
    .values({ store_id: storeId, slug, claims: 1, last_suffix: 1 })
    .onConflict((oc) =>
      oc.columns(['store_id', 'slug']).doUpdateSet((eb) => ({
        claims: eb('slug_counters.claims', '+', 1),
        last_suffix: eb
          .case()
          .when('slug_counters.claims', '>', 0)
          .then(eb('slug_counters.last_suffix', '+', 1))
          .else(eb.ref('slug_counters.last_suffix'))
          .end(),
      })),
    )
    .returning(['claims', 'last_suffix'])
}

/** Counts a suffixed slug just handed out as claimed, like a slug of its own. */
function countSuffixedSlug(db: QueryCreator<DB>, storeId: string, slug: string) {
  return db
    .insertInto('slug_counters')
    .values({ store_id: storeId, slug, claims: 1, last_suffix: 1 })
    .onConflict((oc) =>
      oc.columns(['store_id', 'slug']).doUpdateSet((eb) => ({
        claims: eb('slug_counters.claims', '+', 1),
      })),
    )
}

/** Records that `<slug>-n` is taken, so that suffixes handed out for `slug` skip it. */
function reserveSlugSuffix(db: QueryCreator<DB>, storeId: string, slug: string, n: number) {
  return db
    .insertInto('slug_counters')
    .values({ store_id: storeId, slug, claims: 0, last_suffix: n })
    .onConflict((oc) =>
      oc
        .columns(['store_id', 'slug'])
        .doUpdateSet((eb) => ({ last_suffix: eb.ref('excluded.last_suffix') }))
        .where('slug_counters.last_suffix', '<', n),
    )
}
