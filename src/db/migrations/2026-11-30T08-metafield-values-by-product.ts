import { sql, type Kysely } from 'kysely'

/**
 * The filter index's rows of a definition by product: a metafield facet over a search's
 * matches reads each match's values by one probe, not every value of the definition (at
 * 1,000,000 products, 800,000 rows for one attribute).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create index metafield_values_by_product
    on metafield_values (store_id, definition_id, product_id, value)
  `.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index metafield_values_by_product`.execute(db)
}
