import { sql, type RawBuilder } from 'kysely'
import { dialectOf } from '../../db/dialect.js'
import type { Executor, ProductRow } from '../../db/schema.js'
import type { SortOrder } from './sort-orders.js'

/**
 * A page of a collection's products in its sort order. Each order reads one index of
 * collection_products (migration 2026-11-30T02) from the position the cursor names, so a
 * far page costs what the first does: the leading key bounds the range, ties (same name,
 * same price) break by newest.
 */

/**
 * The sort index a collection's member rows sit in, by its sort order: each sort index is
 * partial on `sorted_by` (migration 2026-11-30T06, decision 0055), so a member is written to
 * one of them, not to all. The manual order reads the position index, which holds every row
 * that has a position (the members of manual collections, whatever their sort order).
 */
export function sortedBy(sort: SortOrder): string {
  if (sort === 'manual') return 'position'
  return sort === 'newest' || sort === 'oldest' ? 'created' : sort
}

/** Where a page ended: the sort key of its last member (position, name, price or null), time, id. */
export interface MemberPosition {
  key: number | string | null
  createdAt: string
  id: string
}

export type MemberPageRow = ProductRow & {
  cp_position: number | null
  cp_name_key: string
  cp_price_e4: number | string
  cp_created_at: Date | string
}

export async function listMemberRows(
  db: Executor,
  query: {
    storeId: string
    collectionId: string
    sort: SortOrder
    status?: string | undefined
    after?: MemberPosition | undefined
    limit: number
  },
): Promise<MemberPageRow[]> {
  const dialect = dialectOf(db)
  const { after, sort } = query
  const time = (value: string) => dialect.cast(value, 'timestamptz')
  const id = (value: string) => dialect.cast(value, 'uuid')
  let bound: RawBuilder<boolean> | undefined
  let order: string
  if (sort === 'manual') {
    order = 'cp.position, cp.product_id'
    if (after) bound = sql<boolean>`(cp.position, cp.product_id) > (${after.key}, ${id(after.id)})`
  } else if (sort === 'newest' || sort === 'oldest') {
    const newest = sort === 'newest'
    order = newest ? 'cp.created_at desc, cp.product_id desc' : 'cp.created_at, cp.product_id'
    if (after) {
      bound = sql<boolean>`(cp.created_at, cp.product_id) ${sql.raw(newest ? '<' : '>')}
        (${time(after.createdAt)}, ${id(after.id)})`
    }
  } else {
    const column = sort.endsWith('name') ? 'cp.name_key' : 'cp.price_e4'
    const descending = sort.startsWith('-')
    order = `${column}${descending ? ' desc' : ''}, cp.created_at desc, cp.product_id desc`
    if (after) {
      const [reach, beyond] = descending ? ['<=', '<'] : ['>=', '>']
      bound = sql<boolean>`${sql.raw(column)} ${sql.raw(reach)} ${after.key}
        and (${sql.raw(column)} ${sql.raw(beyond)} ${after.key}
          or (cp.created_at, cp.product_id) < (${time(after.createdAt)}, ${id(after.id)}))`
    }
  }
  // A literal, not a parameter: the planners use a partial index only for a condition they
  // can match against its own when the statement is planned.
  const inIndex =
    sort === 'manual'
      ? sql`cp.position is not null`
      : sql`cp.sorted_by = ${sql.lit(sortedBy(sort))}`
  const result = await sql<MemberPageRow>`
    select p.*, cp.position as cp_position, cp.name_key as cp_name_key,
      cp.price_e4 as cp_price_e4, cp.created_at as cp_created_at
    from collection_products cp
    join products p on p.store_id = cp.store_id and p.id = cp.product_id
    where cp.store_id = ${query.storeId} and cp.collection_id = ${id(query.collectionId)}
      and ${inIndex}
      ${query.status === undefined ? sql`` : sql`and cp.status = ${query.status}`}
      ${bound === undefined ? sql`` : sql`and ${bound}`}
    order by ${sql.raw(order)}
    limit ${query.limit}`.execute(db)
  return result.rows
}
