import { sql, type Kysely, type RawBuilder } from 'kysely'

/**
 * Delivery ids in time order: a UUID version 7 whose timestamp is its event's (the first 48
 * bits of the event's id, itself a version 7), the rest random. The primary key's index then
 * grows at its end, as the table's other indexes do; with random (version 4) ids each insert
 * dirtied a page anywhere in it, one page more for the commit to write.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await replaceTrigger(
    db,
    sql`substr(new.id, 1, 13) || '-7' || substr(lower(hex(randomblob(2))), 2) || '-'
      || substr('89ab', 1 + (abs(random()) % 4), 1) || substr(lower(hex(randomblob(2))), 2)
      || '-' || lower(hex(randomblob(6)))`,
  )
}

export async function down(db: Kysely<any>): Promise<void> {
  await replaceTrigger(
    db,
    sql`lower(hex(randomblob(4))) || '-' || lower(hex(randomblob(2))) || '-4'
      || substr(lower(hex(randomblob(2))), 2) || '-'
      || substr('89ab', 1 + (abs(random()) % 4), 1) || substr(lower(hex(randomblob(2))), 2)
      || '-' || lower(hex(randomblob(6)))`,
  )
}

async function replaceTrigger(db: Kysely<any>, deliveryId: RawBuilder<unknown>): Promise<void> {
  await sql`drop trigger events_enqueue_webhook_deliveries`.execute(db)
  await sql`
    create trigger events_enqueue_webhook_deliveries after insert on events
    begin
      insert into webhook_deliveries (store_id, id, endpoint_id, event_id, event_type,
        event_seq, status, attempts, next_attempt_at, created_at)
      select new.store_id, ${deliveryId}, e.id, new.id, new.type, new.seq, 'pending', 0,
        new.created_at, new.created_at
      from webhook_endpoints e
      where e.store_id = new.store_id and e.enabled = 1
        and exists (select 1 from json_each(e.events) where value in (new.type, '*'));
    end
  `.execute(db)
}
