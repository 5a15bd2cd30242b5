import assert from 'node:assert/strict'
import { copyFileSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { it, type TestContext } from 'node:test'
import { fileURLToPath } from 'node:url'
import SqliteDatabase from '../src/db/sqlite-driver.js'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import { Migrator, sql, type Migration } from 'kysely'
import pg from 'pg'
import { buildApp } from '../src/app.js'
import { createDatabase, type Dialect } from '../src/db/database.js'
import * as postgresInitial from '../src/db/migrations/postgres/2026-11-21T00-initial.js'
import * as postgresIdempotencyKeys from '../src/db/migrations/postgres/2026-11-22T00-idempotency-keys.js'
import { API, createTestSchema, describeEachDialect, expectError } from './helpers.js'
import { checkAgainstDocument } from './openapi-conformance.js'
import { runCatalog, tempDir } from './process-helpers.js'

/**
 * A database written by release 0.1.0 (before issue 14's migration), through its CLI and
 * HTTP API, and the answers it gave then: test/fixtures/README.md says how they were made.
 */
const FIXTURE_DB = fileURLToPath(new URL('./fixtures/catalog-0.1.0.db', import.meta.url))
const fixture = JSON.parse(
  readFileSync(new URL('./fixtures/catalog-0.1.0.json', import.meta.url), 'utf8'),
) as Fixture

interface Fixture {
  key: { id: string; key: string }
  revokedKey: { id: string; key: string }
  products: Record<string, any>[]
  variants: Record<string, any>[]
  /** Each product as GET /products/:id answered once everything was made, with `variants`. */
  finalProducts: Record<string, any>[]
  idempotent: { key: string; body: Record<string, unknown>; answer: Record<string, any> }
}

/** The migration that issue 14 adds, which `catalog migrate` must apply to a 0.1.0 database. */
const NEW_MIGRATION = '2026-11-24T00-manage-catalog'

/** The tables of 0.1.0 and their columns, in the order its migrations made them. */
const OLD_TABLES: Record<string, string[]> = {
  api_keys: [
    'id',
    'store_id',
    'name',
    'key_hash',
    'redacted',
    'scopes',
    'created_at',
    'revoked_at',
  ],
  products: [
    'store_id',
    'id',
    'name',
    'slug',
    'status',
    'description',
    'price_e4',
    'compare_at_price_e4',
    'sku',
    'barcode',
    'tax_rate',
    'max_variant_position',
    'created_at',
    'updated_at',
  ],
  slug_counters: ['store_id', 'slug', 'claims', 'last_suffix'],
  variants: [
    'store_id',
    'id',
    'product_id',
    'name',
    'sku',
    'barcode',
    'price_e4',
    'compare_at_price_e4',
    'options',
    'options_key',
    'position',
    'created_at',
    'updated_at',
  ],
  idempotency_keys: [
    'store_id',
    'key',
    'fingerprint',
    'status',
    'body',
    'created_at',
    'expires_at',
  ],
}

/**
 * The fixture's stored answer would expire 24 hours after it was made; the upgraded copy
 * keeps it a day longer from now, so that a retry across the upgrade can be tested.
 */
const tomorrow = () => new Date(Date.now() + 24 * 60 * 60 * 1000).toISOString()

interface Upgraded {
  app: FastifyInstance
  /** What the first and the second `catalog migrate` printed on stdout. */
  migrateOutputs: [string, string]
  request(
    method: string,
    path: string,
    options?: { body?: unknown; key?: string; headers?: Record<string, string> },
  ): Promise<LightMyRequestResponse>
}

/**
 * A database as 0.1.0 left it, upgraded by running the real `catalog migrate` twice, then
 * served by today's app. SQLite: a copy of the fixture file. PostgreSQL: a fresh schema
 * migrated only as far as 0.1.0 went, holding the fixture's rows (0.1.0 writes the same
 * values on both dialects), inserted with plain SQL into the old columns.
 */
async function upgraded(t: TestContext, dialect: Dialect): Promise<Upgraded> {
  const url = dialect === 'sqlite' ? await sqliteCopy(t) : await postgresAtRelease010(t)
  const first = await runCatalog(['migrate'], { DATABASE_URL: url })
  assert.equal(first.code, 0, `first catalog migrate: ${first.stderr}`)
  const second = await runCatalog(['migrate'], { DATABASE_URL: url })
  assert.equal(second.code, 0, `second catalog migrate: ${second.stderr}`)

  const database = createDatabase(url)
  t.after(() => database.close())
  const app = buildApp({ database })
  t.after(() => app.close())
  const request: Upgraded['request'] = async (method, path, options = {}) => {
    const headers: Record<string, string> = {
      authorization: `Bearer ${options.key ?? fixture.key.key}`,
    }
    if (options.body !== undefined) headers['content-type'] = 'application/json'
    Object.assign(headers, options.headers)
    const response = await app.inject({
      method: method as 'GET',
      url: `${API}${path}`,
      headers,
      ...(options.body !== undefined && { payload: JSON.stringify(options.body) }),
    })
    checkAgainstDocument(method, `${API}${path}`, response)
    return response
  }
  return { app, migrateOutputs: [first.stdout.trim(), second.stdout.trim()], request }
}

/** A copy of the fixture file in a temporary directory (opening it makes -wal and -shm). */
async function sqliteCopy(t: TestContext): Promise<string> {
  const file = join(await tempDir(t), 'catalog.db')
  copyFileSync(FIXTURE_DB, file)
  const handle = new SqliteDatabase(file)
  try {
    handle.prepare('update idempotency_keys set expires_at = ?').run(tomorrow())
    handle.pragma('wal_checkpoint(TRUNCATE)')
  } finally {
    handle.close()
  }
  return `sqlite:${file}`
}

/** A PostgreSQL schema with 0.1.0's two migrations only, and the fixture's rows. */
async function postgresAtRelease010(t: TestContext): Promise<string> {
  const url = await createTestSchema(t)
  const database = createDatabase(url)
  try {
    const { rows } = await sql<{ schema: string }>`select current_schema() as schema`.execute(
      database.kysely,
    )
    const migrations: Record<string, Migration> = {
      '2026-11-21T00-initial': postgresInitial,
      '2026-11-22T00-idempotency-keys': postgresIdempotencyKeys,
    }
    const migrator = new Migrator({
      db: database.kysely,
      provider: { getMigrations: async () => migrations },
      migrationTableSchema: rows[0]!.schema,
    })
    const { error } = await migrator.migrateToLatest()
    if (error) throw error
  } finally {
    await database.close()
  }

  const source = new SqliteDatabase(FIXTURE_DB, { readonly: true, fileMustExist: true })
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    for (const [table, columns] of Object.entries(OLD_TABLES)) {
      const names = columns.join(', ')
      const placeholders = columns.map((_, i) => `$${i + 1}`).join(', ')
      for (const row of source.prepare(`select ${names} from ${table}`).all() as any[]) {
        if (table === 'idempotency_keys') row.expires_at = tomorrow()
        await client.query(
          `insert into ${table} (${names}) values (${placeholders})`,
          columns.map((column) => row[column]),
        )
      }
    }
  } finally {
    source.close()
    await client.end()
  }
  return url
}

/** A product record of 0.1.0 as the upgraded service must show it: new fields at defaults. */
function withNewProductDefaults(product: Record<string, any>): Record<string, any> {
  const upgraded: Record<string, any> = {
    ...product,
    vendor: null,
    productType: null,
    tags: [],
    images: [],
    metafields: {},
    version: 1,
  }
  if (product.variants) upgraded.variants = product.variants.map(withNewVariantDefaults)
  return upgraded
}

function withNewVariantDefaults(variant: Record<string, any>): Record<string, any> {
  return { ...variant, weightGrams: null, metafields: {}, version: 1 }
}

function data(response: LightMyRequestResponse, what: string): any {
  assert.equal(
    response.statusCode,
    200,
    `${what} answered ${response.statusCode}: ${response.body}`,
  )
  return response.json().data
}

const [tee, tee2, tee3, mug, poster, tote] = fixture.finalProducts as Record<string, any>[]

describeEachDialect('a 0.1.0 database upgraded with catalog migrate', (dialect) => {
  it(`catalog migrate applies ${NEW_MIGRATION} and no earlier one; run again, it applies nothing`, async (t) => {
    const { migrateOutputs } = await upgraded(t, dialect)
    assert.match(migrateOutputs[0], new RegExp(`^Applied .*${NEW_MIGRATION}`))
    assert.doesNotMatch(migrateOutputs[0], /2026-11-2[12]T00/)
    assert.equal(migrateOutputs[1], 'Nothing to migrate.')
  })

  it('every product reads back with the values 0.1.0 gave it, new fields at their defaults', async (t) => {
    const api = await upgraded(t, dialect)
    for (const product of fixture.finalProducts) {
      const response = await api.request('GET', `/products/${product.id}`)
      assert.deepEqual(data(response, `GET ${product.name}`), withNewProductDefaults(product))
      assert.equal(response.headers.etag, '"1"')
    }
  })

  it('every variant reads back as 0.1.0 created it, weightGrams null and version 1', async (t) => {
    const api = await upgraded(t, dialect)
    assert.equal(fixture.variants.length, 5)
    for (const variant of fixture.variants) {
      const path = `/products/${variant.productId}/variants/${variant.id}`
      assert.deepEqual(data(await api.request('GET', path), path), withNewVariantDefaults(variant))
      if (variant.sku !== null) {
        const found = data(await api.request('GET', `/variants?sku=${variant.sku}`), variant.sku)
        assert.deepEqual(found, [withNewVariantDefaults(variant)])
      }
    }
  })

  it('the list shows the old products newest first, and its filters see them', async (t) => {
    const api = await upgraded(t, dialect)
    const listed = data(await api.request('GET', '/products?limit=50'), 'GET /products')
    const newestFirst = [...fixture.finalProducts].reverse()
    assert.deepEqual(
      listed,
      newestFirst.map(({ variants: _, ...product }) => withNewProductDefaults(product)),
    )
    const ids = async (query: string) =>
      data(await api.request('GET', `/products?${query}`), query).map((p: any) => p.id)
    assert.deepEqual(await ids('status=active'), [tote!.id, tee!.id])
    assert.deepEqual(await ids('status=archived'), [mug!.id])
    assert.deepEqual(await ids('slug=cafe-creme-t-shirt-2'), [tee2!.id])
    assert.deepEqual(await ids('tag=cotton'), [])
    assert.deepEqual(await ids('vendor=Acme'), [])
    // A search with q reads their documents' copies of status and price (2026-11-30T05).
    for (const product of fixture.finalProducts) {
      const query = `q=${encodeURIComponent(product.name)}&status=${product.status}&price_min=${product.price}&price_max=${product.price}&sort=price`
      assert.ok((await ids(query)).includes(product.id), query)
    }
    const facets = (await api.request('GET', '/products?facets=status,price')).json().facets
    const statuses = new Map<string, number>()
    for (const product of fixture.finalProducts)
      statuses.set(product.status, (statuses.get(product.status) ?? 0) + 1)
    assert.deepEqual(
      Object.fromEntries(facets.status.map((f: any) => [f.value, f.count])),
      Object.fromEntries(statuses),
    )
  })

  it("0.1.0's key still works; its revoked key still does not", async (t) => {
    const api = await upgraded(t, dialect)
    data(await api.request('GET', `/products/${poster!.id}`), 'GET with the old key')
    expectError(
      await api.request('GET', `/products/${poster!.id}`, { key: fixture.revokedKey.key }),
      401,
      'unauthorized',
    )
  })

  it('generated slugs still avoid the slugs 0.1.0 handed out', async (t) => {
    const api = await upgraded(t, dialect)
    const slugOf = async (name: string) =>
      data(await api.request('POST', '/products', { body: { name } }), `create ${name}`).slug
    assert.deepEqual(
      [tee!.slug, tee2!.slug, tee3!.slug],
      ['cafe-creme-t-shirt', 'cafe-creme-t-shirt-2', 'cafe-creme-t-shirt-3'],
    )
    // -2 and -3 are taken (the second by a name of its own): the next is -4.
    assert.equal(await slugOf('Café Crème T-Shirt'), 'cafe-creme-t-shirt-4')
    assert.equal(await slugOf('Cafe Creme T-Shirt'), 'cafe-creme-t-shirt-5')
    assert.equal(await slugOf('Café Crème T-Shirt 3'), 'cafe-creme-t-shirt-3-2')
    assert.equal(await slugOf('Mug'), 'mug-2')
    assert.equal(await slugOf('Tote bag'), 'tote-bag-2')
  })

  it('a new product can be created with the new fields, patched with If-Match "1", given a variant that is then deleted', async (t) => {
    const api = await upgraded(t, dialect)
    const created = data(
      await api.request('POST', '/products', {
        body: {
          name: 'Linen Apron',
          price: 32.5,
          vendor: 'Atelier Lin',
          product_type: 'Apron',
          tags: ['linen', 'kitchen'],
          images: [{ url: 'https://img.example/apron.jpg' }],
        },
      }),
      'create',
    )
    assert.equal(created.slug, 'linen-apron')
    assert.equal(created.version, 1)
    assert.deepEqual(created.tags, ['linen', 'kitchen'])
    assert.deepEqual(created.images, [{ url: 'https://img.example/apron.jpg', alt: null }])

    const patchResponse = await api.request('PATCH', `/products/${created.id}`, {
      body: { status: 'active', tags: ['linen'] },
      headers: { 'if-match': '"1"' },
    })
    const patched = data(patchResponse, 'PATCH')
    assert.equal(patched.status, 'active')
    assert.deepEqual(patched.tags, ['linen'])
    assert.equal(patched.version, 2)
    assert.equal(patchResponse.headers.etag, '"2"')

    const variant = data(
      await api.request('POST', `/products/${created.id}/variants`, {
        body: { name: 'One size', sku: 'APRON-1', weight_grams: 250 },
      }),
      'add variant',
    )
    assert.equal(variant.weightGrams, 250)
    assert.equal(variant.version, 1)
    const deleted = data(
      await api.request('DELETE', `/products/${created.id}/variants/${variant.id}`),
      'delete variant',
    )
    assert.deepEqual(deleted, { id: variant.id, deleted: true })

    const read = data(await api.request('GET', `/products/${created.id}`), 'GET')
    assert.deepEqual(read.variants, [])
    assert.equal(read.version, 4, 'created, patched, a variant added, a variant deleted')
    assert.deepEqual(read.tags, ['linen'])
    assert.equal(
      data(await api.request('GET', '/products?tag=LINEN'), 'list by tag')[0]?.id,
      created.id,
    )
  })

  it('an old product can be patched with If-Match "1" and keeps every field it had', async (t) => {
    const api = await upgraded(t, dialect)
    expectError(
      await api.request('PATCH', `/products/${tee!.id}`, {
        body: { vendor: 'Atelier' },
        headers: { 'if-match': '"2"' },
      }),
      412,
      'precondition_failed',
    )
    const response = await api.request('PATCH', `/products/${tee!.id}`, {
      body: { vendor: 'Atelier', tags: ['cotton'] },
      headers: { 'if-match': '"1"' },
    })
    const patched = data(response, 'PATCH')
    const { variants: _, updatedAt, ...before } = withNewProductDefaults(tee!)
    const { updatedAt: patchedAt, ...after } = patched
    assert.deepEqual(after, { ...before, vendor: 'Atelier', tags: ['cotton'], version: 2 })
    assert.ok(patchedAt > updatedAt, 'updatedAt moves')
    assert.deepEqual(
      data(await api.request('GET', '/products?vendor=Atelier'), 'list by vendor').map(
        (p: any) => p.id,
      ),
      [tee!.id],
    )
    assert.deepEqual(
      data(await api.request('GET', '/products?tag=Cotton'), 'list by tag').map((p: any) => p.id),
      [tee!.id],
    )
  })

  it("an old product's variants keep their rules: next default position, sku and options still taken; one can be deleted", async (t) => {
    const api = await upgraded(t, dialect)
    assert.deepEqual(
      tee!.variants.map((v: any) => v.position),
      [0, 5, 6],
    )
    const added = data(
      await api.request('POST', `/products/${tee!.id}/variants`, {
        body: { name: 'XL / Red', options: { size: 'XL', color: 'red' } },
      }),
      'add variant',
    )
    assert.equal(added.position, 7, 'after the highest position 0.1.0 gave')
    assert.equal(added.price, tee!.price, "the product's price")

    expectError(
      await api.request('POST', `/products/${tee2!.id}/variants`, {
        body: { name: 'Dup', sku: 'TEE-CC-S-RED' },
      }),
      409,
      'duplicate_sku',
    )
    expectError(
      await api.request('POST', `/products/${tee!.id}/variants`, {
        body: { name: 'Again', options: { color: 'red', size: 'S' } },
      }),
      409,
      'duplicate_options',
    )

    const old = tee!.variants.find((v: any) => v.sku === 'TEE-CC-S-RED')
    const deleted = data(
      await api.request('DELETE', `/products/${tee!.id}/variants/${old.id}`, {
        headers: { 'if-match': '"1"' },
      }),
      'delete old variant',
    )
    assert.deepEqual(deleted, { id: old.id, deleted: true })
    const read = data(await api.request('GET', `/products/${tee!.id}`), 'GET')
    assert.deepEqual(
      read.variants.map((v: any) => v.name),
      ['L / Bleu Électrique', 'M / Red', 'XL / Red'],
    )
    assert.equal(read.version, 3, 'a variant added, a variant deleted')
    // Its sku is free again.
    data(
      await api.request('POST', `/products/${tee2!.id}/variants`, {
        body: { name: 'S / Red', sku: 'TEE-CC-S-RED' },
      }),
      'reuse the sku',
    )
  })

  it('a retry of a request 0.1.0 answered under an Idempotency-Key gets that answer again', async (t) => {
    const api = await upgraded(t, dialect)
    assert.deepEqual(tote, { ...fixture.idempotent.answer, variants: [] })
    // Not checked against today's document: the answer is the one stored by 0.1.0.
    const response = await api.app.inject({
      method: 'POST',
      url: `${API}/products`,
      headers: {
        authorization: `Bearer ${fixture.key.key}`,
        'content-type': 'application/json',
        'idempotency-key': fixture.idempotent.key,
      },
      payload: JSON.stringify(fixture.idempotent.body),
    })
    assert.equal(response.statusCode, 200, response.body)
    assert.equal(response.headers['idempotent-replayed'], 'true')
    assert.deepEqual(response.json(), { data: fixture.idempotent.answer })
    const listed = data(await api.request('GET', '/products?limit=50'), 'list')
    assert.equal(listed.length, fixture.finalProducts.length, 'no product created by the retry')
  })
})
