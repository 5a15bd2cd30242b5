import { sql, type Kysely } from 'kysely'

/**
 * collection_products loses its foreign keys on PostgreSQL (decision 0056): their checks ran
 * once per inserted member (a share lock on the product's and the collection's rows each),
 * about half of what the insert of a large smart collection's members cost. A product delete
 * removes its memberships itself (leaveEveryCollection, after locking the product's row), a
 * collection delete its members (after locking the collection's row), and every insert of a
 * member holds its product and its collection against a delete (the store's rules lock, or the
 * manual add's locks). SQLite keeps its keys: their checks cost nothing measurable there.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    alter table collection_products
      drop constraint collection_products_store_id_product_id_fkey,
      drop constraint collection_products_store_id_collection_id_fkey
  `.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`
    alter table collection_products
      add constraint collection_products_store_id_collection_id_fkey
        foreign key (store_id, collection_id) references collections (store_id, id)
          on delete cascade,
      add constraint collection_products_store_id_product_id_fkey
        foreign key (store_id, product_id) references products (store_id, id) on delete cascade
  `.execute(db)
}
