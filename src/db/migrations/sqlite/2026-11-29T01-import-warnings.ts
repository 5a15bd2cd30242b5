import { sql, type Kysely } from 'kysely'

/**
 * An import's warnings (a variant imported without its sku, taken by another product, with
 * --duplicate-skus=clear) and how many skus it cleared, kept with its counts and errors.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table imports add column warnings text not null default '[]'`.execute(db)
  await sql`alter table imports add column skus_cleared integer not null default 0`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table imports drop column skus_cleared`.execute(db)
  await sql`alter table imports drop column warnings`.execute(db)
}
