import { sql, type Kysely } from 'kysely'

/**
 * PostgreSQL only: the store's rules lock in one function, lock_store_rules(store, exclusive),
 * called by product_write_state (now given the store alone) and by a rules change alike, so
 * that its key is spelled once (it was built in the service and hashed in two places).
 * product_write_state still takes the lock first and reads after it (2026-11-30T12). Running
 * it again changes nothing.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create or replace function lock_store_rules(store text, exclusive boolean) returns void
    language plpgsql volatile
    as $$
    declare
      key bigint := hashtextextended(current_schema() || ':collections:' || store, 0);
    begin
      if exclusive then
        perform pg_advisory_xact_lock(key);
      else
        perform pg_advisory_xact_lock_shared(key);
      end if;
    end $$
  `.execute(db)
  await sql`drop function if exists product_write_state(text, text)`.execute(db)
  await sql`
    create or replace function product_write_state(store text)
    returns table (token text, collections boolean, definition_stamp text)
    language plpgsql volatile
    as $$
    begin
      perform lock_store_rules(store, false);
      return query
        select (select t.token from collection_rules_tokens t where t.store_id = store),
          exists (select 1 from collections c where c.store_id = store),
          (select s.token from metafield_definition_stamps s where s.store_id = store);
    end $$
  `.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop function product_write_state(text)`.execute(db)
  await sql`drop function lock_store_rules(text, boolean)`.execute(db)
  await sql`
    create function product_write_state(lock_key text, store text)
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
