/**
 * Bulk seeding of products straight into a migrated database, for the scale figures: a
 * million rows through the API would take longer than the rest of the benchmark. The rows
 * are what the service itself would have written for store `bench`: a unique slug per
 * product, and the slug_counters row the service keeps for each slug it hands out.
 */
import SqliteDatabase from 'better-sqlite3'
import { withClient } from './postgres.js'

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

export async function seedProducts(databaseUrl: string, count: number): Promise<void> {
  if (databaseUrl.startsWith('sqlite:')) seedSqlite(databaseUrl.slice('sqlite:'.length), count)
  else await seedPostgres(databaseUrl, count)
}

/**
 * Product i (1, 2, ...): "Seed 0000001 product", slug seed-0000001-product (not one that
 * looks suffixed), a time-ordered UUID, one second after product i - 1.
 * seedPostgres computes the same values in SQL.
 */
function seedRow(i: number): unknown[] {
  const digits = String(i).padStart(7, '0')
  const createdAt = new Date(Date.parse(SEED_EPOCH) + i * 1000).toISOString()
  return [
    BENCH_STORE,
    `00000000-0000-7000-8000-${i.toString(16).padStart(12, '0')}`,
    `Seed ${digits} product`,
    `seed-${digits}-product`,
    'active',
    199_900,
    createdAt,
    createdAt,
  ]
}

const PRODUCT_COLUMNS = 'store_id, id, name, slug, status, price_e4, created_at, updated_at'
const ROWS_PER_INSERT = 500

function seedSqlite(path: string, count: number): void {
  const db = new SqliteDatabase(path)
  try {
    db.pragma('cache_size = -262144')
    const placeholders = (columns: number, rows: number) =>
      Array.from({ length: rows }, () => `(${Array(columns).fill('?').join(', ')})`).join(', ')
    const statements = (rows: number) => ({
      products: db.prepare(
        `insert into products (${PRODUCT_COLUMNS}) values ${placeholders(8, rows)}`,
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
              'active', 199900, at.t, at.t
       from generate_series(1, $2::int) as i,
            lateral (select $3::timestamptz + i * interval '1 second' as t) as at`,
      [BENCH_STORE, count, SEED_EPOCH],
    )
    await client.query(
      `insert into slug_counters (${COUNTER_COLUMNS})
       select $1, 'seed-' || lpad(i::text, 7, '0') || '-product', $3, $4
       from generate_series(1, $2::int) as i`,
      [BENCH_STORE, count, ...Object.values(FIRST_CLAIM)],
    )
    await client.query('commit')
    // What autovacuum would have done by the time a store had grown this large: without
    // statistics the planner may pick plans no settled database would use.
    await client.query('vacuum analyze products, slug_counters')
  })
}
