import { sql, type Kysely } from 'kysely'

/**
 * Custom attributes (metafields): the store's definitions, a count of them per owner (the
 * limit of 200 is kept by one conditional upsert), the values on products and variants as a
 * JSON object each, and an index of the values of filterable definitions, one row per item
 * and record, keyed for `metafield.<ns>.<key>=v` filters and facets.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table metafield_definitions (
      store_id text not null,
      id text not null,
      owner text not null check (owner in ('product', 'variant')),
      namespace text not null,
      key text not null,
      type text not null,
      name text not null,
      description text,
      validations text not null,
      filterable integer not null,
      searchable integer not null,
      version integer not null default 1,
      created_at text not null,
      updated_at text not null,
      primary key (store_id, id)
    ) strict
  `.execute(db)
  await sql`
    create unique index metafield_definitions_key
    on metafield_definitions (store_id, owner, namespace, key)
  `.execute(db)
  await sql`
    create table metafield_definition_counts (
      store_id text not null,
      owner text not null,
      definitions integer not null,
      primary key (store_id, owner)
    ) strict
  `.execute(db)
  await sql`alter table products add column metafields text not null default '{}'`.execute(db)
  await sql`alter table variants add column metafields text not null default '{}'`.execute(db)
  await sql`
    create table metafield_values (
      store_id text not null,
      definition_id text not null,
      value text not null,
      product_id text not null,
      record_id text not null,
      primary key (store_id, definition_id, value, product_id, record_id),
      foreign key (store_id, definition_id) references metafield_definitions (store_id, id)
        on delete cascade,
      foreign key (store_id, product_id) references products (store_id, id) on delete cascade
    ) strict
  `.execute(db)
  await sql`create index metafield_values_by_record on metafield_values (store_id, record_id)`.execute(
    db,
  )
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table metafield_values`.execute(db)
  await sql`alter table variants drop column metafields`.execute(db)
  await sql`alter table products drop column metafields`.execute(db)
  await sql`drop table metafield_definition_counts`.execute(db)
  await sql`drop table metafield_definitions`.execute(db)
}
