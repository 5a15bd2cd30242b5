import { sql, type Kysely } from 'kysely'

export async function up(db: Kysely<any>): Promise<void> {
  // api_keys is looked up by the hash of a bearer token before the store is known, so it
  // is keyed globally: in a store-distributed (Citus) layout it is a small reference table.
  await sql`
    create table api_keys (
      id uuid primary key,
      store_id text not null,
      name text,
      key_hash text not null unique,
      redacted text not null,
      scopes text not null,
      created_at timestamptz not null,
      revoked_at timestamptz
    )
  `.execute(db)
  await sql`create index api_keys_by_store on api_keys (store_id, created_at)`.execute(db)

  await sql`
    create table products (
      store_id text not null,
      id uuid not null,
      name text not null,
      slug text not null,
      status text not null check (status in ('draft', 'active', 'archived')),
      description text,
      price_e4 bigint not null,
      compare_at_price_e4 bigint,
      sku text,
      barcode text,
      tax_rate double precision,
      max_variant_position bigint not null default 0,
      created_at timestamptz not null,
      updated_at timestamptz not null,
      primary key (store_id, id),
      constraint products_slug_key unique (store_id, slug)
    )
  `.execute(db)
  await sql`create index products_newest on products (store_id, created_at desc, id desc)`.execute(
    db,
  )
  await sql`
    create index products_by_status_newest on products (store_id, status, created_at desc, id desc)
  `.execute(db)

  await sql`
    create table slug_counters (
      store_id text not null,
      slug text not null,
      claims bigint not null,
      last_suffix bigint not null,
      primary key (store_id, slug)
    )
  `.execute(db)

  await sql`
    create table variants (
      store_id text not null,
      id uuid not null,
      product_id uuid not null,
      name text not null,
      sku text,
      barcode text,
      price_e4 bigint not null,
      compare_at_price_e4 bigint,
      options json not null,
      options_key text,
      position integer not null,
      created_at timestamptz not null,
      updated_at timestamptz not null,
      primary key (store_id, id),
      foreign key (store_id, product_id) references products (store_id, id) on delete cascade,
      constraint variants_sku_key unique (store_id, sku),
      constraint variants_options_key unique (store_id, product_id, options_key)
    )
  `.execute(db)
  await sql`
    create index variants_by_product on variants (store_id, product_id, position, created_at, id)
  `.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['variants', 'slug_counters', 'products', 'api_keys']) {
    await sql`drop table ${sql.table(table)}`.execute(db)
  }
}
