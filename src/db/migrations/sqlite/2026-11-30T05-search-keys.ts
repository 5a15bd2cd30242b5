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
  for (const column of ['status text', 'vendor text', 'product_type text', 'price_e4 integer']) {
    await sql`alter table product_search add column ${sql.raw(column)}`.execute(db)
  }
  await sql`alter table product_search add column created_at text`.execute(db)
  await sql`alter table product_search add column updated_at text`.execute(db)
  await sql`
    create trigger product_search_keys_added after insert on product_search begin
      update product_search
      set (status, vendor, product_type, price_e4, created_at, updated_at) = (
        select status, vendor, product_type, price_e4, created_at, updated_at from products
        where store_id = new.store_id and id = new.product_id)
      where doc = new.doc;
    end
  `.execute(db)
  await sql`
    create trigger products_search_keys
    after update of status, vendor, product_type, price_e4, created_at, updated_at on products
    begin
      update product_search
      set status = new.status, vendor = new.vendor, product_type = new.product_type,
        price_e4 = new.price_e4, created_at = new.created_at, updated_at = new.updated_at
      where store_id = new.store_id and product_id = new.id;
    end
  `.execute(db)
  await backfillSearchKeys(db, 'sqlite')
  // Partial: a request that does not filter on the column cannot take one for a store_id index.
  // Covering what the facets read, so that a vendor's documents are read from the index alone.
  await sql`
    create index product_search_by_vendor
    on product_search (store_id, vendor, product_id, price_e4, status, product_type)
    where vendor is not null
  `.execute(db)
  await sql`
    create index product_search_by_type
    on product_search (store_id, product_type, product_id, price_e4, status, vendor)
    where product_type is not null
  `.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop trigger products_search_keys`.execute(db)
  await sql`drop trigger product_search_keys_added`.execute(db)
  await sql`drop index product_search_by_vendor`.execute(db)
  await sql`drop index product_search_by_type`.execute(db)
  for (const column of ['status', 'vendor', 'product_type', 'price_e4', 'created_at', 'updated_at'])
    await sql`alter table product_search drop column ${sql.raw(column)}`.execute(db)
}
