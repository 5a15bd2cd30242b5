import { isPostgres } from '../db/database.js'
import type { Executor, NewProductRow, ProductRow } from '../db/schema.js'

export async function insertProduct(db: Executor, row: NewProductRow): Promise<void> {
  await db.insertInto('products').values(row).execute()
}

export function findProduct(
  db: Executor,
  storeId: string,
  id: string,
): Promise<ProductRow | undefined> {
  return db
    .selectFrom('products')
    .selectAll()
    .where('store_id', '=', storeId)
    .where('id', '=', id)
    .executeTakeFirst()
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
 * Takes the next number for `slug`: 1 the first time (the slug itself is free), then 2, 3, ...
 * One statement, atomic under concurrency: the counter row serializes its claimants.
 */
export async function nextSlugNumber(db: Executor, storeId: string, slug: string): Promise<number> {
  const row = await db
    .insertInto('slug_counters')
    .values({ store_id: storeId, slug, last_suffix: 1 })
    .onConflict((oc) =>
      oc.columns(['store_id', 'slug']).doUpdateSet((eb) => ({
        last_suffix: eb('slug_counters.last_suffix', '+', 1),
      })),
    )
    .returning('last_suffix')
    .executeTakeFirstOrThrow()
  return row.last_suffix
}

/** Records that `<slug>-N` up to `n` (or the slug itself, for 1) is taken, if not yet known. */
export async function reserveSlugNumber(
  db: Executor,
  storeId: string,
  slug: string,
  n: number,
): Promise<void> {
  await db
    .insertInto('slug_counters')
    .values({ store_id: storeId, slug, last_suffix: n })
    .onConflict((oc) =>
      oc
        .columns(['store_id', 'slug'])
        .doUpdateSet((eb) => ({ last_suffix: eb.ref('excluded.last_suffix') }))
        .where('slug_counters.last_suffix', '<', n),
    )
    .execute()
}
