import { sql, type Kysely } from 'kysely'

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table idempotency_keys (
      store_id text not null,
      key text not null,
      fingerprint text not null,
      status integer not null,
      body text not null,
      created_at text not null,
      expires_at text not null,
      primary key (store_id, key)
    ) strict
  `.execute(db)
  await sql`create index idempotency_keys_expiry on idempotency_keys (expires_at)`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table idempotency_keys`.execute(db)
}
