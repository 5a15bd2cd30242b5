import { sql, type SelectQueryBuilder } from 'kysely'
import { statement } from '../db/statements.js'
import type { DB, Executor, ProductRow } from '../db/schema.js'
import { inList } from '../db/values.js'
import { PRODUCT_STATUSES } from './catalog.schemas.js'

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
  let page = pageStatements.get(shape)
  if (page === undefined) {
    page = statement((db: Executor, ...params: (string | number)[]) =>
      pageQuery(db, filters, withCursor, params),
    )
    pageStatements.set(shape, page)
  }
  return page
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
