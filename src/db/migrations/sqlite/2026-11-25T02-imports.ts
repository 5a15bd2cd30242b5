import { sql, type Kysely } from 'kysely'

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table imports (
      store_id text not null,
      id text not null,
      status text not null,
      rows_processed integer not null default 0,
      products_created integer not null default 0,
      products_updated integer not null default 0,
      variants_created integer not null default 0,
      variants_updated integer not null default 0,
      rows_failed integer not null default 0,
      columns_not_stored text not null default '[]',
      errors text not null default '[]',
      failure_reason text,
      instance_id text not null,
      heartbeat_at text not null,
      created_at text not null,
      finished_at text,
      primary key (store_id, id)
    ) strict
  `.execute(db)
  await sql`create index imports_running on imports (status, heartbeat_at)`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table imports`.execute(db)
}
