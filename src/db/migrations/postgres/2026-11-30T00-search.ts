import { sql, type Kysely } from 'kysely'
import { backfillSearchDocuments } from '../2026-11-30T00-search-backfill.js'

/**
 * Search (docs/decisions/0030-search-documents.md): a document per product of pre-folded
 * words, from which PostgreSQL derives a tsvector (config `simple`: the words are already
 * folded; the name's weighted A) with a GIN index; the values of tags and options for
 * filters and facets; indexes for the new sorts. The documents of the products already there
 * are built here.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table product_search (
      store_id text not null,
      product_id uuid not null,
      name_words text not null,
      other_words text not null,
      name_key text not null,
      codes text not null,
      document tsvector generated always as (
        setweight(to_tsvector('simple'::regconfig, name_words), 'A')
        || to_tsvector('simple'::regconfig, other_words)
      ) stored,
      primary key (store_id, product_id),
      foreign key (store_id, product_id) references products (store_id, id) on delete cascade
    )
  `.execute(db)
  await sql`
    create table search_facets (
      store_id text not null,
      product_id uuid not null,
      kind text not null,
      name_key text not null,
      value_key text not null,
      value text not null,
      primary key (store_id, kind, name_key, value_key, product_id),
      foreign key (store_id, product_id) references products (store_id, id) on delete cascade
    )
  `.execute(db)
  await sql`create index search_facets_by_product on search_facets (store_id, product_id)`.execute(
    db,
  )
  await sql`
    create index products_by_price on products (store_id, price_e4, created_at desc, id desc)
  `.execute(db)
  await sql`
    create index products_by_updated on products (store_id, updated_at desc, created_at desc, id desc)
  `.execute(db)
  await sql`create index products_oldest on products (store_id, created_at, id desc)`.execute(db)
  await sql`
    create index product_search_by_name on product_search (store_id, name_key collate "C")
  `.execute(db)
  await backfillSearchDocuments(db, '::uuid')
  // Built after the documents: one pass over them instead of an update per insert.
  await sql`create index product_search_words on product_search using gin (document)`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table search_facets`.execute(db)
  await sql`drop table product_search`.execute(db)
  await sql`drop index products_by_price`.execute(db)
  await sql`drop index products_by_updated`.execute(db)
  await sql`drop index products_oldest`.execute(db)
}
