import { sql, type Kysely } from 'kysely'

/**
 * A stamp per store, a random token renewed by every change of its metafield definitions
 * (create, patch, delete), so that a product write can tell with one indexed read whether the
 * definitions a process holds in memory under that token are still the store's (a token, not
 * a counter: one process may serve several databases, as tests do). Stores that already have
 * definitions get theirs.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table metafield_definition_stamps (
      store_id text primary key,
      token text not null
    ) strict, without rowid
  `.execute(db)
  await sql`
    insert into metafield_definition_stamps (store_id, token)
    select store_id, lower(hex(randomblob(16))) from (select distinct store_id from metafield_definitions) as stores
  `.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table metafield_definition_stamps`.execute(db)
}
