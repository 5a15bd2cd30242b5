/**
 * The bare baseline: the least a server can do for each route of the benchmark. Fastify 5
 * parses the JSON body, then one statement runs with the raw driver (one INSERT ... RETURNING,
 * one UPDATE ... RETURNING of the row, or one SELECT), prepared once; no auth, no validation,
 * no slug, no defaults, no versions of a variant's product. The tables have the shapes and
 * indexes of the service's products and variants.
 *
 * With BASELINE_EVENTS=1 (PostgreSQL only) each write also appends its event in the same
 * statement, as the contract asks of every change: a data-modifying CTE inserts the written
 * row as JSON (for an update, the row before too) into an `events` table of the service's
 * shape (position from `pg_current_xact_id()` and an identity, the service's two indexes).
 * Nothing else of the service: no delivery queued, no product version moved by a variant.
 *
 * Environment: BASELINE_DATABASE (`sqlite:<file>` or a postgres:// URL of an empty database),
 * BASELINE_SYNCHRONOUS (NORMAL or FULL, SQLite only), BASELINE_EVENTS, HOST, PORT.
 *
 * Self-contained (no imports from bench/) because run.ts transpiles this one file and runs
 * it with plain node: the tsx loader would add its own thread and ~25 MiB to the RSS that is
 * compared with the service's.
 */
import { randomUUID } from 'node:crypto'
import SqliteDatabase from '../src/db/sqlite-driver.js'
import Fastify from 'fastify'
import pg from 'pg'

type Row = Record<string, unknown>
type Body = Record<string, unknown>
/** What the benchmark's patches change: [name or null, price_e4 or null, updated_at]. */
type Changes = [unknown, unknown, string]

/** One statement per route. */
interface Statements {
  insertProduct(values: unknown[]): Promise<Row>
  insertVariant(values: unknown[]): Promise<Row>
  /** The sent name and price, if any; undefined when there is no such row. */
  updateProduct(id: string, changes: Changes): Promise<Row | undefined>
  updateVariant(productId: string, id: string, changes: Changes): Promise<Row | undefined>
  /** The product with its variants, as a LEFT JOIN: one row per variant. */
  selectProduct(id: string): Promise<Row[]>
  selectPage(limit: number): Promise<Row[]>
  close(): Promise<void>
}

const STORE = 'bench'
const API = '/api/commerce/v1'

const PRODUCT_COLUMNS =
  'store_id, id, name, slug, status, description, price_e4, compare_at_price_e4, sku, barcode, tax_rate, created_at, updated_at'
const VARIANT_COLUMNS =
  'store_id, id, product_id, name, sku, barcode, price_e4, compare_at_price_e4, options, options_key, position, created_at, updated_at'
/** The service's indexes of the list filters (issue 14), the same on both dialects. */
const FILTER_INDEXES = `
  create index products_by_vendor_newest
    on products (store_id, vendor, created_at desc, id desc) where vendor is not null;
  create index products_by_type_newest
    on products (store_id, product_type, created_at desc, id desc) where product_type is not null;`
/** Merge patch of the two fields the benchmark sends: a field left out (null) is kept. */
const SET_CHANGES = (mark: (i: number) => string) =>
  `name = coalesce(${mark(1)}, name), price_e4 = coalesce(${mark(2)}, price_e4),` +
  ` updated_at = ${mark(3)}, version = version + 1`
const VARIANT_SELECT =
  'v.id as v_id, v.name as v_name, v.sku as v_sku, v.price_e4 as v_price_e4, v.options as v_options, v.position as v_position, v.created_at as v_created_at'

function openSqlite(path: string, synchronous: string): Statements {
  const db = new SqliteDatabase(path)
  db.pragma('journal_mode = WAL')
  db.pragma(`synchronous = ${synchronous}`)
  db.pragma('foreign_keys = ON')
  db.pragma('busy_timeout = 5000')
  db.exec(`
    create table products (
      store_id text not null, id text not null, name text not null, slug text not null,
      status text not null check (status in ('draft', 'active', 'archived')),
      description text, price_e4 integer not null, compare_at_price_e4 integer,
      sku text, barcode text, tax_rate real, created_at text not null, updated_at text not null,
      vendor text, product_type text, tags text not null default '[]',
      images text not null default '[]', version integer not null default 1,
      primary key (store_id, id),
      constraint products_slug_key unique (store_id, slug)
    ) strict;
    create index products_newest on products (store_id, created_at desc, id desc);
    create index products_by_status_newest on products (store_id, status, created_at desc, id desc);
    ${FILTER_INDEXES}
    create table variants (
      store_id text not null, id text not null, product_id text not null, name text not null,
      sku text, barcode text, price_e4 integer not null, compare_at_price_e4 integer,
      options text not null, options_key text, position integer not null,
      created_at text not null, updated_at text not null,
      weight_grams integer, version integer not null default 1,
      primary key (store_id, id),
      foreign key (store_id, product_id) references products (store_id, id) on delete cascade,
      constraint variants_sku_key unique (store_id, sku),
      constraint variants_options_key unique (store_id, product_id, options_key)
    ) strict;
    create index variants_by_product on variants (store_id, product_id, position, created_at, id);
  `)
  const marks = (n: number) => Array(n).fill('?').join(', ')
  const insertProduct = db.prepare(
    `insert into products (${PRODUCT_COLUMNS}) values (${marks(13)}) returning *`,
  )
  const insertVariant = db.prepare(
    `insert into variants (${VARIANT_COLUMNS}) values (${marks(13)}) returning *`,
  )
  const updateProduct = db.prepare(
    `update products set ${SET_CHANGES(() => '?')} where store_id = ? and id = ? returning *`,
  )
  const updateVariant = db.prepare(
    `update variants set ${SET_CHANGES(() => '?')}
     where store_id = ? and product_id = ? and id = ? returning *`,
  )
  const selectProduct = db.prepare(
    `select p.*, ${VARIANT_SELECT} from products p
     left join variants v on v.store_id = p.store_id and v.product_id = p.id
     where p.store_id = ? and p.id = ? order by v.position, v.created_at, v.id`,
  )
  const selectPage = db.prepare(
    `select * from products where store_id = ? order by created_at desc, id desc limit ?`,
  )
  return {
    insertProduct: async (values) => insertProduct.get(values) as Row,
    insertVariant: async (values) => insertVariant.get(values) as Row,
    updateProduct: async (id, changes) =>
      updateProduct.get([...changes, STORE, id]) as Row | undefined,
    updateVariant: async (productId, id, changes) =>
      updateVariant.get([...changes, STORE, productId, id]) as Row | undefined,
    selectProduct: async (id) => selectProduct.all(STORE, id) as Row[],
    selectPage: async (limit) => selectPage.all(STORE, limit) as Row[],
    close: async () => void db.close(),
  }
}

/** The service's events table (migration 2026-11-25T00-events), for BASELINE_EVENTS. */
const EVENTS_TABLE = `
  create table events (
    store_id text not null, xid xid8 not null default pg_current_xact_id(),
    seq bigint generated always as identity, id uuid not null, type text not null,
    object json not null, previous json, created_at timestamptz not null,
    primary key (store_id, xid, seq)
  );
  create index events_by_type on events (store_id, type, xid, seq);`

/**
 * `write` (an INSERT or UPDATE ... RETURNING * of `table`) as one statement that also appends
 * its event of `type`; for an update, `key` selects the row before.
 */
function withEvent(write: string, type: string, old?: { table: string; key: string }): string {
  const before = old ? `old as (select * from ${old.table} where ${old.key}), ` : ''
  return `with ${before}written as (${write}),
    event as (insert into events (store_id, id, type, object, previous, created_at)
      select written.store_id, gen_random_uuid(), '${type}', to_json(written),
        ${old ? 'to_json(old)' : 'null'}, now()
      from written${old ? ', old' : ''})
    select * from written`
}

async function openPostgres(url: string, events: boolean): Promise<Statements> {
  const pool = new pg.Pool({ connectionString: url, max: 10 })
  const logged = (write: string, type: string, old?: { table: string; key: string }) =>
    events ? withEvent(write, type, old) : write
  await pool.query(`
    create table products (
      store_id text not null, id uuid not null, name text not null, slug text not null,
      status text not null check (status in ('draft', 'active', 'archived')),
      description text, price_e4 bigint not null, compare_at_price_e4 bigint,
      sku text, barcode text, tax_rate double precision,
      created_at timestamptz not null, updated_at timestamptz not null,
      vendor text, product_type text, tags json not null default '[]',
      images json not null default '[]', version integer not null default 1,
      primary key (store_id, id),
      constraint products_slug_key unique (store_id, slug)
    );
    create index products_newest on products (store_id, created_at desc, id desc);
    create index products_by_status_newest on products (store_id, status, created_at desc, id desc);
    ${FILTER_INDEXES}
    create table variants (
      store_id text not null, id uuid not null, product_id uuid not null, name text not null,
      sku text, barcode text, price_e4 bigint not null, compare_at_price_e4 bigint,
      options json not null, options_key text, position integer not null,
      created_at timestamptz not null, updated_at timestamptz not null,
      weight_grams integer, version integer not null default 1,
      primary key (store_id, id),
      foreign key (store_id, product_id) references products (store_id, id) on delete cascade,
      constraint variants_sku_key unique (store_id, sku),
      constraint variants_options_key unique (store_id, product_id, options_key)
    );
    create index variants_by_product on variants (store_id, product_id, position, created_at, id);
    ${events ? EVENTS_TABLE : ''}
  `)
  const marks = (n: number) => Array.from({ length: n }, (_, i) => `$${i + 1}`).join(', ')
  // Named queries are prepared once per connection, as `prepare` is on SQLite.
  const run = async (name: string, text: string, values: unknown[]) =>
    (await pool.query({ name, text, values })).rows as Row[]
  return {
    insertProduct: async (values) =>
      (
        await run(
          'insert-product',
          logged(
            `insert into products (${PRODUCT_COLUMNS}) values (${marks(13)}) returning *`,
            'product.created',
          ),
          values,
        )
      )[0]!,
    insertVariant: async (values) =>
      (
        await run(
          'insert-variant',
          logged(
            `insert into variants (${VARIANT_COLUMNS}) values (${marks(13)}) returning *`,
            'variant.created',
          ),
          values,
        )
      )[0]!,
    updateProduct: async (id, changes) =>
      (
        await run(
          'update-product',
          logged(
            `update products set ${SET_CHANGES((i) => `$${i}`)}
             where store_id = $4 and id = $5 returning *`,
            'product.updated',
            { table: 'products', key: 'store_id = $4 and id = $5' },
          ),
          [...changes, STORE, id],
        )
      )[0],
    updateVariant: async (productId, id, changes) =>
      (
        await run(
          'update-variant',
          logged(
            `update variants set ${SET_CHANGES((i) => `$${i}`)}
             where store_id = $4 and product_id = $5 and id = $6 returning *`,
            'variant.updated',
            { table: 'variants', key: 'store_id = $4 and product_id = $5 and id = $6' },
          ),
          [...changes, STORE, productId, id],
        )
      )[0],
    selectProduct: (id) =>
      run(
        'select-product',
        `select p.*, ${VARIANT_SELECT} from products p
         left join variants v on v.store_id = p.store_id and v.product_id = p.id
         where p.store_id = $1 and p.id = $2 order by v.position, v.created_at, v.id`,
        [STORE, id],
      ),
    selectPage: (limit) =>
      run(
        'select-page',
        'select * from products where store_id = $1 order by created_at desc, id desc limit $2',
        [STORE, limit],
      ),
    close: () => pool.end(),
  }
}

/** Ten-thousandths, as the service stores money; no checks. */
const e4 = (value: unknown) => (typeof value === 'number' ? Math.round(value * 10_000) : null)

function productValues(body: Body): unknown[] {
  const id = randomUUID()
  const now = new Date().toISOString()
  // The id doubles as the slug: a unique slug with no work, which is the point of a baseline.
  return [
    STORE,
    id,
    body.name,
    id,
    body.status ?? 'draft',
    body.description ?? null,
    e4(body.price) ?? 0,
    e4(body.compare_at_price),
    body.sku ?? null,
    body.barcode ?? null,
    body.tax_rate ?? null,
    now,
    now,
  ]
}

function variantValues(productId: string, body: Body): unknown[] {
  const now = new Date().toISOString()
  const options = JSON.stringify(body.options ?? {})
  return [
    STORE,
    randomUUID(),
    productId,
    body.name,
    body.sku ?? null,
    body.barcode ?? null,
    e4(body.price) ?? 0,
    e4(body.compare_at_price),
    options,
    options === '{}' ? null : options,
    body.position ?? 1,
    now,
    now,
  ]
}

function changes(body: Body): Changes {
  return [body.name ?? null, e4(body.price), new Date().toISOString()]
}

/** The joined rows of selectProduct as one product with its variants. */
function productWithVariants(rows: Row[]): Row | undefined {
  const [first] = rows
  if (!first) return undefined
  const product: Row = {}
  for (const [column, value] of Object.entries(first)) {
    if (!column.startsWith('v_')) product[column] = value
  }
  product.variants = rows
    .filter((row) => row.v_id !== null)
    .map((row) => ({
      id: row.v_id,
      name: row.v_name,
      sku: row.v_sku,
      price_e4: row.v_price_e4,
      options: row.v_options,
      position: row.v_position,
      created_at: row.v_created_at,
    }))
  return product
}

async function main(): Promise<void> {
  const database = process.env.BASELINE_DATABASE ?? ''
  const synchronous = process.env.BASELINE_SYNCHRONOUS ?? 'FULL'
  if (!['NORMAL', 'FULL'].includes(synchronous))
    throw new Error('BASELINE_SYNCHRONOUS: NORMAL or FULL')
  const statements = database.startsWith('sqlite:')
    ? openSqlite(database.slice('sqlite:'.length), synchronous)
    : await openPostgres(database, process.env.BASELINE_EVENTS === '1')

  const app = Fastify({ logger: false })
  app.get('/healthz', async () => ({ status: 'ok' }))
  app.post<{ Body: Body }>(`${API}/products`, async (request) => ({
    data: await statements.insertProduct(productValues(request.body)),
  }))
  app.post<{ Body: Body; Params: { id: string } }>(
    `${API}/products/:id/variants`,
    async (request) => ({
      data: await statements.insertVariant(variantValues(request.params.id, request.body)),
    }),
  )
  app.patch<{ Body: Body; Params: { id: string } }>(
    `${API}/products/:id`,
    async (request, reply) => {
      const row = await statements.updateProduct(request.params.id, changes(request.body))
      return row ? { data: row } : reply.code(404).send({ error: 'not_found' })
    },
  )
  app.patch<{ Body: Body; Params: { id: string; variantId: string } }>(
    `${API}/products/:id/variants/:variantId`,
    async (request, reply) => {
      const { id, variantId } = request.params
      const row = await statements.updateVariant(id, variantId, changes(request.body))
      return row ? { data: row } : reply.code(404).send({ error: 'not_found' })
    },
  )
  app.get<{ Params: { id: string } }>(`${API}/products/:id`, async (request, reply) => {
    const product = productWithVariants(await statements.selectProduct(request.params.id))
    return product ? { data: product } : reply.code(404).send({ error: 'not_found' })
  })
  app.get<{ Querystring: { limit?: string } }>(`${API}/products`, async (request) => ({
    data: await statements.selectPage(Number(request.query.limit ?? 50)),
    nextCursor: null,
  }))

  const stop = () => {
    void app
      .close()
      .then(() => statements.close())
      .finally(() => process.exit(0))
  }
  process.once('SIGTERM', stop)
  process.once('SIGINT', stop)
  await app.listen({ host: process.env.HOST ?? '127.0.0.1', port: Number(process.env.PORT ?? 0) })
}

await main()
