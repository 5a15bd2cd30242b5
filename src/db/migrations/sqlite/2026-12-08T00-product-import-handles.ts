import { sql, type Kysely } from 'kysely'

/**
 * The handles an import made into another slug (too long, accents, emoji), each with the
 * product it created: a second run of the file finds each handle's own product by it, even
 * when two handles made the same slug (decision 0059). Deleted with the product.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table product_import_handles (
      store_id text not null,
      handle text not null,
      product_id text not null,
      primary key (store_id, handle),
      foreign key (store_id, product_id) references products (store_id, id) on delete cascade
    )
  `.execute(db)
  await sql`
    create index product_import_handles_by_product on product_import_handles (store_id, product_id)
  `.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table product_import_handles`.execute(db)
}
