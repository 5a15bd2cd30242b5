/**
 * The bare baseline: the least a server can do for each route of the benchmark. Fastify 5
 * parses the JSON body, then one statement runs with the raw driver (one INSERT ... RETURNING,
 * one UPDATE ... RETURNING of the row, or one SELECT), prepared once; no auth, no validation,
 * no slug, no defaults, no versions of a variant's product. The tables have the shapes and
 * indexes of the service's products and variants.
 *
 * With BASELINE_EVENTS=1 each write also appends its event in the same transaction, as the
 * contract asks of every change: the written row as JSON (for an update, the row before too)
 * into an `events` table of the service's shape and indexes. On PostgreSQL a data-modifying
 * CTE of the one statement (position from `pg_current_xact_id()` and an identity); on SQLite
 * a transaction of the write, the event's insert and, for an update, the read of the row
 * before. Nothing else of the service: no delivery queued, no product version moved by a
 * variant.
 *
 * The search bench runs it on the service's own loaded database instead (BASELINE_SCHEMA=
 * service: no tables made), with a search route and, with BASELINE_DOCUMENTS=1, each
 * product write's search document in the same transaction: see baseline-search.ts.
 *
 * Environment: BASELINE_DATABASE (`sqlite:<file>` or a postgres:// URL of an empty database),
 * BASELINE_SYNCHRONOUS (NORMAL or FULL, SQLite only), BASELINE_EVENTS, BASELINE_SCHEMA (own or
 * service), BASELINE_DOCUMENTS, BASELINE_SEARCH, HOST, PORT.
 *
 * Self-contained (no imports from bench/) because servers.ts transpiles this one file and runs
 * it with plain node: the tsx loader would add its own thread and ~25 MiB to the RSS that is
 * compared with the service's.
 */
import { randomUUID } from 'node:crypto'
import SqliteDatabase from '../src/db/sqlite-driver.js'
import Fastify from 'fastify'
import pg from 'pg'
import { DOCUMENT_WRITES, readCapturedSearch, searchValues } from './baseline-search.js'

type Row = Record<string, unknown>
type Body = Record<string, unknown>

const STORE = 'bench'
const API = '/api/commerce/v1'
const marks = (n: number) => Array(n).fill('?').join(', ')
const PRODUCT_COLUMNS =
  'store_id, id, name, slug, status, description, price_e4, compare_at_price_e4, sku, barcode, tax_rate, created_at, updated_at'
const VARIANT_COLUMNS =
  'store_id, id, product_id, name, sku, barcode, price_e4, compare_at_price_e4, options, options_key, position, created_at, updated_at'
/** Merge patch of the two fields the benchmark sends: a field left out (null) is kept. */
const SET_CHANGES =
  'name = coalesce(?, name), price_e4 = coalesce(?, price_e4), updated_at = ?, version = version + 1'

/**
 * The statements, one per route, with `?` marks (numbered for pg). A write names its event;
 * an update, the key (its last marks) of the row before, which its event carries too.
 */
const STATEMENTS = {
  insertProduct: {
    sql: `insert into products (${PRODUCT_COLUMNS}) values (${marks(13)}) returning *`,
    event: 'product.created',
  },
  insertVariant: {
    sql: `insert into variants (${VARIANT_COLUMNS}) values (${marks(13)}) returning *`,
    event: 'variant.created',
  },
  updateProduct: {
    sql: `update products set ${SET_CHANGES} where store_id = ? and id = ? returning *`,
    event: 'product.updated',
    before: { table: 'products', key: 'store_id = ? and id = ?' },
  },
  updateVariant: {
    sql: `update variants set ${SET_CHANGES} where store_id = ? and product_id = ? and id = ? returning *`,
    event: 'variant.updated',
    before: { table: 'variants', key: 'store_id = ? and product_id = ? and id = ?' },
  },
  /** The product with its variants, as a LEFT JOIN: one row per variant. */
  selectProduct: {
    sql: `select p.*, v.id as v_id, v.name as v_name, v.sku as v_sku, v.price_e4 as v_price_e4,
      v.options as v_options, v.position as v_position, v.created_at as v_created_at
      from products p left join variants v on v.store_id = p.store_id and v.product_id = p.id
      where p.store_id = ? and p.id = ? order by v.position, v.created_at, v.id`,
  },
  selectPage: {
    sql: 'select * from products where store_id = ? order by created_at desc, id desc limit ?',
  },
} as const satisfies Record<
  string,
  { sql: string; event?: string; before?: { table: string; key: string } }
>
type Statement = keyof typeof STATEMENTS
type Run = (name: Statement, values: unknown[], body?: Body) => Promise<Row[]>
/** Runs a statement of the search route (its n-th), prepared once. */
type Query = (n: number, sql: string, values: unknown[]) => Promise<Row[]>
/** What a server writes besides the row, and whether it makes its tables. */
interface Options {
  events: boolean
  documents: boolean
  ownSchema: boolean
}

/** The service's tables, as far as these routes go, and their indexes: the same on both. */
function schema(t: Record<'id' | 'int' | 'real' | 'json' | 'time' | 'strict', string>): string {
  return `
    create table products (
      store_id text not null, id ${t.id} not null, name text not null, slug text not null,
      status text not null check (status in ('draft', 'active', 'archived')),
      description text, price_e4 ${t.int} not null, compare_at_price_e4 ${t.int},
      sku text, barcode text, tax_rate ${t.real}, created_at ${t.time} not null,
      updated_at ${t.time} not null, vendor text, product_type text,
      tags ${t.json} not null default '[]', images ${t.json} not null default '[]',
      version integer not null default 1,
      primary key (store_id, id),
      constraint products_slug_key unique (store_id, slug)
    ) ${t.strict};
    create index products_newest on products (store_id, created_at desc, id desc);
    create index products_by_status_newest on products (store_id, status, created_at desc, id desc);
    create index products_by_vendor_newest
      on products (store_id, vendor, created_at desc, id desc) where vendor is not null;
    create index products_by_type_newest
      on products (store_id, product_type, created_at desc, id desc) where product_type is not null;
    create table variants (
      store_id text not null, id ${t.id} not null, product_id ${t.id} not null,
      name text not null, sku text, barcode text, price_e4 ${t.int} not null,
      compare_at_price_e4 ${t.int}, options ${t.json} not null, options_key text,
      position integer not null, created_at ${t.time} not null, updated_at ${t.time} not null,
      weight_grams integer, version integer not null default 1,
      primary key (store_id, id),
      foreign key (store_id, product_id) references products (store_id, id) on delete cascade,
      constraint variants_sku_key unique (store_id, sku),
      constraint variants_options_key unique (store_id, product_id, options_key)
    ) ${t.strict};
    create index variants_by_product on variants (store_id, product_id, position, created_at, id);`
}

/** The service's events tables (migrations 2026-11-25T00-events), for BASELINE_EVENTS. */
const EVENTS_TABLES = {
  sqlite: `
    create table events (
      seq integer primary key autoincrement, store_id text not null, id text not null,
      type text not null, object text not null, previous text, created_at text not null
    ) strict;
    create index events_of_store on events (store_id, seq);
    create index events_by_type on events (store_id, type, seq);`,
  postgres: `
    create table events (
      store_id text not null, xid xid8 not null default pg_current_xact_id(),
      seq bigint generated always as identity, id uuid not null, type text not null,
      object json not null, previous json, created_at timestamptz not null,
      primary key (store_id, xid, seq)
    );
    create index events_by_type on events (store_id, type, xid, seq);`,
}

/**
 * SQLite: a write with its event is a transaction: the row before, the write, the event (and
 * its search document).
 */
function openSqlite(path: string, synchronous: string, options: Options): [Run, Query] {
  const { events, documents, ownSchema } = options
  const db = new SqliteDatabase(path)
  db.pragma('journal_mode = WAL')
  db.pragma(`synchronous = ${synchronous}`)
  db.pragma('foreign_keys = ON')
  db.pragma('busy_timeout = 5000')
  const types = { id: 'text', int: 'integer', real: 'real', json: 'text', time: 'text' }
  if (ownSchema)
    db.exec(schema({ ...types, strict: 'strict' }) + (events ? EVENTS_TABLES.sqlite : ''))
  const insertEvent =
    events &&
    db.prepare(
      'insert into events (store_id, id, type, object, previous, created_at) values (?, ?, ?, ?, ?, ?)',
    )
  const run = {} as Record<Statement, (values: unknown[], body?: Body) => Row[]>
  for (const [name, statement] of Object.entries(STATEMENTS) as [
    Statement,
    (typeof STATEMENTS)[Statement],
  ][]) {
    const prepared = db.prepare(statement.sql)
    const plain = (values: unknown[]) => prepared.all(values) as Row[]
    const document = documents ? DOCUMENT_WRITES[name] : undefined
    const writeDocument = document && db.prepare(document.sql)
    if ((!insertEvent || !('event' in statement)) && !writeDocument) {
      run[name] = plain
      continue
    }
    const before =
      'before' in statement &&
      db.prepare(`select * from ${statement.before.table} where ${statement.before.key}`)
    const keys = 'before' in statement ? statement.before.key.split('?').length - 1 : 0
    const event = insertEvent && 'event' in statement ? statement.event : undefined
    const transaction = db.transaction((values: unknown[], body?: Body) => {
      const old = before && event ? before.get(values.slice(-keys)) : undefined
      const rows = plain(values)
      const now = new Date().toISOString()
      const previous = old === undefined ? null : JSON.stringify(old)
      for (const row of rows) {
        if (insertEvent && event)
          insertEvent.run(STORE, randomUUID(), event, JSON.stringify(row), previous, now)
      }
      if (writeDocument) writeDocument.run(document.values(values, body ?? {}))
      return rows
    })
    // On a database other processes write too (the service's, shared), BEGIN IMMEDIATE: a
    // deferred one that reads first fails at once (SQLITE_BUSY) if another committed since.
    run[name] = ownSchema ? transaction : transaction.immediate
  }
  const prepared = new Map<number, SqliteDatabase.Statement>()
  const query: Query = async (n, sql, values) => {
    if (!prepared.has(n)) prepared.set(n, db.prepare(sql))
    return prepared.get(n)!.all(values) as Row[]
  }
  return [async (name, values, body) => run[name](values, body), query]
}

/** `?` marks as pg's $1, $2, ... from `first`. */
const numbered = (sql: string, first = 1) => {
  let n = first
  return sql.replace(/\?/g, () => `$${n++}`)
}

/**
 * PostgreSQL: a write with its event is one statement, a data-modifying CTE that appends the
 * written row as JSON (for an update, the row before too).
 */
async function openPostgres(url: string, options: Options): Promise<[Run, Query]> {
  const { events, documents, ownSchema } = options
  const pool = new pg.Pool({ connectionString: url, max: 10 })
  const types = { id: 'uuid', int: 'bigint', real: 'double precision', json: 'json' }
  if (ownSchema) {
    await pool.query(
      schema({ ...types, time: 'timestamptz', strict: '' }) +
        (events ? EVENTS_TABLES.postgres : ''),
    )
  }
  const texts = {} as Record<Statement, string>
  for (const [name, statement] of Object.entries(STATEMENTS) as [
    Statement,
    (typeof STATEMENTS)[Statement],
  ][]) {
    const write = numbered(statement.sql)
    const event = events && 'event' in statement ? statement.event : undefined
    const document = documents ? DOCUMENT_WRITES[name] : undefined
    if (!event && !document) {
      texts[name] = write
      continue
    }
    const count = statement.sql.split('?').length - 1
    const old =
      event && 'before' in statement
        ? numbered(statement.before.key, count - (statement.before.key.split('?').length - 1) + 1)
        : undefined
    // The document's marks follow the write's: its values are appended (see run below).
    texts[name] =
      `with ${old && 'before' in statement ? `old as (select * from ${statement.before.table} where ${old}), ` : ''}
      written as (${write})${
        event
          ? `, event as (insert into events (store_id, id, type, object, previous, created_at)
        select written.store_id, gen_random_uuid(), '${event}', to_json(written),
          ${old ? 'to_json(old)' : 'null'}, now()
        from written${old ? ', old' : ''})`
          : ''
      }${document ? `, document as (${numbered(document.sql, count + 1)})` : ''}
      select * from written`
  }
  // Named queries are prepared once per connection, as `prepare` is on SQLite.
  const run: Run = async (name, values, body) => {
    const document = documents ? DOCUMENT_WRITES[name] : undefined
    const all = document ? [...values, ...document.values(values, body ?? {})] : values
    return (await pool.query({ name, text: texts[name], values: all })).rows as Row[]
  }
  const query: Query = async (n, text, values) =>
    (await pool.query({ name: `search${n}`, text, values })).rows as Row[]
  return [run, query]
}

/** Ten-thousandths, as the service stores money; no checks. */
const e4 = (value: unknown) => (typeof value === 'number' ? Math.round(value * 10_000) : null)
const now = () => new Date().toISOString()

/** The id doubles as the slug: a unique slug with no work, which is the point of a baseline. */
function productValues(body: Body): unknown[] {
  const id = randomUUID()
  const money = [e4(body.price) ?? 0, e4(body.compare_at_price)]
  const codes = [body.sku ?? null, body.barcode ?? null, body.tax_rate ?? null]
  return [
    STORE,
    id,
    body.name,
    id,
    body.status ?? 'draft',
    body.description ?? null,
    ...money,
    ...codes,
    now(),
    now(),
  ]
}

function variantValues(productId: string, body: Body): unknown[] {
  const options = JSON.stringify(body.options ?? {})
  const money = [e4(body.price) ?? 0, e4(body.compare_at_price)]
  const codes = [body.sku ?? null, body.barcode ?? null]
  const key = options === '{}' ? null : options
  return [
    STORE,
    randomUUID(),
    productId,
    body.name,
    ...codes,
    ...money,
    options,
    key,
    body.position ?? 1,
    now(),
    now(),
  ]
}

/** What the benchmark's patches change: the name and price if sent, and updated_at. */
const changes = (body: Body) => [body.name ?? null, e4(body.price), now()]

/** The joined rows of selectProduct as one product with its variants. */
function productWithVariants(rows: Row[]): Row | undefined {
  const [first] = rows
  if (!first) return undefined
  const product = Object.fromEntries(Object.entries(first).filter(([c]) => !c.startsWith('v_')))
  product.variants = rows
    .filter((row) => row.v_id !== null)
    .map((row) =>
      Object.fromEntries(
        Object.entries(row)
          .filter(([c]) => c.startsWith('v_'))
          .map(([c, v]) => [c.slice(2), v]),
      ),
    )
  return product
}

async function main(): Promise<void> {
  const database = process.env.BASELINE_DATABASE ?? ''
  const synchronous = process.env.BASELINE_SYNCHRONOUS ?? 'FULL'
  if (!['NORMAL', 'FULL'].includes(synchronous))
    throw new Error('BASELINE_SYNCHRONOUS: NORMAL or FULL')
  const options = {
    events: process.env.BASELINE_EVENTS === '1',
    documents: process.env.BASELINE_DOCUMENTS === '1',
    ownSchema: process.env.BASELINE_SCHEMA !== 'service',
  }
  const [run, query] = database.startsWith('sqlite:')
    ? openSqlite(database.slice('sqlite:'.length), synchronous, options)
    : await openPostgres(database, options)
  const search = process.env.BASELINE_SEARCH
    ? readCapturedSearch(process.env.BASELINE_SEARCH)
    : undefined
  const one = async (
    reply: { code(status: number): { send(body: unknown): unknown } },
    rows: Promise<Row[]>,
  ) => {
    const [row] = await rows
    return row ? { data: row } : reply.code(404).send({ error: 'not_found' })
  }

  type Params = { id: string; variantId: string }
  const app = Fastify({ logger: false })
  app.get('/healthz', async () => ({ status: 'ok' }))
  app.post<{ Body: Body }>(`${API}/products`, (request, reply) =>
    one(reply, run('insertProduct', productValues(request.body), request.body)),
  )
  app.post<{ Body: Body; Params: Params }>(`${API}/products/:id/variants`, (request, reply) =>
    one(reply, run('insertVariant', variantValues(request.params.id, request.body))),
  )
  app.patch<{ Body: Body; Params: Params }>(`${API}/products/:id`, (request, reply) =>
    one(
      reply,
      run('updateProduct', [...changes(request.body), STORE, request.params.id], request.body),
    ),
  )
  app.patch<{ Body: Body; Params: Params }>(
    `${API}/products/:id/variants/:variantId`,
    (request, reply) => {
      const { id, variantId } = request.params
      return one(reply, run('updateVariant', [...changes(request.body), STORE, id, variantId]))
    },
  )
  app.get<{ Params: Params }>(`${API}/products/:id`, async (request, reply) => {
    const product = productWithVariants(await run('selectProduct', [STORE, request.params.id]))
    return product ? { data: product } : reply.code(404).send({ error: 'not_found' })
  })
  app.get<{ Querystring: { limit?: string; q?: string } }>(`${API}/products`, async (request) => {
    const { q } = request.query
    if (search && q !== undefined) {
      // The service's statements for this query in its order: the page, then the facets.
      const answers: Row[][] = []
      for (const [n, statement] of search.statements.entries()) {
        answers.push(await query(n, statement.sql, searchValues(search, statement, q)))
      }
      return { data: answers[0], facets: answers.slice(1) }
    }
    return {
      data: await run('selectPage', [STORE, Number(request.query.limit ?? 50)]),
      nextCursor: null,
    }
  })

  const stop = () => void app.close().finally(() => process.exit(0))
  process.once('SIGTERM', stop)
  process.once('SIGINT', stop)
  await app.listen({ host: process.env.HOST ?? '127.0.0.1', port: Number(process.env.PORT ?? 0) })
}

await main()
