import { sql, type Kysely } from 'kysely'

/**
 * A new document's search keys are written with it, from its product's row, by the document
 * writer (src/search/search-document.repository.ts), no longer by a trigger updating the row
 * just inserted (decision 0033). The trigger keeping them in step on every update of a
 * product stays.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`drop trigger product_search_keys_added`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`
    create trigger product_search_keys_added after insert on product_search begin
      update product_search
      set (status, vendor, product_type, price_e4, created_at, updated_at) = (
        select status, vendor, product_type, price_e4, created_at, updated_at from products
        where store_id = new.store_id and id = new.product_id)
      where doc = new.doc;
    end
  `.execute(db)
}
