import { sql, type Kysely } from 'kysely'

/**
 * Part 2 of the contract, events: the outbox that every change appends to, in its own
 * transaction, and what the feed and retention need.
 *
 * An event's position is (xid, seq): the id of the transaction that wrote it and a sequence
 * number. The feed returns only events of transactions older than its snapshot's xmin, in
 * position order, so an event that commits after a page was read can never sort before that
 * page's end (docs/decisions/0010-event-feed-positions.md). Its data are the record's row as JSON (after the
 * change, or before a delete) and, for an update, the row before: the API's shape is made
 * from them when read, by the same mappers as every answer.
 *
 * event_pruning remembers, per store, the position of the last event deleted by retention:
 * a cursor before it names a place whose following events are gone (410).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table events (
      store_id text not null,
      xid xid8 not null default pg_current_xact_id(),
      seq bigint generated always as identity,
      id uuid not null,
      type text not null,
      object json not null,
      previous json,
      created_at timestamptz not null,
      primary key (store_id, xid, seq)
    )
  `.execute(db)
  await sql`create index events_by_type on events (store_id, type, xid, seq)`.execute(db)
  await sql`
    create table event_pruning (
      store_id text primary key,
      xid xid8 not null,
      seq bigint not null
    )
  `.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table event_pruning`.execute(db)
  await sql`drop table events`.execute(db)
}
