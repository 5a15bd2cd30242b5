import { sql, type Kysely } from 'kysely'

/** GET /imports lists a store's imports newest first, a page at a time, by this index. */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create index imports_newest on imports (store_id, created_at desc, id desc)`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index imports_newest`.execute(db)
}
