import { sql, type Kysely } from 'kysely'

/**
 * Part 4's collections: the collections, their handles' counters (as products' slugs have),
 * and their members. A member row copies the product's sort keys (creation time, lowercased
 * name, price) and status, so that each sort order of a collection's products is one range
 * scan of an index of its own, whatever the page. A store's rules token changes with every
 * change of its smart collections' rules: product writes cache the rules by it.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table collections (
      store_id text not null,
      id uuid not null,
      title text not null,
      handle text not null,
      description text,
      kind text not null,
      rules json,
      disjunctive boolean not null default false,
      sort_order text not null,
      version integer not null default 1,
      created_at timestamptz not null,
      updated_at timestamptz not null,
      primary key (store_id, id)
    )
  `.execute(db)
  await sql`create unique index collections_handle_key on collections (store_id, handle)`.execute(
    db,
  )
  await sql`
    create index collections_newest on collections (store_id, created_at desc, id desc)
  `.execute(db)
  await sql`create index collections_smart on collections (store_id) where kind = 'smart'`.execute(
    db,
  )
  await sql`
    create table collection_rules_tokens (
      store_id text primary key,
      token text not null
    )
  `.execute(db)
  await sql`
    create table collection_handle_counters (
      store_id text not null,
      slug text not null,
      claims integer not null,
      last_suffix integer not null,
      suffix_of text,
      suffix integer,
      primary key (store_id, slug)
    )
  `.execute(db)
  await sql`
    create index collection_handle_counters_suffixes
    on collection_handle_counters (store_id, suffix_of, suffix) where suffix_of is not null
  `.execute(db)
  await sql`
    create table collection_products (
      store_id text not null,
      collection_id uuid not null,
      product_id uuid not null,
      position integer,
      created_at timestamptz not null,
      name_key text not null,
      price_e4 bigint not null,
      status text not null,
      primary key (store_id, collection_id, product_id),
      foreign key (store_id, collection_id) references collections (store_id, id) on delete cascade,
      foreign key (store_id, product_id) references products (store_id, id) on delete cascade
    )
  `.execute(db)
  await sql`
    create index collection_products_by_product on collection_products (store_id, product_id)
  `.execute(db)
  for (const [name, columns] of SORT_INDEXES) {
    await sql`create index ${sql.id(name)} on collection_products (store_id, collection_id, ${sql.raw(columns)})`.execute(
      db,
    )
  }
}

const SORT_INDEXES = [
  ['collection_products_manual', 'position'],
  ['collection_products_newest', 'created_at, product_id'],
  ['collection_products_name', 'name_key, created_at desc, product_id desc'],
  ['collection_products_name_desc', 'name_key desc, created_at desc, product_id desc'],
  ['collection_products_price', 'price_e4, created_at desc, product_id desc'],
  ['collection_products_price_desc', 'price_e4 desc, created_at desc, product_id desc'],
] as const

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table collection_products`.execute(db)
  await sql`drop table collection_handle_counters`.execute(db)
  await sql`drop table collection_rules_tokens`.execute(db)
  await sql`drop table collections`.execute(db)
}
