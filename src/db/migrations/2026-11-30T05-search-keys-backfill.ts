import { sql, type Kysely } from 'kysely'

/**
 * The fields of the products that search sorts and filters on, copied into the search
 * documents already there (the migrations 2026-11-30T05-search-keys of both dialects), a batch
 * of documents at a time so that a large catalogue is never held whole, in memory or in one
 * statement's work. Frozen with those migrations.
 */
export const SEARCH_KEY_COLUMNS = [
  'status',
  'vendor',
  'product_type',
  'price_e4',
  'created_at',
  'updated_at',
] as const

const BATCH = 5000

export async function backfillSearchKeys(db: Kysely<any>, dialect: 'sqlite' | 'postgres') {
  const columns = sql.join(SEARCH_KEY_COLUMNS.map((column) => sql.ref(column)))
  const fromProduct = sql.join(SEARCH_KEY_COLUMNS.map((column) => sql.ref(`p.${column}`)))
  if (dialect === 'sqlite') {
    const { rows } = await sql<{ last: number | null }>`
      select max(doc) as last from product_search`.execute(db)
    const last = rows[0]?.last ?? 0
    for (let from = 0; from < last; from += BATCH) {
      await sql`
        update product_search set (${columns}) = (select ${fromProduct} from products p
          where p.store_id = product_search.store_id and p.id = product_search.product_id)
        where doc > ${from} and doc <= ${from + BATCH}`.execute(db)
    }
    return
  }
  // Statistics first, so that each batch's bound is found by the primary key (see
  // backfillSearchDocuments); a new, empty database is left never analyzed.
  const { rows: any } = await sql`select 1 from product_search limit 1`.execute(db)
  if (any.length > 0) await sql`analyze product_search`.execute(db)
  let after: { store_id: string; product_id: string } | undefined
  for (;;) {
    const { rows } = await sql<{ store_id: string; product_id: string }>`
      select store_id, product_id from product_search
      ${after ? sql`where (store_id, product_id) > (${after.store_id}, ${after.product_id}::uuid)` : sql``}
      order by store_id, product_id offset ${BATCH - 1} limit 1`.execute(db)
    const upTo = rows[0]
    await sql`
      update product_search s set (${columns}) = (${fromProduct})
      from products p
      where p.store_id = s.store_id and p.id = s.product_id
        ${after ? sql`and (s.store_id, s.product_id) > (${after.store_id}, ${after.product_id}::uuid)` : sql``}
        ${upTo ? sql`and (s.store_id, s.product_id) <= (${upTo.store_id}, ${upTo.product_id}::uuid)` : sql``}`.execute(
      db,
    )
    if (!upTo) return
    after = upTo
  }
}
