import { sql, type Kysely } from 'kysely'

/**
 * PostgreSQL only: product_write_state (2026-11-30T11) in PL/pgSQL, the same two statements.
 * Every product write calls it. A SQL-language function that cannot be inlined (two
 * statements, volatile) has its statements planned again at every call: about 60 µs of
 * PostgreSQL's CPU a call against 10 µs for PL/pgSQL, which keeps its plans for the session
 * (5,000 calls in a loop). As before, the lock is taken first and the reads that follow take
 * their snapshot after it is granted.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create or replace function product_write_state(lock_key text, store text)
    returns table (token text, collections boolean, definition_stamp text)
    language plpgsql volatile
    as $$
    begin
      perform pg_advisory_xact_lock_shared(hashtextextended(current_schema() || ':' || lock_key, 0));
      return query
        select (select t.token from collection_rules_tokens t where t.store_id = store),
          exists (select 1 from collections c where c.store_id = store),
          (select s.token from metafield_definition_stamps s where s.store_id = store);
    end $$
  `.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`
    create or replace function product_write_state(lock_key text, store text)
    returns table (token text, collections boolean, definition_stamp text)
    language sql volatile
    as $$
      select pg_advisory_xact_lock_shared(hashtextextended(current_schema() || ':' || lock_key, 0));
      select (select t.token from collection_rules_tokens t where t.store_id = store),
        exists (select 1 from collections c where c.store_id = store),
        (select s.token from metafield_definition_stamps s where s.store_id = store);
    $$
  `.execute(db)
}
