import { sql, type Kysely } from 'kysely'

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table imports (
      store_id text not null,
      id uuid not null,
      status text not null,
      rows_processed integer not null default 0,
      products_created integer not null default 0,
      products_updated integer not null default 0,
      variants_created integer not null default 0,
      variants_updated integer not null default 0,
      rows_failed integer not null default 0,
      columns_not_stored json not null default '[]',
      errors json not null default '[]',
      failure_reason text,
      instance_id text not null,
      heartbeat_at timestamptz not null,
      created_at timestamptz not null,
      finished_at timestamptz,
      primary key (store_id, id)
    )
  `.execute(db)
  await sql`create index imports_running on imports (status, heartbeat_at)`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table imports`.execute(db)
}
