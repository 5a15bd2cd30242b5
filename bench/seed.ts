/**
 * Bulk seeding of products straight into a migrated database, for the scale figures: a
 * million rows through the API would take longer than the rest of the benchmark. The rows
 * are what the service itself would have written for store `bench`: a unique slug per
 * product, and the slug_counters row the service keeps for each slug it hands out; a vendor
 * and two tags per product, with the product_tags rows (one per lowercased tag, at the
 * product's created_at) the service writes for the `tag` filter.
 */
import SqliteDatabase from '../src/db/sqlite-driver.js'
import { withClient } from './postgres.js'
import type { ListFilter } from './requests.js'

/** The store of the key the benchmark makes (`keys create --store bench`). */
export const BENCH_STORE = 'bench'

/** Seeded products are older than any the benchmark creates through the API. */
const SEED_EPOCH = '2020-01-01T00:00:00.000Z'

/**
 * The slug_counters columns the service sets when a slug is claimed for the first time
 * (claimSlug in src/catalog/product.repository.ts). The scale run checks that the service
 * agrees: see checkSeededSlugs.
 */
const FIRST_CLAIM = { claims: 1, last_suffix: 1 } as const
const COUNTER_COLUMNS = `store_id, slug, ${Object.keys(FIRST_CLAIM).join(', ')}`

/** A seeded product's name, whose next product must get `<slug>-2` if the counters are right. */
export const FIRST_SEEDED = { name: 'Seed 0000001 product', nextSlug: 'seed-0000001-product-2' }

/**
 * Product i's vendor is one of 100 and its first tag one of 97, so that in a store of a
 * million each is shared by about 10,000 products, which a filtered page must not sort.
 * Its second tag is shared by 1,000 products in a row (a batch).
 */
const VENDORS = 100
const COMMON_TAGS = 97
const BATCH = 1000

/**
 * Filters of the list that match seeded products: the tag spelled in other case than it was
 * stored (the `tag` filter ignores case), and the slug of one product in the middle.
 */
export const SEEDED_FILTERS = {
  tag: { name: 'tag', value: 'TAG 07' },
  vendor: { name: 'vendor', value: 'Vendor 07' },
  slug: { name: 'slug', value: 'seed-0500000-product' },
} as const satisfies Record<string, ListFilter>

export async function seedProducts(databaseUrl: string, count: number): Promise<void> {
  if (databaseUrl.startsWith('sqlite:')) seedSqlite(databaseUrl.slice('sqlite:'.length), count)
  else await seedPostgres(databaseUrl, count)
}

/**
 * Product i (1, 2, ...): "Seed 0000001 product", slug seed-0000001-product (not one that
 * looks suffixed), a time-ordered UUID, one second after product i - 1, vendor "Vendor 01",
 * tags "Tag 01" and "Batch 0000". seedPostgres computes the same values in SQL.
 */
function seedRow(i: number): unknown[] {
  const digits = String(i).padStart(7, '0')
  const createdAt = new Date(Date.parse(SEED_EPOCH) + i * 1000).toISOString()
  const two = (n: number) => String(n).padStart(2, '0')
  return [
    BENCH_STORE,
    `00000000-0000-7000-8000-${i.toString(16).padStart(12, '0')}`,
    `Seed ${digits} product`,
    `seed-${digits}-product`,
    'active',
    199_900,
    createdAt,
    createdAt,
    `Vendor ${two(i % VENDORS)}`,
    JSON.stringify([
      `Tag ${two(i % COMMON_TAGS)}`,
      `Batch ${String(Math.floor(i / BATCH)).padStart(4, '0')}`,
    ]),
  ]
}

const PRODUCT_COLUMNS =
  'store_id, id, name, slug, status, price_e4, created_at, updated_at, vendor, tags'
/** The product_tags rows of every product, from its tags as stored: the same SQL on both. */
const TAG_ROWS = (tagsOf: string) => `
  insert into product_tags (store_id, product_id, tag_key, status, created_at)
  select p.store_id, p.id, lower(k.value), p.status, p.created_at from products p, ${tagsOf} k`
const ROWS_PER_INSERT = 500

function seedSqlite(path: string, count: number): void {
  const db = new SqliteDatabase(path)
  try {
    db.pragma('cache_size = -262144')
    const placeholders = (columns: number, rows: number) =>
      Array.from({ length: rows }, () => `(${Array(columns).fill('?').join(', ')})`).join(', ')
    const statements = (rows: number) => ({
      products: db.prepare(
        `insert into products (${PRODUCT_COLUMNS}) values ${placeholders(10, rows)}`,
      ),
      counters: db.prepare(
        `insert into slug_counters (${COUNTER_COLUMNS}) values ${placeholders(4, rows)}`,
      ),
    })
    const full = statements(ROWS_PER_INSERT)
    db.transaction(() => {
      for (let first = 1; first <= count; first += ROWS_PER_INSERT) {
        const rows = Math.min(ROWS_PER_INSERT, count - first + 1)
        const batch = Array.from({ length: rows }, (_, k) => seedRow(first + k))
        const { products, counters } = rows === ROWS_PER_INSERT ? full : statements(rows)
        products.run(batch.flat())
        counters.run(batch.flatMap((row) => [row[0], row[3], ...Object.values(FIRST_CLAIM)]))
      }
      db.exec(TAG_ROWS('json_each(p.tags)'))
    })()
  } finally {
    db.close()
  }
}

async function seedPostgres(url: string, count: number): Promise<void> {
  await withClient(url, async (client) => {
    await client.query('begin')
    await client.query(
      `insert into products (${PRODUCT_COLUMNS})
       select $1, ('00000000-0000-7000-8000-' || lpad(to_hex(i), 12, '0'))::uuid,
              'Seed ' || lpad(i::text, 7, '0') || ' product',
              'seed-' || lpad(i::text, 7, '0') || '-product',
              'active', 199900, at.t, at.t,
              'Vendor ' || lpad((i % $4)::text, 2, '0'),
              json_build_array('Tag ' || lpad((i % $5)::text, 2, '0'),
                               'Batch ' || lpad((i / $6)::text, 4, '0'))
       from generate_series(1, $2::int) as i,
            lateral (select $3::timestamptz + i * interval '1 second' as t) as at`,
      [BENCH_STORE, count, SEED_EPOCH, VENDORS, COMMON_TAGS, BATCH],
    )
    await client.query(TAG_ROWS('json_array_elements_text(p.tags)'))
    await client.query(
      `insert into slug_counters (${COUNTER_COLUMNS})
       select $1, 'seed-' || lpad(i::text, 7, '0') || '-product', $3, $4
       from generate_series(1, $2::int) as i`,
      [BENCH_STORE, count, ...Object.values(FIRST_CLAIM)],
    )
    await client.query('commit')
    // What autovacuum would have done by the time a store had grown this large: without
    // statistics the planner may pick plans no settled database would use.
    await client.query('vacuum analyze products, slug_counters, product_tags')
  })
}
