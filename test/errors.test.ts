import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { Writable } from 'node:stream'
import { it, type TestContext } from 'node:test'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import { buildApp } from '../src/app.js'
import { createApiKey } from '../src/auth/api-key.service.js'
import { createDatabase, type Database, type Dialect } from '../src/db/database.js'
import {
  addVariant,
  API,
  buildTestApi,
  createTestDatabase,
  describeEachDialect,
  expectError,
  type TestApi,
} from './helpers.js'

/** The limit the contract names when none is configured. */
const BODY_LIMIT = 256 * 1024

const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/

/** What would betray the inside of the service: stack frames, source files, SQL, drivers. */
const INTERNALS: RegExp[] = [
  /\bat \S+ \(/,
  /\n\s*at /,
  /\.(?:ts|js|mjs|cjs)\b/,
  /\/work\b/,
  /\/secret\b/,
  /node_modules/,
  /\bselect\b/i,
  /\binsert into\b/i,
  /\bupdate \w+ set\b/i,
  /sqlite/i,
  /postgres/i,
  /kysely/i,
  /constraint/i,
  /\bboom\b/i,
  /\w*Error:/,
]

function assertNothingInternal(response: LightMyRequestResponse, label: string): void {
  for (const pattern of INTERNALS) {
    assert.doesNotMatch(response.body, pattern, `${label} reveals ${pattern}: ${response.body}`)
  }
}

/**
 * The contract's error response: the status, application/json, and a body of exactly
 * `error` and `message`, plus `details` (a list of `{field, message}`) for validation errors.
 */
function assertErrorResponse(
  response: LightMyRequestResponse,
  status: number,
  code: string,
  label = `${status} ${code}`,
) {
  assert.equal(response.statusCode, status, `${label}: ${response.body}`)
  assert.match(
    String(response.headers['content-type']),
    /^application\/json\b/,
    `${label}: Content-Type`,
  )
  const body = expectError(response, status, code)
  const keys = Object.keys(body).sort()
  if (code === 'validation_failed') {
    assert.deepEqual(keys, ['details', 'error', 'message'], `${label}: ${response.body}`)
    assert.ok(Array.isArray(body.details) && body.details.length > 0, `${label}: no details`)
    for (const detail of body.details) {
      assert.deepEqual(
        Object.keys(detail).sort(),
        ['field', 'message'],
        `${label}: ${response.body}`,
      )
      assert.equal(typeof detail.field, 'string')
      assert.ok(detail.field.length > 0, `${label}: empty field`)
      assert.equal(typeof detail.message, 'string')
      assert.ok(detail.message.length > 0, `${label}: empty message`)
    }
  } else {
    assert.deepEqual(keys, ['error', 'message'], `${label}: ${response.body}`)
  }
  assertNothingInternal(response, label)
  return body
}

interface RawRequest {
  method?: 'GET' | 'POST' | 'DELETE' | 'PUT' | 'PATCH'
  url: string
  key?: string | null
  contentType?: string
  payload?: string
  requestId?: string
}

/** A request as a client writes it, byte for byte: no defaults but the API key. */
function send(api: TestApi, request: RawRequest): Promise<LightMyRequestResponse> {
  const headers: Record<string, string> = {}
  const key = request.key === undefined ? api.key : request.key
  if (key !== null) headers.authorization = `Bearer ${key}`
  if (request.contentType !== undefined) headers['content-type'] = request.contentType
  if (request.requestId !== undefined) headers['x-request-id'] = request.requestId
  return api.app.inject({
    method: request.method ?? 'POST',
    // Paths of the API's products are written short; any other path is sent as it is.
    url: request.url.startsWith('/products') ? `${API}${request.url}` : request.url,
    headers,
    ...(request.payload === undefined ? {} : { payload: request.payload }),
  })
}

/** The two POST paths, against an existing product. */
async function postPaths(api: TestApi): Promise<string[]> {
  const product = await api.createProduct({ name: 'Mug' })
  return ['/products', `/products/${product.id}/variants`]
}

/** The product count of the test key's store, to show that a refused request wrote nothing. */
async function productCount(api: TestApi): Promise<number> {
  const list = await api.get('/products?limit=200')
  assert.equal(list.statusCode, 200, list.body)
  return list.json().data.length
}

/** An app whose every write fails with an error the service does not know, on a real database. */
async function buildBrokenWriteApp(t: TestContext, dialect: Dialect) {
  const database = await createTestDatabase(t, dialect)
  const fail = async (): Promise<never> => {
    throw new Error('boom /secret/path SELECT')
  }
  const broken: Database = { ...database, write: fail, writeAtomic: fail }
  const logs: Record<string, unknown>[] = []
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n')) if (line.trim()) logs.push(JSON.parse(line))
      done()
    },
  })
  const app = buildApp({ database: broken, logger: { level: 'error', stream } })
  t.after(() => app.close())
  const { key } = await createApiKey(database, {
    store: 'store-a',
    scopes: ['read', 'write'],
  })
  return { app, database, key, logs }
}

function postJson(
  app: FastifyInstance,
  url: string,
  key: string,
  body: unknown,
  requestId?: string,
) {
  return app.inject({
    method: 'POST',
    url: `${API}${url}`,
    headers: {
      authorization: `Bearer ${key}`,
      'content-type': 'application/json',
      ...(requestId === undefined ? {} : { 'x-request-id': requestId }),
    },
    payload: JSON.stringify(body),
  })
}

describeEachDialect('error responses', (dialect) => {
  it('every error body is exactly {error, message}, plus details only for validation_failed, as application/json', async (t) => {
    const api = await buildTestApi(t, dialect)
    const product = await api.createProduct({ name: 'Mug' })
    const taken = await api.post(`/products/${product.id}/variants`, { name: 'Red', sku: 'R-1' })
    assert.equal(taken.statusCode, 200, taken.body)
    const readKey = await api.newKey({ scopes: ['read'] })
    const cases: [RawRequest, number, string][] = [
      [
        { url: '/products', key: null, contentType: 'application/json', payload: '{"name":"A"}' },
        401,
        'unauthorized',
      ],
      [
        {
          url: '/products',
          key: readKey,
          contentType: 'application/json',
          payload: '{"name":"A"}',
        },
        403,
        'forbidden',
      ],
      [
        { url: '/products', contentType: 'application/json', payload: '{"name":' },
        400,
        'invalid_json',
      ],
      [
        { url: '/products', contentType: 'application/json', payload: '{"price":-1}' },
        400,
        'validation_failed',
      ],
      [{ method: 'GET', url: `/products/${randomUUID()}` }, 404, 'not_found'],
      [{ method: 'GET', url: '/nope' }, 404, 'not_found'],
      [
        {
          url: `/products/${product.id}/variants`,
          contentType: 'application/json',
          payload: '{"name":"Blue","sku":"R-1"}',
        },
        409,
        'duplicate_sku',
      ],
      [
        {
          url: '/products',
          contentType: 'application/json',
          payload: JSON.stringify({ name: 'A', description: 'x'.repeat(300_000) }),
        },
        413,
        'payload_too_large',
      ],
      [
        { url: '/products', contentType: 'text/plain', payload: '{"name":"A"}' },
        415,
        'unsupported_media_type',
      ],
    ]
    for (const [request, status, code] of cases) {
      assertErrorResponse(
        await send(api, request),
        status,
        code,
        `${request.method ?? 'POST'} ${request.url} (${code})`,
      )
    }
  })

  it('malformed JSON is 400 invalid_json', async (t) => {
    const api = await buildTestApi(t, dialect)
    for (const url of await postPaths(api)) {
      for (const payload of [
        '{"name":',
        '{name: "Mug"}',
        "{'name': 'Mug'}",
        '{"name":"Mug"}}',
        'nul',
        '{"name":"Mug",}',
      ]) {
        const response = await send(api, { url, contentType: 'application/json', payload })
        assertErrorResponse(response, 400, 'invalid_json', `${url} with ${payload}`)
      }
    }
    assert.equal(await productCount(api), 1)
  })

  it('an empty body with Content-Type application/json is 400 invalid_json', async (t) => {
    const api = await buildTestApi(t, dialect)
    for (const url of await postPaths(api)) {
      const response = await send(api, { url, contentType: 'application/json', payload: '' })
      assertErrorResponse(response, 400, 'invalid_json', url)
    }
  })

  it('a POST with no body and no Content-Type is 400 invalid_json', async (t) => {
    const api = await buildTestApi(t, dialect)
    for (const url of await postPaths(api)) {
      const response = await send(api, { url })
      assertErrorResponse(response, 400, 'invalid_json', url)
    }
    assert.equal(await productCount(api), 1)
  })

  it('a JSON body that is not an object is 400', async (t) => {
    const api = await buildTestApi(t, dialect)
    for (const url of await postPaths(api)) {
      for (const payload of ['[]', '[{"name":"Mug"}]', '"x"', '42', 'null', 'true']) {
        const response = await send(api, { url, contentType: 'application/json', payload })
        assert.equal(response.statusCode, 400, `${url} with ${payload}: ${response.body}`)
        const code = response.json().error
        assert.ok(
          code === 'validation_failed' || code === 'invalid_json',
          `${url} with ${payload}: ${response.body}`,
        )
        assertErrorResponse(response, 400, code, `${url} with ${payload}`)
      }
      // Refused as a body that is not an object, whatever it holds.
      for (const payload of ['[{"__proto__":[]}]', '["\\u0000"]', '"\\u0000"']) {
        const response = await send(api, { url, contentType: 'application/json', payload })
        const error = assertErrorResponse(response, 400, 'validation_failed', payload)
        assert.deepEqual(
          error.details!.map((d) => d.field),
          ['body'],
          `${url} with ${payload}`,
        )
      }
    }
    assert.equal(await productCount(api), 1)
  })

  it('validation_failed lists one {field, message} per problem, e.g. price -1 is {"field":"price","message":"must be >= 0"}', async (t) => {
    const api = await buildTestApi(t, dialect)
    const product = await api.createProduct({ name: 'Mug' })

    const price = assertErrorResponse(
      await api.post('/products', { name: 'Mug', price: -1 }),
      400,
      'validation_failed',
    )
    assert.deepEqual(price.details, [{ field: 'price', message: 'must be >= 0' }])
    const variantPrice = assertErrorResponse(
      await api.post(`/products/${product.id}/variants`, { name: 'Red', price: -1 }),
      400,
      'validation_failed',
    )
    assert.deepEqual(variantPrice.details, [{ field: 'price', message: 'must be >= 0' }])

    // Four problems, four entries, each naming its field.
    const many = assertErrorResponse(
      await api.post('/products', { price: -1, status: 'gone', sku: 123, tax_rate: 101 }),
      400,
      'validation_failed',
    )
    assert.deepEqual(many.details!.map((d) => d.field).sort(), [
      'name',
      'price',
      'sku',
      'status',
      'tax_rate',
    ])
    assert.equal(await productCount(api), 1)
  })

  it('a missing or blank name is a validation error on field name', async (t) => {
    const api = await buildTestApi(t, dialect)
    for (const url of await postPaths(api)) {
      for (const body of [{}, { price: 1 }, { name: '   ' }, { name: '' }, { name: null }]) {
        const error = assertErrorResponse(
          await api.post(url, body),
          400,
          'validation_failed',
          `${url} ${JSON.stringify(body)}`,
        )
        assert.deepEqual(
          error.details!.map((d) => d.field),
          ['name'],
          `${url} ${JSON.stringify(body)}: ${JSON.stringify(error.details)}`,
        )
      }
    }
  })

  it('a problem inside options names the option', async (t) => {
    const api = await buildTestApi(t, dialect)
    const product = await api.createProduct({ name: 'Mug' })
    const url = `/products/${product.id}/variants`
    for (const options of [
      { color: 5 },
      { color: '' },
      { color: 'x'.repeat(256) },
      { color: null },
    ]) {
      const error = assertErrorResponse(
        await api.post(url, { name: 'Red', options: { size: 'M', ...options } }),
        400,
        'validation_failed',
        JSON.stringify(options).slice(0, 40),
      )
      assert.deepEqual(
        error.details!.map((d) => d.field),
        ['options.color'],
        JSON.stringify(error.details),
      )
    }
    // An option name that is too long: the problem is the name, so the detail names it.
    const longName = 'k'.repeat(65)
    const error = assertErrorResponse(
      await api.post(url, { name: 'Red', options: { [longName]: 'x' } }),
      400,
      'validation_failed',
    )
    assert.equal(error.details!.length, 1, JSON.stringify(error.details))
    assert.ok(
      `${error.details![0]!.field} ${error.details![0]!.message}`.includes(longName),
      JSON.stringify(error.details),
    )
    // Two bad names are two problems: one entry each.
    const otherName = 'j'.repeat(66)
    const both = assertErrorResponse(
      await api.post(url, { name: 'Red', options: { [longName]: 'x', [otherName]: 'y', '': 'z' } }),
      400,
      'validation_failed',
    )
    assert.deepEqual(
      both.details!.map((d) => [
        d.field,
        [longName, otherName, '""'].find((n) => d.message.includes(n)),
      ]),
      [
        ['options', longName],
        ['options', otherName],
        ['options', '""'],
      ],
      JSON.stringify(both.details),
    )
    const variants = await api.get(`/products/${product.id}/variants`)
    assert.deepEqual(variants.json().data, [])
  })

  it("Shopify's title and body_html are 400 naming name and description, on create and PATCH, and nothing is written", async (t) => {
    const api = await buildTestApi(t, dialect)
    const shopify = (field: string, meant: string) =>
      `is not a field of this request: send it as ${meant} (${field} is Shopify's name for it)`
    const problems = (response: LightMyRequestResponse) =>
      Object.fromEntries(
        assertErrorResponse(response, 400, 'validation_failed').details!.map((d) => [
          d.field,
          d.message,
        ]),
      )
    // A product body written for Shopify: both names refused, with the body's other problems.
    assert.deepEqual(
      problems(await api.post('/products', { title: 'Mug', body_html: '<p>Big</p>', price: -1 })),
      {
        title: shopify('title', 'name'),
        body_html: shopify('body_html', 'description'),
        name: 'is required',
        price: 'must be >= 0',
      },
    )
    // Beside the fields meant too: never silently dropped.
    assert.deepEqual(
      problems(await api.post('/products', { name: 'Mug', title: 'Mug', body_html: '<p>x</p>' })),
      { title: shopify('title', 'name'), body_html: shopify('body_html', 'description') },
    )
    assert.deepEqual((await api.get('/products')).json().data, [])

    const product = await api.createProduct({ name: 'Mug', description: 'Plain' })
    const variant = await addVariant(api, product.id, { name: 'Red' })
    assert.deepEqual(problems(await api.patch(`/products/${product.id}`, { title: 'Big mug' })), {
      title: shopify('title', 'name'),
    })
    assert.deepEqual(
      problems(await api.patch(`/products/${product.id}`, { body_html: '<p>Big</p>' })),
      { body_html: shopify('body_html', 'description') },
    )
    const variants = `/products/${product.id}/variants`
    assert.deepEqual(problems(await api.post(variants, { name: 'Blue', title: 'Blue' })), {
      title: shopify('title', 'name'),
    })
    assert.deepEqual(problems(await api.patch(`${variants}/${variant.id}`, { title: 'Green' })), {
      title: shopify('title', 'name'),
    })
    // A collection's title is its own field; its description's Shopify name is refused.
    const collection = await api.post('/collections', { title: 'Mugs' })
    assert.equal(collection.statusCode, 200, collection.body)
    assert.deepEqual(problems(await api.post('/collections', { title: 'Cups', body_html: 'x' })), {
      body_html: shopify('body_html', 'description'),
    })
    assert.deepEqual(
      problems(
        await api.patch(`/collections/${collection.json().data.id}`, { body_html: '<p>x</p>' }),
      ),
      { body_html: shopify('body_html', 'description') },
    )

    const after = (await api.get(`/products/${product.id}`)).json().data
    assert.equal(after.name, 'Mug')
    assert.equal(after.description, 'Plain')
    assert.equal(after.version, 2, 'one variant added, nothing else')
    assert.deepEqual(
      after.variants.map((v: { name: string }) => v.name),
      ['Red'],
    )
  })

  it('a camelCase spelling of a request field is 400 naming it and the field meant, with the other problems, and nothing is written', async (t) => {
    const api = await buildTestApi(t, dialect)
    const refused = assertErrorResponse(
      await api.post('/products', {
        name: 'Mug',
        compareAtPrice: 30,
        taxRate: 20,
        productType: 'Mugs',
        price: -1,
      }),
      400,
      'validation_failed',
    )
    const byField = Object.fromEntries(refused.details!.map((d) => [d.field, d.message]))
    assert.deepEqual(Object.keys(byField).sort(), [
      'compareAtPrice',
      'price',
      'productType',
      'taxRate',
    ])
    assert.match(byField.compareAtPrice!, /compare_at_price/)
    assert.match(byField.taxRate!, /tax_rate/)
    assert.match(byField.productType!, /product_type/)
    const listed = await api.get('/products')
    assert.deepEqual(listed.json().data, [])

    // A record read from an answer and sent back as a PATCH is refused, not half applied.
    const product = await api.createProduct({ name: 'Mug', compare_at_price: 30, tax_rate: 20 })
    const variant = await addVariant(api, product.id, { name: 'Red', weight_grams: 300 })
    const readBack = (await api.get(`/products/${product.id}`)).json().data
    const patched = assertErrorResponse(
      await api.patch(`/products/${product.id}`, { ...readBack, compareAtPrice: 25 }),
      400,
      'validation_failed',
    )
    assert.ok(
      patched.details!.some(
        (d) => d.field === 'compareAtPrice' && d.message.includes('compare_at_price'),
      ),
      JSON.stringify(patched.details),
    )
    const variantPath = `/products/${product.id}/variants/${variant.id}`
    const variantRefused = assertErrorResponse(
      await api.patch(variantPath, { weightGrams: 250 }),
      400,
      'validation_failed',
    )
    assert.deepEqual(
      variantRefused.details!.map((d) => d.field),
      ['weightGrams'],
    )
    const after = (await api.get(`/products/${product.id}`)).json().data
    assert.equal(after.compareAtPrice, 30)
    assert.equal(after.variants[0].weightGrams, 300)
    // The snake_case field itself, and fields no request defines, still go through.
    const ok = await api.patch(`/products/${product.id}`, { compare_at_price: 25, nickname: 'x' })
    assert.equal(ok.statusCode, 200, ok.body)
  })

  it('a body over 256 KiB is 413 payload_too_large, naming the limit and its setting', async (t) => {
    const api = await buildTestApi(t, dialect)
    for (const url of await postPaths(api)) {
      const payload = JSON.stringify({ name: 'Mug', description: 'x'.repeat(300_000) })
      assert.ok(Buffer.byteLength(payload) > BODY_LIMIT)
      const response = await send(api, { url, contentType: 'application/json', payload })
      const error = assertErrorResponse(response, 413, 'payload_too_large', url)
      assert.equal(
        error.message,
        'The request body is larger than the 262144 bytes (256 KiB) the service accepts ' +
          '(BODY_LIMIT_BYTES sets the limit).',
        url,
      )
    }
    assert.equal(await productCount(api), 1)
  })

  it('the 413 names the limit configured, on PATCH too', async (t) => {
    const api = await buildTestApi(t, dialect, { bodyLimit: 2000 })
    const product = await api.createProduct({ name: 'Mug' })
    for (const [method, url] of [
      ['POST', '/products'],
      ['PATCH', `/products/${product.id}`],
    ] as const) {
      const payload = JSON.stringify({ name: 'Mug', description: 'x'.repeat(2100) })
      const response = await send(api, { method, url, contentType: 'application/json', payload })
      const error = assertErrorResponse(response, 413, 'payload_too_large', url)
      assert.match(error.message, /than the 2000 bytes the service accepts \(BODY_LIMIT_BYTES/)
    }
  })

  it('a body just under 256 KiB with an over-long description is 400 validation_failed, not 413', async (t) => {
    const api = await buildTestApi(t, dialect)
    const payload = JSON.stringify({ name: 'Mug', description: 'x'.repeat(262_000) })
    assert.ok(Buffer.byteLength(payload) < BODY_LIMIT)
    const response = await send(api, { url: '/products', contentType: 'application/json', payload })
    const error = assertErrorResponse(response, 400, 'validation_failed')
    assert.deepEqual(
      error.details!.map((d) => d.field),
      ['description'],
    )
  })

  it('a body that is not JSON is 415 unsupported_media_type', async (t) => {
    const api = await buildTestApi(t, dialect)
    for (const url of await postPaths(api)) {
      for (const [contentType, payload] of [
        ['text/plain', '{"name":"Mug"}'],
        ['application/x-www-form-urlencoded', 'name=Mug'],
        ['application/xml', '<product><name>Mug</name></product>'],
      ] as const) {
        const response = await send(api, { url, contentType, payload })
        assertErrorResponse(response, 415, 'unsupported_media_type', `${url} as ${contentType}`)
      }
    }
    assert.equal(await productCount(api), 1)
  })

  it('application/json with a charset parameter is accepted', async (t) => {
    const api = await buildTestApi(t, dialect)
    for (const contentType of [
      'application/json; charset=utf-8',
      'application/json;charset=UTF-8',
    ]) {
      const product = await send(api, { url: '/products', contentType, payload: '{"name":"Mug"}' })
      assert.equal(product.statusCode, 200, `${contentType}: ${product.body}`)
      const variant = await send(api, {
        url: `/products/${product.json().data.id}/variants`,
        contentType,
        payload: '{"name":"Red"}',
      })
      assert.equal(variant.statusCode, 200, `${contentType}: ${variant.body}`)
    }
  })

  it('an unknown route is 404 not_found in the contract shape', async (t) => {
    const api = await buildTestApi(t, dialect)
    const product = await api.createProduct({ name: 'Mug' })
    const routes: RawRequest[] = [
      { method: 'GET', url: '/nope' },
      { method: 'GET', url: `${API}/nothing` },
      { method: 'PUT', url: `${API}/nothing` },
      { method: 'GET', url: `${API}/products/${product.id}/nope` },
      { method: 'PUT', url: `${API}/products/` },
      { method: 'GET', url: '/api/commerce/v2/products' },
    ]
    for (const route of routes) {
      for (const key of [api.key, null]) {
        const response = await send(api, { ...route, key })
        assertErrorResponse(response, 404, 'not_found', `${route.method} ${route.url}`)
        assert.equal(response.headers.allow, undefined)
      }
    }
    // Nothing was deleted.
    assert.equal((await api.get(`/products/${product.id}`)).statusCode, 200)
  })

  it('a known path with a method it does not take is 405 method_not_allowed with Allow, before any key', async (t) => {
    const api = await buildTestApi(t, dialect)
    const product = await api.createProduct({ name: 'Mug' })
    const readOnly = await api.newKey({ scopes: ['read'] })
    const one = `${API}/products/${product.id}`
    const cases: [string, string, string][] = [
      ['PUT', one, 'GET, HEAD, PATCH, DELETE'],
      ['POST', one, 'GET, HEAD, PATCH, DELETE'],
      ['DELETE', `${API}/products`, 'GET, HEAD, POST'],
      ['PATCH', `${API}/products?limit=2`, 'GET, HEAD, POST'],
      ['PUT', `${one}/variants`, 'GET, HEAD, POST'],
      ['DELETE', `${API}/variants`, 'GET, HEAD'],
      ['PUT', `${API}/collections/preview`, 'GET, HEAD, POST, PATCH, DELETE'],
      ['POST', `${API}/events`, 'GET, HEAD'],
      ['PUT', `${API}/imports`, 'GET, HEAD, POST'],
      ['POST', '/healthz', 'GET, HEAD'],
      ['DELETE', '/admin/assets/app.js', 'GET, HEAD'],
      ['OPTIONS', `${API}/products`, 'GET, HEAD, POST'],
      ['QUERY', `${API}/products`, 'GET, HEAD, POST'],
    ]
    for (const [method, url, allow] of cases) {
      // No key, a key that is not one, a key without the scope, a key with it: routing first.
      for (const key of [null, 'ck_nope', readOnly, api.key]) {
        const response = await api.app.inject({
          method: method as 'PUT',
          url,
          headers: key === null ? {} : { authorization: `Bearer ${key}` },
        })
        const label = `${method} ${url} (key ${key})`
        const error = assertErrorResponse(response, 405, 'method_not_allowed', label)
        assert.equal(response.headers.allow, allow, label)
        assert.equal(
          error.message,
          `This path does not take ${method}; it takes ${allow} (the Allow header lists them).`,
        )
        assert.ok(response.headers['x-request-id'], label)
      }
    }
    // HEAD is routed as GET's twin; on a path without GET it is 405 too (Node sends no body).
    const head = await api.app.inject({ method: 'HEAD', url: one })
    assert.equal(head.statusCode, 401)
    const retry = `${API}/webhook-endpoints/${product.id}/deliveries/${product.id}/retry`
    const headOfPost = await api.app.inject({ method: 'HEAD', url: retry })
    assert.equal(headOfPost.statusCode, 405)
    assert.equal(headOfPost.headers.allow, 'POST')
    // Nothing was changed.
    const after = await api.get(`/products/${product.id}`)
    assert.equal(after.statusCode, 200)
    assert.equal(after.json().data.version, 1)
  })

  it('every path the app serves: 405 for each method it does not take, Allow naming the ones it does', async (t) => {
    const api = await buildTestApi(t, dialect)
    const product = await api.createProduct({ name: 'Mug' })
    const app = buildApp({ database: api.database })
    t.after(() => app.close())
    const patterns = new Set<string>()
    app.addHook('onRoute', (route) => void patterns.add(route.url))
    await app.ready()
    assert.ok(patterns.size > 30, `${patterns.size} paths`)
    const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const
    // A wildcard's rest as a file it serves (an unknown file is the not-found handler's 404).
    const page = (await app.inject({ url: '/admin/' })).body
    const asset = page.match(/\/admin\/assets\/([^"]+)"/)![1]!
    const files: Record<string, string> = {
      '/docs/static/*': '/docs/static/index.html',
      '/admin/assets/*': `/admin/assets/${asset}`,
    }
    for (const pattern of patterns) {
      const url = files[pattern] ?? pattern.replace(/:[A-Za-z]+/g, product.id)
      assert.doesNotMatch(url, /\*/, `a file for ${pattern}`)
      const answers = new Map<string, LightMyRequestResponse>()
      for (const method of METHODS) answers.set(method, await app.inject({ method, url }))
      // A method the router routes here: anything but a 405 or the not-found handler's 404.
      const taken = METHODS.filter((method) => {
        const response = answers.get(method)!
        return response.statusCode !== 405 && !response.body.includes('"message":"No route for')
      })
      assert.ok(taken.length > 0, url)
      for (const method of METHODS.filter((method) => !taken.includes(method))) {
        const response = answers.get(method)!
        const label = `${method} ${url}`
        assert.equal(response.statusCode, 405, `${label}: ${response.body}`)
        assert.equal(response.headers.allow, taken.join(', '), label)
        assert.equal(response.json().error, 'method_not_allowed', label)
      }
    }
  })

  it('no error body reveals stack traces, SQL or file paths', async (t) => {
    const api = await buildTestApi(t, dialect)
    const product = await api.createProduct({ name: 'Mug' })
    const variants = `/products/${product.id}/variants`
    assert.equal(
      (await api.post(variants, { name: 'Red', sku: 'R-1', options: { color: 'red' } })).statusCode,
      200,
    )

    const responses: [string, LightMyRequestResponse][] = [
      [
        'invalid json',
        await send(api, {
          url: '/products',
          contentType: 'application/json',
          payload: '{"name": undefined}',
        }),
      ],
      [
        'validation',
        await api.post('/products', {
          name: 123,
          price: 'x',
          status: "'; drop table products; --",
        }),
      ],
      ['duplicate sku', await api.post(variants, { name: 'Blue', sku: 'R-1' })],
      [
        'duplicate options',
        await api.post(variants, { name: 'Red again', options: { color: 'red' } }),
      ],
      ['malformed id', await api.get("/products/1'%20OR%20'1'='1")],
      [
        'malformed id, variants',
        await api.post("/products/1'%20OR%201=1--/variants", { name: 'X' }),
      ],
      ['bad percent-encoding', await api.get('/products/%E0%A4%A')],
      ['unknown id', await api.get(`/products/${randomUUID()}/variants`)],
      ['unknown key', await api.get('/products', `ck_${'A'.repeat(43)}`)],
      ['bad cursor', await api.get('/products?cursor=%27%20or%201%3D1')],
      ['bad limit', await api.get('/products?limit=0')],
    ]
    for (const [label, response] of responses) {
      assert.ok(
        response.statusCode >= 400 && response.statusCode < 500,
        `${label}: ${response.statusCode} ${response.body}`,
      )
      const body = response.json()
      assertErrorResponse(response, response.statusCode, body.error, label)
    }
  })

  it('an unexpected error is 500 internal_error, without its message, and is logged with the request id', async (t) => {
    const { app, key, logs } = await buildBrokenWriteApp(t, dialect)
    const product = await postJson(app, '/products', key, { name: 'Mug' }, 'trace-500')
    assertErrorResponse(product, 500, 'internal_error', 'POST /products')
    assert.equal(product.headers['x-request-id'], 'trace-500')
    const variant = await postJson(app, `/products/${randomUUID()}/variants`, key, {
      name: 'Red',
    })
    // Whether the product lookup runs in the failing write or not, nothing internal shows.
    assert.ok(variant.statusCode === 500 || variant.statusCode === 404, variant.body)
    assertNothingInternal(variant, 'POST variant')

    const logged = logs.find((line) => line.reqId === 'trace-500')
    assert.ok(logged, `no log line with the request id: ${JSON.stringify(logs)}`)
    assert.ok(Number(logged.level) >= 50, `logged at level ${String(logged.level)}`)
  })
})

describeEachDialect('X-Request-Id', (dialect) => {
  it('every response carries X-Request-Id and echoes a sane one the client sent (200, 400, 401, 403, 404, 413, 415)', async (t) => {
    const api = await buildTestApi(t, dialect)
    const readKey = await api.newKey({ scopes: ['read'] })
    const json = 'application/json'
    const cases: [number, RawRequest][] = [
      [200, { method: 'GET', url: '/products' }],
      [200, { url: '/products', contentType: json, payload: '{"name":"Mug"}' }],
      [400, { url: '/products', contentType: json, payload: '{"name":' }],
      [400, { url: '/products', contentType: json, payload: '{"price":-1}' }],
      [401, { method: 'GET', url: '/products', key: null }],
      [403, { url: '/products', key: readKey, contentType: json, payload: '{"name":"Mug"}' }],
      [404, { method: 'GET', url: '/nope' }],
      [404, { method: 'GET', url: `/products/${randomUUID()}` }],
      [
        413,
        {
          url: '/products',
          contentType: json,
          payload: JSON.stringify({ name: 'M', description: 'x'.repeat(300_000) }),
        },
      ],
      [415, { url: '/products', contentType: 'text/plain', payload: 'Mug' }],
      [200, { method: 'GET', url: '/healthz', key: null }],
    ]
    const generated = new Set<string>()
    for (const [status, request] of cases) {
      const label = `${status} ${request.method ?? 'POST'} ${request.url}`
      const echoed = await send(api, { ...request, requestId: 'abc-123' })
      assert.equal(echoed.statusCode, status, `${label}: ${echoed.body}`)
      assert.equal(echoed.headers['x-request-id'], 'abc-123', label)

      const own = await send(api, request)
      assert.equal(own.statusCode, status, `${label}: ${own.body}`)
      const id = own.headers['x-request-id']
      assert.equal(typeof id, 'string', `${label}: no X-Request-Id`)
      assert.match(id as string, SANE_REQUEST_ID, label)
      generated.add(id as string)
    }
    assert.equal(generated.size, cases.length, 'generated request ids repeat')
  })

  it('an insane X-Request-Id (too long, with spaces, or odd characters) is replaced by a generated one', async (t) => {
    const api = await buildTestApi(t, dialect)
    for (const insane of [
      'a'.repeat(129),
      'a'.repeat(5000),
      'has spaces in it',
      'abc 123',
      '<script>',
      'a"b',
      '',
    ]) {
      for (const request of [
        { method: 'GET', url: '/products' },
        { method: 'GET', url: '/products', key: null },
      ] as RawRequest[]) {
        const response = await send(api, { ...request, requestId: insane })
        const id = response.headers['x-request-id']
        assert.equal(typeof id, 'string', `${JSON.stringify(insane)}: no X-Request-Id`)
        assert.notEqual(id, insane)
        assert.match(id as string, SANE_REQUEST_ID, `${JSON.stringify(insane)} gave ${id}`)
      }
    }
  })

  it('a 500 response carries X-Request-Id, echoed or generated', async (t) => {
    const { app, key } = await buildBrokenWriteApp(t, dialect)
    const echoed = await postJson(app, '/products', key, { name: 'Mug' }, 'abc-123')
    assert.equal(echoed.statusCode, 500, echoed.body)
    assert.equal(echoed.headers['x-request-id'], 'abc-123')
    const generated = await postJson(app, '/products', key, { name: 'Mug' })
    assert.equal(generated.statusCode, 500, generated.body)
    assert.match(String(generated.headers['x-request-id']), SANE_REQUEST_ID)
  })

  it('a response while the database is gone carries X-Request-Id', async (t) => {
    const api = await buildTestApi(t, dialect)
    await api.database.close()
    for (const url of ['/products', '/readyz']) {
      const echoed = await send(api, { method: 'GET', url, requestId: 'abc-123' })
      assert.ok(echoed.statusCode >= 500, `${url}: ${echoed.statusCode} ${echoed.body}`)
      assert.equal(echoed.headers['x-request-id'], 'abc-123', url)
      const generated = await send(api, { method: 'GET', url })
      assert.match(String(generated.headers['x-request-id']), SANE_REQUEST_ID, url)
    }
  })
})

describeEachDialect('database unavailable', (dialect) => {
  it('when the database is gone, POST and GET answer 503 unavailable', async (t) => {
    const api = await buildTestApi(t, dialect)
    const product = await api.createProduct({ name: 'Mug' })
    await api.database.close()
    const responses: [string, LightMyRequestResponse][] = [
      ['POST /products', await api.post('/products', { name: 'Cup' })],
      ['POST variant', await api.post(`/products/${product.id}/variants`, { name: 'Red' })],
      ['GET /products/:id', await api.get(`/products/${product.id}`)],
      ['GET variants', await api.get(`/products/${product.id}/variants`)],
      ['GET /products', await api.get('/products')],
    ]
    for (const [label, response] of responses) {
      assertErrorResponse(response, 503, 'unavailable', label)
    }
  })

  it(
    'an unreachable PostgreSQL server answers 503 unavailable quickly',
    { skip: dialect !== 'postgres' && 'PostgreSQL only' },
    async (t) => {
      const database = createDatabase('postgres://postgres@127.0.0.1:1/test')
      t.after(() => database.close())
      const app = buildApp({ database })
      t.after(() => app.close())
      const key = `ck_${'A'.repeat(43)}`
      const started = Date.now()
      const post = await postJson(app, '/products', key, { name: 'Mug' })
      const get = await app.inject({
        method: 'GET',
        url: `${API}/products`,
        headers: { authorization: `Bearer ${key}` },
      })
      const elapsed = Date.now() - started
      assertErrorResponse(post, 503, 'unavailable', 'POST /products')
      assertErrorResponse(get, 503, 'unavailable', 'GET /products')
      assert.ok(elapsed < 5000, `took ${elapsed} ms`)
    },
  )

  it(
    'a PostgreSQL database that does not exist (dropped under the service) answers 503 unavailable',
    { skip: dialect !== 'postgres' && 'PostgreSQL only' },
    async (t) => {
      const url = new URL(process.env.TEST_POSTGRES_URL!)
      url.pathname = '/catalog_no_such_database'
      const database = createDatabase(url.toString())
      t.after(() => database.close())
      const app = buildApp({ database })
      t.after(() => app.close())
      const key = `ck_${'A'.repeat(43)}`
      const post = await postJson(app, '/products', key, { name: 'Mug' })
      assertErrorResponse(post, 503, 'unavailable', 'POST /products')
    },
  )
})
