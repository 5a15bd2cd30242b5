import { sql, type Kysely } from 'kysely'

/**
 * Webhook endpoints, per store. `secret` is kept as issued (`whsec_...`): signing needs the key
 * itself, so it cannot be a hash like an API key's. `webhook_endpoint_counts` holds how many endpoints a
 * store has, so that the limit of 16 is one conditional upsert, safe under concurrency.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table webhook_endpoints (
      store_id text not null,
      id text not null,
      url text not null,
      events text not null,
      description text,
      enabled integer not null check (enabled in (0, 1)),
      secret text not null,
      created_at text not null,
      updated_at text not null,
      primary key (store_id, id)
    ) strict
  `.execute(db)
  await sql`
    create table webhook_endpoint_counts (
      store_id text primary key,
      endpoints integer not null check (endpoints >= 0)
    ) strict
  `.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table webhook_endpoint_counts`.execute(db)
  await sql`drop table webhook_endpoints`.execute(db)
}
