import { sql, type Kysely } from 'kysely'
import { backfillSearchKeys } from '../2026-11-30T05-search-keys-backfill.js'

/**
 * The fields search sorts and filters on, kept in each product's search document
 * (docs/decisions/0033-search-keys-in-document.md), so that a search's matches and facets
 * read product_search alone. The database keeps them in step: a document takes them from its
 * product when written, and every update of a product copies them to its document, in the
 * write's transaction, whichever path wrote it.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    alter table product_search
      add column status text, add column vendor text, add column product_type text,
      add column price_e4 bigint, add column created_at timestamptz, add column updated_at timestamptz
  `.execute(db)
  await sql`
    create function product_search_keys_added() returns trigger language plpgsql as $$
    begin
      select p.status, p.vendor, p.product_type, p.price_e4, p.created_at, p.updated_at
      into new.status, new.vendor, new.product_type, new.price_e4, new.created_at, new.updated_at
      from products p where p.store_id = new.store_id and p.id = new.product_id;
      return new;
    end $$
  `.execute(db)
  await sql`
    create trigger product_search_keys_added before insert on product_search
    for each row execute function product_search_keys_added()
  `.execute(db)
  await sql`
    create function products_search_keys() returns trigger language plpgsql as $$
    begin
      update product_search
      set status = new.status, vendor = new.vendor, product_type = new.product_type,
        price_e4 = new.price_e4, created_at = new.created_at, updated_at = new.updated_at
      where store_id = new.store_id and product_id = new.id;
      return null;
    end $$
  `.execute(db)
  await sql`
    create trigger products_search_keys after update on products for each row
    when (old.status is distinct from new.status or old.vendor is distinct from new.vendor
      or old.product_type is distinct from new.product_type or old.price_e4 <> new.price_e4
      or old.created_at <> new.created_at or old.updated_at <> new.updated_at)
    execute function products_search_keys()
  `.execute(db)
  await backfillSearchKeys(db, 'postgres')
  // Partial: a request that does not filter on the column cannot take one for a store_id index.
  // Covering what the facets read, so that a vendor's documents are read from the index alone.
  await sql`
    create index product_search_by_vendor on product_search (store_id, vendor)
    include (product_id, price_e4, status, product_type) where vendor is not null
  `.execute(db)
  await sql`
    create index product_search_by_type on product_search (store_id, product_type)
    include (product_id, price_e4, status, vendor) where product_type is not null
  `.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop trigger products_search_keys on products`.execute(db)
  await sql`drop trigger product_search_keys_added on product_search`.execute(db)
  await sql`drop function products_search_keys()`.execute(db)
  await sql`drop function product_search_keys_added()`.execute(db)
  await sql`drop index product_search_by_vendor`.execute(db)
  await sql`drop index product_search_by_type`.execute(db)
  await sql`
    alter table product_search drop column status, drop column vendor, drop column product_type,
      drop column price_e4, drop column created_at, drop column updated_at
  `.execute(db)
}
