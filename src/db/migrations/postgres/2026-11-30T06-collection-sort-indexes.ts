import { sql, type Kysely } from 'kysely'

/**
 * A member row names the one sort index it sits in (`sorted_by`: its collection's sort order,
 * newest and oldest sharing one), and each sort index of collection_products is partial on it:
 * a member is written to the primary key, the by-product index and one sort index (the manual
 * position index holds the rows that have a position), not to all six. A collection's change
 * of sort order moves its rows (decision 0055).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    alter table collection_products add column sorted_by text not null default 'created'
  `.execute(db)
  await sql`
    update collection_products set sorted_by = (
      select case c.sort_order when 'manual' then 'position'
        when 'newest' then 'created' when 'oldest' then 'created' else c.sort_order end
      from collections c
      where c.store_id = collection_products.store_id and c.id = collection_products.collection_id)
  `.execute(db)
  for (const [name] of SORT_INDEXES) await sql`drop index ${sql.id(name)}`.execute(db)
  for (const [name, columns, where] of SORT_INDEXES) {
    await sql`create index ${sql.id(name)}
      on collection_products (store_id, collection_id, ${sql.raw(columns)})
      where ${sql.raw(where)}`.execute(db)
  }
}

const SORT_INDEXES = [
  ['collection_products_manual', 'position', 'position is not null'],
  ['collection_products_newest', 'created_at, product_id', "sorted_by = 'created'"],
  ['collection_products_name', 'name_key, created_at desc, product_id desc', "sorted_by = 'name'"],
  [
    'collection_products_name_desc',
    'name_key desc, created_at desc, product_id desc',
    "sorted_by = '-name'",
  ],
  [
    'collection_products_price',
    'price_e4, created_at desc, product_id desc',
    "sorted_by = 'price'",
  ],
  [
    'collection_products_price_desc',
    'price_e4 desc, created_at desc, product_id desc',
    "sorted_by = '-price'",
  ],
] as const

export async function down(db: Kysely<any>): Promise<void> {
  for (const [name, columns] of SORT_INDEXES) {
    await sql`drop index ${sql.id(name)}`.execute(db)
    await sql`create index ${sql.id(name)}
      on collection_products (store_id, collection_id, ${sql.raw(columns)})`.execute(db)
  }
  await sql`alter table collection_products drop column sorted_by`.execute(db)
}
