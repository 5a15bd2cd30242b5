import { sql, type Kysely } from 'kysely'

/**
 * PostgreSQL only: what a product write reads folded into its own statements (decision 0034).
 *
 * - product_write_state: collection_rules_state (2026-11-30T03) with the store's metafield
 *   definition stamp read in the same query, after the lock: a create with metafields reads
 *   it there instead of in a statement of its own. Called by the one-statement PATCH too,
 *   before its update, so that the rules lock is still taken before any row lock.
 * - product_document_extras: a product's variants (whole rows, in their order) and the
 *   store's definition stamp, as its search document needs them. Volatile plpgsql, so never
 *   inlined: its query takes a snapshot of its own, so when the one-statement PATCH calls it
 *   on the row it updated (after that row's lock was granted), it sees every change committed
 *   before the lock, which the statement's own snapshot, taken before it waited, may not.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create function product_write_state(lock_key text, store text)
    returns table (token text, collections boolean, definition_stamp text)
    language sql volatile
    as $$
      select pg_advisory_xact_lock_shared(hashtextextended(current_schema() || ':' || lock_key, 0));
      select (select t.token from collection_rules_tokens t where t.store_id = store),
        exists (select 1 from collections c where c.store_id = store),
        (select s.token from metafield_definition_stamps s where s.store_id = store);
    $$
  `.execute(db)
  await sql`
    create function product_document_extras(store text, product uuid)
    returns json
    language plpgsql volatile
    as $$
    declare
      extras json;
    begin
      select json_build_object(
        'variants', coalesce((
          select json_agg(to_json(v) order by v.position, v.created_at)
          from variants v where v.store_id = store and v.product_id = product
        ), '[]'::json),
        'definition_stamp',
        (select s.token from metafield_definition_stamps s where s.store_id = store)
      ) into extras;
      return extras;
    end $$
  `.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop function product_document_extras(text, uuid)`.execute(db)
  await sql`drop function product_write_state(text, text)`.execute(db)
}
