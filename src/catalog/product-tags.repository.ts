import { sql, type QueryCreator } from 'kysely'
import { dialectOf, type SqlDialect } from '../db/dialect.js'
import { statement } from '../db/statements.js'
import type { DB, Executor } from '../db/schema.js'

// The product_tags rows of a product: one per tag key, which the list's tag filter reads.

/** Inserts one product_tags row per key of the JSON array `tagKeys`. */
export function tagInsert(
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

/** tagInsert as a statement of its own, compiled once. */
export const insertTags = statement(
  (
    db: Executor,
    storeId: string,
    productId: string,
    createdAt: string,
    status: string,
    tagKeys: string,
  ) => tagInsert(db, dialectOf(db), storeId, productId, createdAt, status, tagKeys),
)

const deleteTags = statement((db: Executor, storeId: string, productId: string) =>
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
