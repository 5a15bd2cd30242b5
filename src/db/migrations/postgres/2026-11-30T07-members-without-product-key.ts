import { sql, type Kysely } from 'kysely'

/**
 * collection_products loses its foreign key to products on PostgreSQL (decision 0056): its
 * check ran once per inserted member (a share lock on the product's row each), about half of
 * what the insert of a large smart collection's members costs. A product delete removes its
 * memberships itself (leaveEveryCollection, after locking the product's row), and every
 * insert of a member holds its product against a delete (the store's rules lock, or the
 * manual add's share lock). SQLite keeps its key: its checks cost nothing measurable there.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    alter table collection_products drop constraint collection_products_store_id_product_id_fkey
  `.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`
    alter table collection_products add constraint collection_products_store_id_product_id_fkey
      foreign key (store_id, product_id) references products (store_id, id) on delete cascade
  `.execute(db)
}
