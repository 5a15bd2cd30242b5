import { sql, type Kysely } from 'kysely'

/**
 * The trigger that queues an event's webhook deliveries no longer NOTIFYs. A transaction that
 * has sent a NOTIFY takes a database-wide lock at its commit, so every write of a store with
 * an endpoint committed one at a time: creates with one endpoint ran at 0.29x of creates
 * without (docs/decisions/0020-webhook-delivery.md). The process that commits a write now wakes its own dispatcher
 * (Database.onWriteCommitted); other instances, and deliveries queued by `catalog import`,
 * are found by the dispatchers' poll, within a second.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create or replace function enqueue_webhook_deliveries() returns trigger language plpgsql as $$
    begin
      insert into webhook_deliveries (store_id, id, endpoint_id, event_id, event_type,
        event_xid, event_seq, status, attempts, next_attempt_at, created_at)
      select new.store_id, gen_random_uuid(), e.id, new.id, new.type, new.xid, new.seq,
        'pending', 0, new.created_at, new.created_at
      from webhook_endpoints e
      where e.store_id = new.store_id and e.enabled and (e.events ? new.type or e.events ? '*');
      return null;
    end
    $$
  `.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`
    create or replace function enqueue_webhook_deliveries() returns trigger language plpgsql as $$
    begin
      insert into webhook_deliveries (store_id, id, endpoint_id, event_id, event_type,
        event_xid, event_seq, status, attempts, next_attempt_at, created_at)
      select new.store_id, gen_random_uuid(), e.id, new.id, new.type, new.xid, new.seq,
        'pending', 0, new.created_at, new.created_at
      from webhook_endpoints e
      where e.store_id = new.store_id and e.enabled and (e.events ? new.type or e.events ? '*');
      if found then
        perform pg_notify('catalog_webhook_deliveries', current_schema());
      end if;
      return null;
    end
    $$
  `.execute(db)
}
