import { sql, type Kysely, type RawBuilder } from 'kysely'

/**
 * Delivery ids in time order, as on SQLite: a UUID version 7 whose timestamp is its event's
 * (the first 48 bits of the event's id, itself a version 7) and the rest random, so that the
 * primary key's index grows at its end instead of taking each insert on a page anywhere.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await replaceFunction(
    db,
    sql`(substr(new.id::text, 1, 14) || '7' || substr(gen_random_uuid()::text, 16))::uuid`,
  )
}

export async function down(db: Kysely<any>): Promise<void> {
  await replaceFunction(db, sql`gen_random_uuid()`)
}

async function replaceFunction(db: Kysely<any>, deliveryId: RawBuilder<unknown>): Promise<void> {
  await sql`
    create or replace function enqueue_webhook_deliveries() returns trigger language plpgsql as $$
    begin
      insert into webhook_deliveries (store_id, id, endpoint_id, event_id, event_type,
        event_xid, event_seq, status, attempts, next_attempt_at, created_at)
      select new.store_id, ${deliveryId}, e.id, new.id, new.type, new.xid, new.seq,
        'pending', 0, new.created_at, new.created_at
      from webhook_endpoints e
      where e.store_id = new.store_id and e.enabled and (e.events ? new.type or e.events ? '*');
      return null;
    end
    $$
  `.execute(db)
}
