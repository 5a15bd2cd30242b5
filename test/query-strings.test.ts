import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { it } from 'node:test'
import { SCOPES } from '../src/http/scopes.js'
import { generateOpenApiDocument } from '../scripts/openapi.js'
import { buildTestApi, describeEachDialect, expectError, type TestApi } from './helpers.js'
import { operationsOf } from './openapi-conformance.js'

/** Asserts a 400 validation_failed whose details name `field` (and returns its message). */
function assertRefused(response: Awaited<ReturnType<TestApi['get']>>, field: string): string {
  const body = expectError(response, 400, 'validation_failed')
  const detail = body.details?.find((problem) => problem.field === field)
  assert.ok(detail, `no detail names ${field}: ${response.body}`)
  return detail.message
}

/** Numbers written other than in decimal digits, each of which Ajv's coercion would accept. */
const NOT_DECIMAL = ['0x10', '1e2', '10abc', '%205', '5%20', '+5', '05', '5.0', '', '%09' + '5']

describeEachDialect('query strings are as strict as bodies', (dialect) => {
  it('GET /products: a limit not in decimal digits is 400 naming limit', async (t) => {
    const api = await buildTestApi(t, dialect)
    await api.createProduct({ name: 'Mug' })
    for (const limit of NOT_DECIMAL) {
      await t.test(`limit=${limit}`, async () => {
        assertRefused(await api.get(`/products?limit=${limit}`), 'limit')
      })
    }
    // The same numbers in digits are read as before.
    for (const limit of ['16', '100', '5', '1', '200']) {
      const response = await api.get(`/products?limit=${limit}`)
      assert.equal(response.statusCode, 200, `limit=${limit}: ${response.body}`)
    }
    assertRefused(await api.get('/products?limit=0'), 'limit')
    assertRefused(await api.get('/products?limit=201'), 'limit')
  })

  it('GET /products: each parameter given twice is 400 naming it', async (t) => {
    const api = await buildTestApi(t, dialect)
    // Part 4: a filter given twice means any of its values (test/search.test.ts); these stay 400.
    const twice: Record<string, [string, string]> = {
      limit: ['5', '6'],
      cursor: ['a', 'b'],
      q: ['a', 'a'],
      sort: ['name', 'price'],
      price_min: ['1', '2'],
      price_max: ['1', '1'],
      facets: ['vendor', 'tag'],
    }
    for (const [name, [first, second]] of Object.entries(twice)) {
      await t.test(`${name}=${first}&${name}=${second}`, async () => {
        const message = assertRefused(
          await api.get(`/products?${name}=${first}&${name}=${second}`),
          name,
        )
        assert.equal(message, 'must be given once')
      })
    }
  })

  it('GET /products: an unknown status is 400 naming status', async (t) => {
    const api = await buildTestApi(t, dialect)
    for (const status of ['bogus', 'ACTIVE', 'Active', 'active%20', '']) {
      await t.test(`status=${status}`, async () => {
        assertRefused(await api.get(`/products?status=${status}`), 'status')
      })
    }
    for (const status of ['active', 'draft', 'archived']) {
      const response = await api.get(`/products?status=${status}`)
      assert.equal(response.statusCode, 200, `status=${status}: ${response.body}`)
    }
  })

  it('GET /products: one answer names every bad parameter', async (t) => {
    const api = await buildTestApi(t, dialect)
    const body = expectError(
      await api.get('/products?limit=0x10&status=bogus&sort=name&sort=price'),
      400,
      'validation_failed',
    )
    assert.deepEqual(body.details?.map((problem) => problem.field).sort(), [
      'limit',
      'sort',
      'status',
    ])
  })

  it('GET /variants: sku given twice is 400 naming sku', async (t) => {
    const api = await buildTestApi(t, dialect)
    const message = assertRefused(await api.get('/variants?sku=A-1&sku=A-2'), 'sku')
    assert.equal(message, 'must be given once')
    assertRefused(await api.get('/variants?sku=A-1&sku=A-1'), 'sku')
    assert.equal((await api.get('/variants?sku=A-1')).statusCode, 200)
  })

  it('every operation of the document refuses each of its query parameters given twice', async (t) => {
    const api = await buildTestApi(t, dialect)
    const key = await api.newKey({ scopes: [...SCOPES] })
    const document = await generateOpenApiDocument()
    let checked = 0
    for (const [label, operation] of operationsOf(document)) {
      const [method, template] = label.split(' ') as [string, string]
      const path = template.replace(/\{[^}]+\}/g, () => randomUUID())
      for (const parameter of operation.parameters ?? []) {
        if (parameter.in !== 'query') continue
        // A filter that takes a list of values may be repeated (part 4).
        if ((parameter.schema.anyOf ?? []).some((s: { type?: string }) => s.type === 'array'))
          continue
        const value = sampleOf(parameter.schema)
        const url = `${path}?${parameter.name}=${value}&${parameter.name}=${value}`
        const response = await api.app.inject({
          method: method as 'GET',
          url,
          headers: { authorization: `Bearer ${key}` },
        })
        assert.equal(response.statusCode, 400, `${label} ${url}: ${response.body}`)
        const message = assertRefused(response, parameter.name)
        assert.equal(message, 'must be given once', `${label} ${parameter.name}`)
        checked++
      }
    }
    assert.ok(checked >= 8, `only ${checked} query parameters in the document`)
  })
})

/** A value the parameter's schema takes, so that only its repetition is wrong. */
function sampleOf(schema: Record<string, any>): string {
  if (Array.isArray(schema.enum)) return encodeURIComponent(String(schema.enum[0]))
  if (schema.type === 'integer' || schema.type === 'number') return String(schema.minimum ?? 1)
  if (schema.type === 'boolean') return 'true'
  return 'x'
}
