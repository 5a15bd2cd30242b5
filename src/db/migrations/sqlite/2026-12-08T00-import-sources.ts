import { sql, type Kysely } from 'kysely'

/**
 * Where an import came from (`http`: POST /imports; `cli`: catalog import, recorded since
 * issue 44), the duplicate-skus choice it ran with, and the counts its summary gives besides
 * the first ones: products skipped, of them those skipped for a sku another product keeps
 * (with their rows), and every error found (`errors` keeps the first 1,000). Older imports
 * were all HTTP jobs run with the default choice; their error count is what they kept.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table imports add column source text not null default 'http'`.execute(db)
  await sql`alter table imports add column duplicate_skus text not null default 'fail'`.execute(db)
  for (const column of [
    'products_failed',
    'duplicate_sku_products',
    'duplicate_sku_rows',
    'error_count',
  ]) {
    await sql`alter table imports add column ${sql.ref(column)} integer not null default 0`.execute(
      db,
    )
  }
  await sql`update imports set error_count = json_array_length(errors)`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const column of [
    'error_count',
    'duplicate_sku_rows',
    'duplicate_sku_products',
    'products_failed',
    'duplicate_skus',
    'source',
  ]) {
    await sql`alter table imports drop column ${sql.ref(column)}`.execute(db)
  }
}
