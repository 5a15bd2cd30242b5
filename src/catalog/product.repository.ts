import { isPostgres } from '../db/database.js'
import type { Executor, NewProductRow, ProductRow } from '../db/schema.js'

export async function insertProduct(db: Executor, row: NewProductRow): Promise<void> {
  await db.insertInto('products').values(row).execute()
}

/**
 * The product's price, read under a row lock that lasts until the transaction ends, so that
 * variants added to one product at once take turns (distinct default positions). SQLite
 * needs no lock: it runs one write transaction at a time.
 */
export function lockProductForNewVariant(
  db: Executor,
  storeId: string,
  id: string,
): Promise<{ price_e4: number } | undefined> {
  return db
    .selectFrom('products')
    .select('price_e4')
    .where('store_id', '=', storeId)
    .where('id', '=', id)
    .$if(isPostgres(db), (query) => query.forNoKeyUpdate())
    .executeTakeFirst()
}

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
  return db
    .selectFrom('products')
    .selectAll()
    .where('store_id', '=', storeId)
    .$if(status !== undefined, (q) => q.where('status', '=', status!))
    .$if(after !== undefined, (q) =>
      q.where((eb) =>
        eb(eb.refTuple('created_at', 'id'), '<', eb.tuple(after!.createdAt, after!.id)),
      ),
    )
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute()
}

/**
 * Takes `slug` itself for a new product: true when it was free. Atomic under concurrency:
 * the counter row is locked by the first claimant until its transaction ends.
 */
export async function takeSlug(db: Executor, storeId: string, slug: string): Promise<boolean> {
  const row = await db
    .insertInto('slug_counters')
    .values({ store_id: storeId, slug, taken: 1, last_suffix: 1 })
    .onConflict((oc) =>
      oc
        .columns(['store_id', 'slug'])
        .doUpdateSet({ taken: 1 })
        .where('slug_counters.taken', '=', 0),
    )
    .returning('last_suffix')
    .executeTakeFirst()
  return row !== undefined
}

/** Takes the next suffix of a slug already taken: 2, then 3, ... (skipping those reserved). */
export async function takeNextSlugSuffix(
  db: Executor,
  storeId: string,
  slug: string,
): Promise<number> {
  const row = await db
    .updateTable('slug_counters')
    .set((eb) => ({ last_suffix: eb('last_suffix', '+', 1) }))
    .where('store_id', '=', storeId)
    .where('slug', '=', slug)
    .returning('last_suffix')
    .executeTakeFirstOrThrow()
  return row.last_suffix
}

/** Records that `<slug>-n` is taken, so that suffixes handed out for `slug` skip it. */
export async function reserveSlugSuffix(
  db: Executor,
  storeId: string,
  slug: string,
  n: number,
): Promise<void> {
  await db
    .insertInto('slug_counters')
    .values({ store_id: storeId, slug, taken: 0, last_suffix: n })
    .onConflict((oc) =>
      oc
        .columns(['store_id', 'slug'])
        .doUpdateSet((eb) => ({ last_suffix: eb.ref('excluded.last_suffix') }))
        .where('slug_counters.last_suffix', '<', n),
    )
    .execute()
}

/** Records that a suffixed slug handed out (`t-shirt-2`) is taken as a slug of its own. */
export async function markSlugTaken(db: Executor, storeId: string, slug: string): Promise<void> {
  await db
    .insertInto('slug_counters')
    .values({ store_id: storeId, slug, taken: 1, last_suffix: 1 })
    .onConflict((oc) => oc.columns(['store_id', 'slug']).doUpdateSet({ taken: 1 }))
    .execute()
}
