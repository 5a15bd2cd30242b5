import { sql, type Kysely } from 'kysely'

/**
 * Webhook deliveries: one row per event and endpoint it is meant for, written by a trigger on
 * `events` in the statement (so the transaction) that appends the event: every way of
 * appending an event (appendEvent, the one-statement writes' CTEs, later an import) enqueues
 * its deliveries with it, and only for the endpoints enabled and subscribed at that moment.
 * When it enqueued any, the trigger NOTIFYs `catalog_webhook_deliveries` with the schema's
 * name: delivered at commit, and not at all on rollback. A store without endpoints pays one
 * index probe of webhook_endpoints per event.
 *
 * `next_attempt_at` is when a pending delivery is due; the dispatcher that claims one sets it
 * to the end of its lease, so that a crash mid-attempt leaves the delivery due again later.
 * The event is found again by its position (event_xid, event_seq: the key of `events`).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table webhook_deliveries (
      store_id text not null,
      id uuid not null,
      endpoint_id uuid not null,
      event_id uuid not null,
      event_type text not null,
      event_xid xid8 not null,
      event_seq bigint not null,
      status text not null check (status in ('pending', 'succeeded', 'failed')),
      attempts integer not null default 0,
      last_attempt_at timestamptz,
      last_status_code integer,
      last_error text,
      next_attempt_at timestamptz,
      created_at timestamptz not null,
      primary key (store_id, id)
    )
  `.execute(db)
  await sql`
    create index webhook_deliveries_due on webhook_deliveries (next_attempt_at)
    where status = 'pending'
  `.execute(db)
  await sql`
    create index webhook_deliveries_of_endpoint
    on webhook_deliveries (store_id, endpoint_id, created_at desc, id desc)
  `.execute(db)
  await sql`
    create function enqueue_webhook_deliveries() returns trigger language plpgsql as $$
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
  await sql`
    create trigger events_enqueue_webhook_deliveries after insert on events
    for each row execute function enqueue_webhook_deliveries()
  `.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop trigger events_enqueue_webhook_deliveries on events`.execute(db)
  await sql`drop function enqueue_webhook_deliveries()`.execute(db)
  await sql`drop table webhook_deliveries`.execute(db)
}
