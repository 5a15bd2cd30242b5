import { sql, type Kysely } from 'kysely'
import { backfillSearchDocuments } from '../2026-11-30T00-search-backfill.js'

/**
 * Search (docs/decisions/0030-search-documents.md): a document per product of pre-folded
 * words, indexed by a contentless FTS5 table that triggers keep in step by `doc`; the values
 * of tags and options for filters and facets; indexes for the new sorts. The documents of the
 * products already there are built here.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table product_search (
      doc integer primary key,
      store_id text not null,
      product_id text not null,
      name_words text not null,
      other_words text not null,
      name_key text not null,
      codes text not null,
      unique (store_id, product_id)
    )
  `.execute(db)
  await sql`
    create virtual table product_search_fts using fts5(
      name_words, other_words,
      content = '', contentless_delete = 1, tokenize = 'unicode61', prefix = '1 2 3'
    )
  `.execute(db)
  await sql`
    create trigger product_search_added after insert on product_search begin
      insert into product_search_fts (rowid, name_words, other_words)
      values (new.doc, new.name_words, new.other_words);
    end
  `.execute(db)
  await sql`
    create trigger product_search_changed after update of name_words, other_words on product_search
    begin
      delete from product_search_fts where rowid = old.doc;
      insert into product_search_fts (rowid, name_words, other_words)
      values (new.doc, new.name_words, new.other_words);
    end
  `.execute(db)
  await sql`
    create trigger product_search_removed after delete on product_search begin
      delete from product_search_fts where rowid = old.doc;
    end
  `.execute(db)
  await sql`
    create table search_facets (
      store_id text not null,
      product_id text not null,
      kind text not null,
      name_key text not null,
      value_key text not null,
      value text not null,
      primary key (store_id, kind, name_key, value_key, product_id)
    )
  `.execute(db)
  await sql`create index search_facets_by_product on search_facets (store_id, product_id)`.execute(
    db,
  )
  await createSortIndexes(db)
  await backfillSearchDocuments(db, '')
}

async function createSortIndexes(db: Kysely<any>): Promise<void> {
  await sql`
    create index products_by_price on products (store_id, price_e4, created_at desc, id desc)
  `.execute(db)
  await sql`
    create index products_by_updated on products (store_id, updated_at desc, created_at desc, id desc)
  `.execute(db)
  await sql`create index products_oldest on products (store_id, created_at, id desc)`.execute(db)
  await sql`create index product_search_by_name on product_search (store_id, name_key)`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index products_by_price`.execute(db)
  await sql`drop index products_by_updated`.execute(db)
  await sql`drop index products_oldest`.execute(db)
  await sql`drop table search_facets`.execute(db)
  await sql`drop table product_search`.execute(db)
  await sql`drop table product_search_fts`.execute(db)
}
