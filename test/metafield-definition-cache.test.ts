import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { it, type TestContext } from 'node:test'
import { buildApp } from '../src/app.js'
import { createApiKey } from '../src/auth/api-key.service.js'
import { createDatabase, type Dialect } from '../src/db/database.js'
import { migrateToLatest } from '../src/db/migrate.js'
import { API, createTestSchema, describeEachDialect, expectError } from './helpers.js'

/**
 * The store's metafield definitions are held in memory by the store's definition stamp
 * (src/attributes/values/definition-cache.ts): a change made by another instance of the service,
 * another process on the same database, must be honoured by this one's next write.
 */

async function databaseUrl(t: TestContext, dialect: Dialect): Promise<string> {
  if (dialect === 'postgres') return createTestSchema(t)
  const dir = await mkdtemp(join(tmpdir(), 'definition-cache-'))
  t.after(() => rm(dir, { recursive: true, force: true }))
  return `sqlite:${join(dir, 'catalog.db')}`
}

async function twoInstances(t: TestContext, dialect: Dialect) {
  const url = await databaseUrl(t, dialect)
  const database = createDatabase(url)
  t.after(() => database.close())
  await migrateToLatest(database)
  const { key } = await createApiKey(database, { store: 'shop', scopes: ['read', 'write'] })
  const app = buildApp({ database })
  t.after(() => app.close())
  const here = (method: string, path: string, body?: unknown) =>
    app.inject({
      method: method as 'GET',
      url: `${API}${path}`,
      headers: {
        authorization: `Bearer ${key}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
    })
  /** The same request sent to the other instance: its status. */
  const there = (method: string, path: string, body?: unknown): number => {
    const run = spawnSync(
      process.execPath,
      [
        '--import',
        'tsx',
        join(import.meta.dirname, 'fixtures', 'another-instance.ts'),
        method,
        path,
        ...(body === undefined ? [] : [JSON.stringify(body)]),
      ],
      { env: { ...process.env, DATABASE_URL: url, API_KEY: key }, encoding: 'utf8' },
    )
    assert.equal(run.status, 0, run.stderr)
    return Number(run.stdout)
  }
  return { here, there }
}

describeEachDialect('metafield definitions changed by another instance', (dialect) => {
  it('are honoured by the next write here: new validations, a deleted definition', async (t) => {
    const { here, there } = await twoInstances(t, dialect)
    const created = await here('POST', '/metafield-definitions', {
      owner: 'product',
      namespace: 'custom',
      key: 'size',
      type: 'single_line_text_field',
      name: 'Size',
    })
    assert.equal(created.statusCode, 200, created.body)
    const definition = created.json().data
    // This instance has read the definitions (and holds them) for these writes.
    for (const size of ['XL', 'M']) {
      const res = await here('POST', '/products', {
        name: size,
        metafields: { 'custom.size': size },
      })
      assert.equal(res.statusCode, 200, res.body)
    }
    assert.equal(
      there('PATCH', `/metafield-definitions/${definition.id}`, {
        validations: { choices: ['S', 'M'] },
      }),
      200,
    )
    expectError(
      await here('POST', '/products', { name: 'XL', metafields: { 'custom.size': 'XL' } }),
      400,
      'validation_failed',
    )
    const m = await here('POST', '/products', { name: 'M', metafields: { 'custom.size': 'M' } })
    assert.equal(m.statusCode, 200, m.body)
    assert.equal(there('DELETE', `/metafield-definitions/${definition.id}`), 200)
    expectError(
      await here('PATCH', `/products/${m.json().data.id}`, { metafields: { 'custom.size': 'S' } }),
      400,
      'validation_failed',
    )
  })

  it('are honoured by the next write here: a definition made searchable', async (t) => {
    const { here, there } = await twoInstances(t, dialect)
    const created = await here('POST', '/metafield-definitions', {
      owner: 'product',
      namespace: 'custom',
      key: 'fabric',
      type: 'single_line_text_field',
      name: 'Fabric',
    })
    const definition = created.json().data
    await here('POST', '/products', { name: 'Tee', metafields: { 'custom.fabric': 'linen' } })
    assert.equal(
      there('PATCH', `/metafield-definitions/${definition.id}`, { searchable: true }),
      200,
    )
    const product = await here('POST', '/products', {
      name: 'Shirt',
      metafields: { 'custom.fabric': 'hemp' },
    })
    assert.equal(product.statusCode, 200, product.body)
    const found = await here('GET', '/products?q=hemp')
    assert.deepEqual(
      found.json().data.map((p: { name: string }) => p.name),
      ['Shirt'],
    )
  })
})
