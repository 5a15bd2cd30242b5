import { sql, type Kysely } from 'kysely'

/**
 * Part 2 of the contract, events: the outbox that every change appends to, in its own
 * transaction, and what the feed and retention need.
 *
 * SQLite has one writer at a time, so the order of `seq` is the order of commits. It is
 * AUTOINCREMENT, so a value is never handed out twice, even after retention has deleted every
 * event of the table (a plain rowid would start again below a cursor held by a client).
 * An event's data are the record's row as JSON text (after the change, or before a delete)
 * and, for an update, the row before: the API's shape is made from them when read.
 *
 * event_pruning remembers, per store, the seq of the last event deleted by retention: a
 * cursor before it names a place whose following events are gone (410).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table events (
      seq integer primary key autoincrement,
      store_id text not null,
      id text not null,
      type text not null,
      object text not null,
      previous text,
      created_at text not null
    ) strict
  `.execute(db)
  await sql`create index events_of_store on events (store_id, seq)`.execute(db)
  await sql`create index events_by_type on events (store_id, type, seq)`.execute(db)
  await sql`
    create table event_pruning (
      store_id text primary key,
      seq integer not null
    ) strict, without rowid
  `.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table event_pruning`.execute(db)
  await sql`drop table events`.execute(db)
}
