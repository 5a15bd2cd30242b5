import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it, type TestContext } from 'node:test'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import pg from 'pg'
import { buildApp, type AppOptions } from '../src/app.js'
import { createApiKey } from '../src/auth/api-key.service.js'
import type { Scope } from '../src/http/scopes.js'
import { createDatabase, type Database, type Dialect } from '../src/db/database.js'
import { migrateToLatest } from '../src/db/migrate.js'
import { checkAgainstDocument } from './openapi-conformance.js'

export const API = '/api/commerce/v1'

/** The PostgreSQL server tests may use; each test gets a schema of its own there. */
export const POSTGRES_URL = process.env.TEST_POSTGRES_URL

/** The dialects this run covers: SQLite always, PostgreSQL when TEST_POSTGRES_URL is set. */
export const DIALECTS: Dialect[] = POSTGRES_URL ? ['sqlite', 'postgres'] : ['sqlite']

/**
 * Declares the suite once per dialect, as `sqlite` and `postgres`. Without TEST_POSTGRES_URL
 * the PostgreSQL suite is reported as skipped, by name, rather than silently left out.
 */
export function describeEachDialect(name: string, suite: (dialect: Dialect) => void): void {
  for (const dialect of DIALECTS) describe(`${name} [${dialect}]`, () => suite(dialect))
  if (!POSTGRES_URL) {
    describe(`${name} [postgres]`, () => {
      it('needs TEST_POSTGRES_URL', { skip: 'TEST_POSTGRES_URL is not set' }, () => {})
    })
  }
}

/**
 * A database of its own for one test, migrated: in memory on SQLite, a fresh schema on
 * PostgreSQL (dropped when the test ends).
 */
export async function createTestDatabase(t: TestContext, dialect: Dialect): Promise<Database> {
  const url = dialect === 'sqlite' ? 'sqlite::memory:' : await createMigratedPostgresDatabase()
  const database = createDatabase(url)
  t.after(() => database.close())
  await migrateToLatest(database)
  return database
}

/**
 * As createTestDatabase, but SQLite's is a file (removed after the test), for what a second
 * connection must see (an export's snapshot, another process).
 */
export async function createFileTestDatabase(t: TestContext, dialect: Dialect): Promise<Database> {
  if (dialect === 'postgres') return createTestDatabase(t, dialect)
  const dir = await mkdtemp(join(tmpdir(), 'catalog-test-'))
  t.after(() => rm(dir, { recursive: true, force: true }))
  const database = createDatabase(`sqlite:${join(dir, 'catalog.db')}`)
  t.after(() => database.close())
  await migrateToLatest(database)
  return database
}

/**
 * This process's migrated PostgreSQL database: the template each test's database is copied
 * from (CREATE DATABASE ... TEMPLATE copies it in tens of milliseconds, where migrating a
 * fresh schema took most of a PostgreSQL test's time). An exact copy: indexes, their order,
 * everything as the migrations made it.
 */
let template: Promise<string> | undefined
/** The databases this process made, dropped when its tests are over. */
const made: string[] = []

function databaseUrl(name: string): string {
  const url = new URL(POSTGRES_URL!)
  url.pathname = `/${name}`
  return url.toString()
}

function migratedTemplate(): Promise<string> {
  template ??= (async () => {
    const name = `catalog_template_${randomBytes(6).toString('hex')}`
    await withAdminClient((client) => client.query(`create database ${name}`))
    made.push(name)
    const database = createDatabase(databaseUrl(name))
    try {
      await migrateToLatest(database)
    } finally {
      await database.close()
    }
    return name
  })()
  return template
}

/**
 * A migrated PostgreSQL database of the test's own, copied from this process's template, and a
 * URL of it. Dropped when the file's tests are over (after every test's pool is closed), not
 * at each test's end, where a test's pools may still be closing.
 */
async function createMigratedPostgresDatabase(): Promise<string> {
  if (!POSTGRES_URL) throw new Error('TEST_POSTGRES_URL is not set')
  const source = await migratedTemplate()
  const name = `catalog_test_${randomBytes(6).toString('hex')}`
  await withAdminClient((client) =>
    client.query(`create database ${name} template ${source} strategy wal_log`),
  )
  made.push(name)
  return databaseUrl(name)
}

after(async () => {
  // The template last: it can't be dropped while a copy of it is being made, and copies are made
  // only while tests run.
  for (const name of made.reverse()) {
    await withAdminClient((client) => client.query(`drop database if exists ${name} with (force)`))
  }
})

/** A fresh PostgreSQL schema, and a URL whose connections use it. Dropped after the test. */
export async function createTestSchema(t: TestContext): Promise<string> {
  if (!POSTGRES_URL) throw new Error('TEST_POSTGRES_URL is not set')
  const schema = `test_${randomBytes(6).toString('hex')}`
  await withAdminClient((client) => client.query(`create schema ${schema}`))
  t.after(() => withAdminClient((client) => client.query(`drop schema ${schema} cascade`)))
  const url = new URL(POSTGRES_URL)
  url.searchParams.set('options', `-c search_path=${schema}`)
  return url.toString()
}

async function withAdminClient<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: POSTGRES_URL })
  await client.connect()
  try {
    return await work(client)
  } finally {
    await client.end()
  }
}

/**
 * Two instances of the service, each with its own pool, on one fresh PostgreSQL schema,
 * listening on real sockets, and a read,write key of store `shop` that both accept.
 */
export async function startTwoInstances(
  t: TestContext,
): Promise<{ url: string; key: string; addresses: string[] }> {
  const url = await createTestSchema(t)
  const databases = [createDatabase(url), createDatabase(url)]
  for (const database of databases) t.after(() => database.close())
  await migrateToLatest(databases[0]!)
  const { key } = await createApiKey(databases[0]!, { store: 'shop', scopes: ['read', 'write'] })
  const addresses: string[] = []
  for (const database of databases) {
    const app = buildApp({ database })
    t.after(() => app.close())
    addresses.push(await app.listen({ port: 0, host: '127.0.0.1' }))
  }
  return { url, key, addresses }
}

export interface TestApi {
  app: FastifyInstance
  database: Database
  /** A key with read and write on store `store-a`, made for this test. */
  key: string
  /** Another key, made on demand: for another store, or with other scopes. */
  newKey(options?: { store?: string; scopes?: Scope[] }): Promise<string>
  /**
   * Any request to `${API}${path}`, with the test's key unless another is given; a `body`
   * that is not a string is sent as JSON (Content-Type application/json unless `headers`
   * says otherwise). The answer is checked against the OpenAPI document.
   */
  request(method: string, path: string, options?: RequestOptions): Promise<LightMyRequestResponse>
  post(path: string, body: unknown, key?: string): Promise<LightMyRequestResponse>
  get(path: string, key?: string): Promise<LightMyRequestResponse>
  patch(path: string, body: unknown, options?: RequestOptions): Promise<LightMyRequestResponse>
  delete(path: string, options?: RequestOptions): Promise<LightMyRequestResponse>
  /** Creates a product and returns its record; fails the test unless the answer is 200. */
  createProduct(body?: Record<string, unknown>, key?: string): Promise<Record<string, any>>
}

export interface RequestOptions {
  body?: unknown
  key?: string
  headers?: Record<string, string>
}

/**
 * The real app on a fresh database of the dialect, closed when the test ends; `options` are
 * the app's options besides its database.
 */
export async function buildTestApi(
  t: TestContext,
  dialect: Dialect,
  options: Omit<AppOptions, 'database'> = {},
): Promise<TestApi> {
  const database = await createTestDatabase(t, dialect)
  const app = buildApp({ ...options, database })
  t.after(() => app.close())
  const newKey = async (options: { store?: string; scopes?: Scope[] } = {}) =>
    (
      await createApiKey(database, {
        store: options.store ?? 'store-a',
        scopes: options.scopes ?? ['read', 'write'],
      })
    ).key
  const key = await newKey()
  // Every answer is also checked against the OpenAPI document: status declared, body matching.
  const request = async (method: string, path: string, options: RequestOptions = {}) => {
    const headers: Record<string, string> = { authorization: `Bearer ${options.key ?? key}` }
    if (options.body !== undefined) headers['content-type'] = 'application/json'
    Object.assign(headers, options.headers)
    const response = await app.inject({
      method: method as 'GET',
      url: `${API}${path}`,
      headers,
      ...(options.body !== undefined && {
        payload:
          typeof options.body === 'string' || Buffer.isBuffer(options.body)
            ? options.body
            : JSON.stringify(options.body),
      }),
    })
    checkAgainstDocument(method, `${API}${path}`, response)
    return response
  }
  const post = (path: string, body: unknown, withKey = key) =>
    request('POST', path, { body, key: withKey, headers: { 'content-type': 'application/json' } })
  const get = (path: string, withKey = key) => request('GET', path, { key: withKey })
  const patch = (path: string, body: unknown, options: RequestOptions = {}) =>
    request('PATCH', path, { ...options, body })
  const del = (path: string, options: RequestOptions = {}) => request('DELETE', path, options)
  const createProduct = async (
    body: Record<string, unknown> = { name: 'T-Shirt' },
    withKey = key,
  ) => {
    const response = await post('/products', body, withKey)
    if (response.statusCode !== 200) {
      throw new Error(`create product answered ${response.statusCode}: ${response.body}`)
    }
    return response.json().data
  }
  return { app, database, key, newKey, request, post, get, patch, delete: del, createProduct }
}

/** Asserts the contract's error body and status, and returns the body. */
export function expectError(
  response: LightMyRequestResponse | { statusCode: number; body: string },
  status: number,
  code: string,
): { error: string; message: string; details?: { field: string; message: string }[] } {
  const body = JSON.parse(response.body)
  if (response.statusCode !== status || body.error !== code) {
    throw new Error(`expected ${status} ${code}, got ${response.statusCode} ${response.body}`)
  }
  if (typeof body.message !== 'string' || body.message.length === 0) {
    throw new Error(`error body without a message: ${response.body}`)
  }
  return body
}

/**
 * A record's updatedAt after changes made at these times (each a createdAt or a clock reading),
 * in order, from `start`: each moves it to its time, or a millisecond past the one before when
 * that is later (two changes in one millisecond still move it).
 */
export function updatedAtAfter(start: string, ...times: string[]): string {
  const moved = times.reduce((time, at) => Math.max(time + 1, Date.parse(at)), Date.parse(start))
  return new Date(moved).toISOString()
}

/** Ids that are not the UUID `id`, though they look close to it: each must be 404, never 500. */
export function malformedIds(id: string): string[] {
  return [
    'not-a-uuid',
    '123',
    `${id}0`,
    id.slice(1),
    id.replaceAll('-', ''),
    encodeURIComponent(`${id}' or '1'='1`),
  ]
}

/** Adds a variant and returns its record; fails the test unless the answer is 200. */
export async function addVariant(
  api: TestApi,
  productId: string,
  body: Record<string, unknown>,
  key?: string,
): Promise<Record<string, any>> {
  const res = await api.post(`/products/${productId}/variants`, body, key)
  assert.equal(res.statusCode, 200, `add variant answered ${res.statusCode}: ${res.body}`)
  return res.json().data
}

/**
 * Creates a metafield definition (`custom.<key>` of a product, named x, unless `body` says
 * otherwise) and returns its record; fails the test unless the answer is 200.
 */
export async function defineMetafield(
  api: TestApi,
  body: Record<string, unknown>,
): Promise<Record<string, any>> {
  const res = await api.post('/metafield-definitions', {
    owner: 'product',
    namespace: 'custom',
    name: 'x',
    ...body,
  })
  assert.equal(res.statusCode, 200, res.body)
  return res.json().data
}

/** Follows nextCursor from the first page (or from `cursor`) to the last; returns the pages. */
export async function walkPages(
  api: TestApi,
  query: string,
  key?: string,
  cursor: string | null = null,
): Promise<{ data: Record<string, any>[]; nextCursor: string | null }[]> {
  const pages: { data: Record<string, any>[]; nextCursor: string | null }[] = []
  do {
    const path: string = `/products?${query}${cursor === null ? '' : `&cursor=${cursor}`}`
    const res = await api.get(path, key)
    assert.equal(res.statusCode, 200, `${path} answered ${res.statusCode}: ${res.body}`)
    const body = res.json()
    assert.deepEqual(Object.keys(body).sort(), ['data', 'nextCursor'])
    pages.push(body)
    cursor = body.nextCursor
    assert.ok(pages.length <= 100, 'paging does not end')
  } while (cursor !== null)
  return pages
}
