import { sql, type Kysely } from 'kysely'

/**
 * Webhook deliveries: one row per event and endpoint it is meant for, written by a trigger on
 * `events` in the statement (so the transaction) that appends the event: every way of
 * appending an event enqueues its deliveries with it, and only for the endpoints enabled and
 * subscribed at that moment. A store without endpoints pays one index probe per event.
 * Ids are random UUIDs (version 4) made in SQL. The event is found again by its seq.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table webhook_deliveries (
      store_id text not null,
      id text not null,
      endpoint_id text not null,
      event_id text not null,
      event_type text not null,
      event_xid text not null default '0',
      event_seq integer not null,
      status text not null check (status in ('pending', 'succeeded', 'failed')),
      attempts integer not null default 0,
      last_attempt_at text,
      last_status_code integer,
      last_error text,
      next_attempt_at text,
      created_at text not null,
      primary key (store_id, id)
    ) strict
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
    create trigger events_enqueue_webhook_deliveries after insert on events
    begin
      insert into webhook_deliveries (store_id, id, endpoint_id, event_id, event_type,
        event_seq, status, attempts, next_attempt_at, created_at)
      select new.store_id,
        lower(hex(randomblob(4))) || '-' || lower(hex(randomblob(2))) || '-4'
          || substr(lower(hex(randomblob(2))), 2) || '-'
          || substr('89ab', 1 + (abs(random()) % 4), 1) || substr(lower(hex(randomblob(2))), 2)
          || '-' || lower(hex(randomblob(6))),
        e.id, new.id, new.type, new.seq, 'pending', 0, new.created_at, new.created_at
      from webhook_endpoints e
      where e.store_id = new.store_id and e.enabled = 1
        and exists (select 1 from json_each(e.events) where value in (new.type, '*'));
    end
  `.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop trigger events_enqueue_webhook_deliveries`.execute(db)
  await sql`drop table webhook_deliveries`.execute(db)
}
