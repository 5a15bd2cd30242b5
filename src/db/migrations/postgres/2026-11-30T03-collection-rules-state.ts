import { sql, type Kysely } from 'kysely'

/**
 * PostgreSQL only: a product write's one statement before its work, taking the store's rules
 * lock (shared) and then reading its rules token and whether it has any collection. A
 * function, because a plain statement reads from the snapshot it started with, before the
 * lock was granted; a volatile function's second query takes a snapshot of its own, after
 * the lock, so it sees every rules change that committed while the write waited.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create function collection_rules_state(lock_key text, store text)
    returns table (token text, collections boolean)
    language sql volatile
    as $$
      select pg_advisory_xact_lock_shared(hashtextextended(current_schema() || ':' || lock_key, 0));
      select (select t.token from collection_rules_tokens t where t.store_id = store),
        exists (select 1 from collections c where c.store_id = store);
    $$
  `.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop function collection_rules_state(text, text)`.execute(db)
}
