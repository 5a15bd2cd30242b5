import { sql, type Kysely } from 'kysely'

/**
 * A list filtered by tag, vendor or product type and by status is one index range whatever
 * the store's size: the indexes of those filters take the status after the filter's value
 * (a page without status reads the newest of each status and merges them). Before, the
 * status was checked on each row the filter's index gave: a page of `?tag=t&status=active`
 * whose tagged products were nearly all drafts walked through every one of them.
 *
 * A tag's rows (product_tags) keep their product's status, set when they are written and
 * changed with the product's by a trigger, so that every write (the API, an import, the
 * one-statement PATCH) keeps them equal.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table product_tags add column status text not null default 'draft'`.execute(db)
  await sql`
    update product_tags t set status = p.status
    from products p where p.store_id = t.store_id and p.id = t.product_id
  `.execute(db)
  await sql`alter table product_tags alter column status drop default`.execute(db)
  await sql`
    create function product_status_to_tags() returns trigger language plpgsql as $$
    begin
      update product_tags set status = new.status
      where store_id = new.store_id and product_id = new.id;
      return null;
    end
    $$
  `.execute(db)
  await sql`
    create trigger products_status_to_tags after update of status on products
    for each row when (old.status is distinct from new.status)
    execute function product_status_to_tags()
  `.execute(db)
  await replaceIndexes(db, 'status, ')
}

export async function down(db: Kysely<any>): Promise<void> {
  await replaceIndexes(db, '')
  await sql`drop trigger products_status_to_tags on products`.execute(db)
  await sql`drop function product_status_to_tags()`.execute(db)
  await sql`alter table product_tags drop column status`.execute(db)
}

async function replaceIndexes(db: Kysely<any>, status: '' | 'status, '): Promise<void> {
  const then = sql.raw(status)
  await sql`drop index products_by_vendor_newest`.execute(db)
  await sql`drop index products_by_type_newest`.execute(db)
  await sql`drop index product_tags_newest`.execute(db)
  await sql`
    create index products_by_vendor_newest
    on products (store_id, vendor, ${then}created_at desc, id desc) where vendor is not null
  `.execute(db)
  await sql`
    create index products_by_type_newest
    on products (store_id, product_type, ${then}created_at desc, id desc)
    where product_type is not null
  `.execute(db)
  await sql`
    create index product_tags_newest
    on product_tags (store_id, tag_key, ${then}created_at desc, product_id desc)
  `.execute(db)
}
