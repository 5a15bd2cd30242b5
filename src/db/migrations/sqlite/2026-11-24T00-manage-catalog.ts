import { sql, type Kysely } from 'kysely'

/**
 * Part 2 of the contract: products gain vendor, product type, tags and images, variants a
 * weight, both a version. Every new column has a default that an existing row takes as it
 * is (no tags, no images, version 1), so a database of the previous release upgrades in place.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table products add column vendor text`.execute(db)
  await sql`alter table products add column product_type text`.execute(db)
  await sql`alter table products add column tags text not null default '[]'`.execute(db)
  await sql`alter table products add column images text not null default '[]'`.execute(db)
  await sql`alter table products add column version integer not null default 1`.execute(db)
  await sql`alter table variants add column weight_grams integer`.execute(db)
  await sql`alter table variants add column version integer not null default 1`.execute(db)

  await sql`
    create index products_by_vendor_newest
    on products (store_id, vendor, created_at desc, id desc) where vendor is not null
  `.execute(db)
  await sql`
    create index products_by_type_newest
    on products (store_id, product_type, created_at desc, id desc) where product_type is not null
  `.execute(db)

  await sql`
    create table product_tags (
      store_id text not null,
      product_id text not null,
      tag_key text not null,
      created_at text not null,
      primary key (store_id, product_id, tag_key),
      foreign key (store_id, product_id) references products (store_id, id) on delete cascade
    ) strict, without rowid
  `.execute(db)
  await sql`
    create index product_tags_newest
    on product_tags (store_id, tag_key, created_at desc, product_id desc)
  `.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table product_tags`.execute(db)
  await sql`drop index products_by_type_newest`.execute(db)
  await sql`drop index products_by_vendor_newest`.execute(db)
  for (const column of ['version', 'weight_grams']) {
    await sql`alter table variants drop column ${sql.ref(column)}`.execute(db)
  }
  for (const column of ['version', 'images', 'tags', 'product_type', 'vendor']) {
    await sql`alter table products drop column ${sql.ref(column)}`.execute(db)
  }
}
