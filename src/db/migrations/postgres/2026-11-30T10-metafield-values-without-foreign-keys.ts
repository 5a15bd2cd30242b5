import { sql, type Kysely } from 'kysely'

/**
 * The filter index's rows are no longer checked against their product and definition by
 * foreign keys (decision 0040): on PostgreSQL each check is a query of its own per row inserted,
 * which locks the parent row, and was most of what a write's values cost over the same write
 * without them (an import's 20,000 index rows: 773 ms with both keys, 288 without). The rows go
 * by hand with their product (`deleteProductIndexRows`), their definition and their record.
 * SQLite keeps its keys: there a check is an index probe in process.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    alter table metafield_values
      drop constraint metafield_values_store_id_definition_id_fkey,
      drop constraint metafield_values_store_id_product_id_fkey
  `.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`
    alter table metafield_values
      add constraint metafield_values_store_id_definition_id_fkey
        foreign key (store_id, definition_id) references metafield_definitions (store_id, id)
        on delete cascade,
      add constraint metafield_values_store_id_product_id_fkey
        foreign key (store_id, product_id) references products (store_id, id) on delete cascade
  `.execute(db)
}
