import { sql, type Kysely } from 'kysely'

/**
 * A counted slug that looks suffixed (`t-shirt-7`) records its base and suffix in its own
 * row, instead of raising its base's counter: a family of names (`ab12-1`, `ab12-2`, ...)
 * no longer queues behind the one row of its base. Generation takes the highest suffix
 * recorded under a base from this index. Rows written before keep their reservations where
 * they were, in their base's last_suffix, which generation still reads.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table slug_counters add column suffix_of text`.execute(db)
  await sql`alter table slug_counters add column suffix integer`.execute(db)
  await sql`
    create index slug_counters_suffixes on slug_counters (store_id, suffix_of, suffix)
    where suffix_of is not null
  `.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index slug_counters_suffixes`.execute(db)
  await sql`alter table slug_counters drop column suffix`.execute(db)
  await sql`alter table slug_counters drop column suffix_of`.execute(db)
}
