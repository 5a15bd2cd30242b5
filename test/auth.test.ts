import assert from 'node:assert/strict'
import { createHash, randomInt } from 'node:crypto'
import { Agent, request as httpRequest } from 'node:http'
import { it } from 'node:test'
import type { InjectOptions, LightMyRequestResponse } from 'fastify'
import { createApiKey, revokeApiKey } from '../src/auth/api-key.service.js'
import { API, buildTestApi, describeEachDialect, expectError, type TestApi } from './helpers.js'

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'

/** A key of the right form that was never issued: `ck_` and 43 random base62 characters. */
function unknownWellFormedKey(): string {
  let body = ''
  for (let i = 0; i < 43; i++) body += BASE62[randomInt(62)]
  return `ck_${body}`
}

interface Endpoint {
  label: string
  method: 'GET' | 'POST'
  url: string
  body?: unknown
}

/** The five routes that need a key, against an existing product. */
function endpoints(productId: string): Endpoint[] {
  return [
    { label: 'POST /products', method: 'POST', url: `${API}/products`, body: { name: 'Mug' } },
    {
      label: 'POST /products/:id/variants',
      method: 'POST',
      url: `${API}/products/${productId}/variants`,
      body: { name: 'Red', sku: 'MUG-RED' },
    },
    { label: 'GET /products/:id', method: 'GET', url: `${API}/products/${productId}` },
    {
      label: 'GET /products/:id/variants',
      method: 'GET',
      url: `${API}/products/${productId}/variants`,
    },
    { label: 'GET /products', method: 'GET', url: `${API}/products` },
  ]
}

const postEndpoints = (productId: string) => endpoints(productId).filter((e) => e.method === 'POST')

/** Calls an endpoint with the given Authorization header (none when undefined). */
function call(
  api: TestApi,
  endpoint: Endpoint,
  authorization: string | undefined,
): Promise<LightMyRequestResponse> {
  const headers: Record<string, string> = {}
  if (authorization !== undefined) headers.authorization = authorization
  const options: InjectOptions = { method: endpoint.method, url: endpoint.url, headers }
  if (endpoint.body !== undefined) {
    headers['content-type'] = 'application/json'
    options.payload = JSON.stringify(endpoint.body)
  }
  return api.app.inject(options)
}

function assertUnauthorized(response: LightMyRequestResponse, label: string): void {
  assert.equal(response.statusCode, 401, `${label}: ${response.body}`)
  expectError(response, 401, 'unauthorized')
  const challenge = response.headers['www-authenticate']
  assert.equal(typeof challenge, 'string', `${label}: no WWW-Authenticate header`)
  assert.match(challenge as string, /^Bearer\b/, `${label}: WWW-Authenticate is ${challenge}`)
}

/** The store still holds only `productId`, with no variants: a refused request changed nothing. */
async function assertUntouched(api: TestApi, productId: string): Promise<void> {
  const list = await api.get('/products')
  assert.deepEqual(
    list.json().data.map((p: { id: string }) => p.id),
    [productId],
  )
  const variants = await api.get(`/products/${productId}/variants`)
  assert.deepEqual(variants.json().data, [])
}

/** Every endpoint refuses each Authorization header with 401, and nothing is written. */
async function assertRefusedEverywhere(api: TestApi, ...authorizations: (string | undefined)[]) {
  const product = await api.createProduct()
  for (const authorization of authorizations) {
    for (const endpoint of endpoints(product.id)) {
      assertUnauthorized(
        await call(api, endpoint, authorization),
        `${endpoint.label} with ${JSON.stringify(authorization)}`,
      )
    }
  }
  await assertUntouched(api, product.id)
}

describeEachDialect('authentication', (dialect) => {
  it('a request without an Authorization header is 401 unauthorized on every endpoint', async (t) => {
    const api = await buildTestApi(t, dialect)
    await assertRefusedEverywhere(api, undefined)
  })

  it('a scheme other than Bearer is 401 unauthorized on every endpoint', async (t) => {
    const api = await buildTestApi(t, dialect)
    await assertRefusedEverywhere(
      api,
      `Basic ${Buffer.from('user:pass').toString('base64')}`,
      `Token ${api.key}`,
      api.key,
    )
  })

  it('Bearer without a key is 401 unauthorized on every endpoint', async (t) => {
    const api = await buildTestApi(t, dialect)
    await assertRefusedEverywhere(api, 'Bearer', 'Bearer ')
  })

  it('a malformed key is 401 unauthorized on every endpoint', async (t) => {
    const api = await buildTestApi(t, dialect)
    const malformed = [
      'not-a-key',
      'ck_',
      'ck_short',
      `${api.key}x`,
      api.key.slice(0, -1),
      `xx_${api.key.slice(3)}`,
      `${api.key} extra`,
      'ck_' + '!'.repeat(43),
    ]
    await assertRefusedEverywhere(api, ...malformed.map((key) => `Bearer ${key}`))
  })

  it('an unknown well-formed key is 401 unauthorized on every endpoint', async (t) => {
    const api = await buildTestApi(t, dialect)
    await assertRefusedEverywhere(api, `Bearer ${unknownWellFormedKey()}`)
  })

  it('a revoked key is 401 unauthorized on every endpoint', async (t) => {
    const api = await buildTestApi(t, dialect)
    const created = await createApiKey(api.database, {
      store: 'store-a',
      scopes: ['read', 'write'],
    })
    assert.equal(await revokeApiKey(api.database, created.id), 'revoked')
    await assertRefusedEverywhere(api, `Bearer ${created.key}`)
  })

  it('revoking a key takes effect on the very next request', async (t) => {
    const api = await buildTestApi(t, dialect)
    const created = await createApiKey(api.database, {
      store: 'store-a',
      scopes: ['read', 'write'],
    })
    const product = await api.createProduct({ name: 'Mug' }, created.key)
    assert.equal((await api.get(`/products/${product.id}`, created.key)).statusCode, 200)
    await revokeApiKey(api.database, created.id)
    assertUnauthorized(await api.get(`/products/${product.id}`, created.key), 'GET after revoke')
    assertUnauthorized(
      await api.post('/products', { name: 'Cup' }, created.key),
      'POST after revoke',
    )
    // Other keys of the store are not affected.
    assert.equal((await api.get(`/products/${product.id}`)).statusCode, 200)
  })

  it('authentication is checked before the body: a broken, empty, oversized or non-JSON body without a key is 401', async (t) => {
    const api = await buildTestApi(t, dialect)
    const product = await api.createProduct()
    const bodies: { label: string; contentType?: string; payload?: string }[] = [
      { label: 'broken JSON', contentType: 'application/json', payload: '{"name":' },
      { label: 'empty body', contentType: 'application/json', payload: '' },
      { label: 'no body' },
      { label: 'text/plain', contentType: 'text/plain', payload: 'name=Mug' },
      {
        label: 'oversized',
        contentType: 'application/json',
        payload: JSON.stringify({ name: 'Mug', description: 'x'.repeat(300_000) }),
      },
    ]
    for (const endpoint of postEndpoints(product.id)) {
      for (const body of bodies) {
        const headers: Record<string, string> = {}
        if (body.contentType) headers['content-type'] = body.contentType
        const response = await api.app.inject({
          method: 'POST',
          url: endpoint.url,
          headers,
          ...(body.payload === undefined ? {} : { payload: body.payload }),
        })
        assertUnauthorized(response, `${endpoint.label} with ${body.label}`)
      }
    }
    await assertUntouched(api, product.id)
  })

  it('the Bearer scheme is case-insensitive (RFC 7235)', async (t) => {
    const api = await buildTestApi(t, dialect)
    const product = await api.createProduct()
    for (const scheme of ['bearer', 'BEARER', 'bEaReR']) {
      const read = await call(api, endpoints(product.id)[2]!, `${scheme} ${api.key}`)
      assert.equal(read.statusCode, 200, `${scheme}: ${read.body}`)
      const write = await call(api, endpoints(product.id)[0]!, `${scheme} ${api.key}`)
      assert.equal(write.statusCode, 200, `${scheme}: ${write.body}`)
    }
  })
})

describeEachDialect('scopes', (dialect) => {
  it('a key without the write scope gets 403 forbidden on both POST endpoints', async (t) => {
    const api = await buildTestApi(t, dialect)
    const product = await api.createProduct()
    for (const scopes of [['read'], []] as const) {
      const key = await api.newKey({ scopes: [...scopes] })
      for (const endpoint of postEndpoints(product.id)) {
        const response = await call(api, endpoint, `Bearer ${key}`)
        assert.equal(response.statusCode, 403, `${endpoint.label} [${scopes}]: ${response.body}`)
        expectError(response, 403, 'forbidden')
      }
    }
    await assertUntouched(api, product.id)
  })

  it('scope is checked before the body: a read-only key gets 403 even with a broken JSON body, an empty body, a wrong Content-Type or an oversized body', async (t) => {
    const api = await buildTestApi(t, dialect)
    const product = await api.createProduct()
    const readKey = await api.newKey({ scopes: ['read'] })
    const bodies: { label: string; contentType?: string; payload?: string }[] = [
      { label: 'broken JSON', contentType: 'application/json', payload: '{"name": "Mug",' },
      { label: 'empty body', contentType: 'application/json', payload: '' },
      { label: 'no body and no Content-Type' },
      { label: 'text/plain', contentType: 'text/plain', payload: '{"name":"Mug"}' },
      {
        label: 'form-urlencoded',
        contentType: 'application/x-www-form-urlencoded',
        payload: 'name=Mug',
      },
      { label: 'invalid fields', contentType: 'application/json', payload: '{"price":-1}' },
      {
        label: 'oversized',
        contentType: 'application/json',
        payload: JSON.stringify({ name: 'Mug', description: 'x'.repeat(300_000) }),
      },
    ]
    for (const endpoint of postEndpoints(product.id)) {
      for (const body of bodies) {
        const headers: Record<string, string> = { authorization: `Bearer ${readKey}` }
        if (body.contentType) headers['content-type'] = body.contentType
        const response = await api.app.inject({
          method: 'POST',
          url: endpoint.url,
          headers,
          ...(body.payload === undefined ? {} : { payload: body.payload }),
        })
        assert.equal(
          response.statusCode,
          403,
          `${endpoint.label} with ${body.label}: ${response.body}`,
        )
        expectError(response, 403, 'forbidden')
      }
    }
    await assertUntouched(api, product.id)
  })

  it('a read key can read all three GET endpoints', async (t) => {
    const api = await buildTestApi(t, dialect)
    const product = await api.createProduct({ name: 'Mug' })
    const variant = await api.post(`/products/${product.id}/variants`, { name: 'Red' })
    assert.equal(variant.statusCode, 200, variant.body)
    const readKey = await api.newKey({ scopes: ['read'] })

    const one = await api.get(`/products/${product.id}`, readKey)
    assert.equal(one.statusCode, 200, one.body)
    assert.equal(one.json().data.id, product.id)
    const variants = await api.get(`/products/${product.id}/variants`, readKey)
    assert.equal(variants.statusCode, 200, variants.body)
    assert.deepEqual(
      variants.json().data.map((v: { id: string }) => v.id),
      [variant.json().data.id],
    )
    const list = await api.get('/products', readKey)
    assert.equal(list.statusCode, 200, list.body)
    assert.deepEqual(
      list.json().data.map((p: { id: string }) => p.id),
      [product.id],
    )
  })

  it('a key with only the write scope can also read, and write', async (t) => {
    const api = await buildTestApi(t, dialect)
    const writeKey = await api.newKey({ scopes: ['write'] })
    const product = await api.createProduct({ name: 'Mug' }, writeKey)
    const variant = await api.post(`/products/${product.id}/variants`, { name: 'Red' }, writeKey)
    assert.equal(variant.statusCode, 200, variant.body)
    for (const path of [
      `/products/${product.id}`,
      `/products/${product.id}/variants`,
      '/products',
    ]) {
      const response = await api.get(path, writeKey)
      assert.equal(response.statusCode, 200, `${path}: ${response.body}`)
    }
  })
})

describeEachDialect('store isolation', (dialect) => {
  it("a key of store B gets 404 not_found, never 403, for store A's product on GET, GET variants and POST variant", async (t) => {
    const api = await buildTestApi(t, dialect)
    const product = await api.createProduct({ name: 'Mug' })
    const variant = await api.post(`/products/${product.id}/variants`, { name: 'Red' })
    assert.equal(variant.statusCode, 200, variant.body)
    for (const scopes of [['read', 'write'], ['read']] as const) {
      const keyB = await api.newKey({ store: 'store-b', scopes: [...scopes] })
      expectError(await api.get(`/products/${product.id}`, keyB), 404, 'not_found')
      expectError(await api.get(`/products/${product.id}/variants`, keyB), 404, 'not_found')
    }
    const writerB = await api.newKey({ store: 'store-b', scopes: ['read', 'write'] })
    const attempt = await api.post(
      `/products/${product.id}/variants`,
      { name: 'Blue', sku: 'B-1' },
      writerB,
    )
    expectError(attempt, 404, 'not_found')

    // Store A's product is as it was: one variant, the one store A made.
    const variants = await api.get(`/products/${product.id}/variants`)
    assert.deepEqual(
      variants.json().data.map((v: { id: string }) => v.id),
      [variant.json().data.id],
    )
  })

  it("store B's list does not include store A's products, and store A's does not include B's", async (t) => {
    const api = await buildTestApi(t, dialect)
    const keyB = await api.newKey({ store: 'store-b' })
    const productA = await api.createProduct({ name: 'Mug', status: 'active' })
    const productB = await api.createProduct({ name: 'Cup', status: 'active' }, keyB)

    for (const query of ['', '?status=active', '?limit=200']) {
      const listB = await api.get(`/products${query}`, keyB)
      assert.equal(listB.statusCode, 200, listB.body)
      assert.deepEqual(
        listB.json().data.map((p: { id: string }) => p.id),
        [productB.id],
      )
      const listA = await api.get(`/products${query}`)
      assert.deepEqual(
        listA.json().data.map((p: { id: string }) => p.id),
        [productA.id],
      )
    }
  })

  it("another store's slugs and variant skus do not collide with this store's", async (t) => {
    const api = await buildTestApi(t, dialect)
    const keyB = await api.newKey({ store: 'store-b' })
    const productA = await api.createProduct({ name: 'T-Shirt' })
    const productB = await api.createProduct({ name: 'T-Shirt' }, keyB)
    assert.equal(productA.slug, 't-shirt')
    assert.equal(productB.slug, 't-shirt')
    const variantA = await api.post(`/products/${productA.id}/variants`, { name: 'S', sku: 'TS-S' })
    assert.equal(variantA.statusCode, 200, variantA.body)
    const variantB = await api.post(
      `/products/${productB.id}/variants`,
      { name: 'S', sku: 'TS-S' },
      keyB,
    )
    assert.equal(variantB.statusCode, 200, variantB.body)
  })
})

describeEachDialect('API keys', (dialect) => {
  it('created keys start with ck_ and carry at least 128 bits of entropy', async (t) => {
    const api = await buildTestApi(t, dialect)
    const keys: string[] = []
    for (let i = 0; i < 32; i++) {
      keys.push((await createApiKey(api.database, { store: 'store-a', scopes: ['read'] })).key)
    }
    const seen = new Set<string>()
    for (const key of keys) {
      assert.match(key, /^ck_[0-9A-Za-z]+$/, key)
      const body = key.slice(3)
      // Each base62 character carries log2(62) bits.
      assert.ok(body.length * Math.log2(62) >= 128, `${key} has ${body.length} characters`)
      for (const char of body) seen.add(char)
    }
    assert.equal(new Set(keys).size, keys.length, 'keys repeat')
    // Random bodies use (nearly) the whole alphabet, not a narrow part of it.
    assert.ok(seen.size >= 55, `only ${seen.size} distinct characters in 32 keys`)
  })

  it('only the SHA-256 hash of a key is stored, never the secret', async (t) => {
    const api = await buildTestApi(t, dialect)
    const created = await createApiKey(api.database, {
      store: 'store-a',
      scopes: ['read', 'write'],
      name: 'ci',
    })
    const rows = await api.database.kysely.selectFrom('api_keys').selectAll().execute()
    const row = rows.find((r) => r.id === created.id)
    assert.ok(row, 'the key row is missing')
    assert.equal(row.key_hash, createHash('sha256').update(created.key).digest('hex'))
    const secretBody = created.key.slice(3)
    for (const storedRow of rows) {
      for (const [column, value] of Object.entries(storedRow)) {
        const text = value instanceof Date ? value.toISOString() : String(value)
        assert.ok(!text.includes(created.key), `column ${column} holds the secret`)
        // Nor any long run of it (a redacted form shows a few characters, no more).
        for (let i = 0; i + 12 <= secretBody.length; i++) {
          const run = secretBody.slice(i, i + 12)
          assert.ok(!text.includes(run), `column ${column} holds part of the secret: ${run}`)
        }
      }
    }
    // The stored key authenticates.
    assert.equal((await api.get('/products', created.key)).statusCode, 200)
  })

  it('keys that change on one keep-alive connection are each checked as their own', async (t) => {
    const api = await buildTestApi(t, dialect)
    const origin = await api.app.listen({ port: 0, host: '127.0.0.1' })
    const agent = new Agent({ keepAlive: true, maxSockets: 1 })
    t.after(() => agent.destroy())
    const sockets = new Set<unknown>()
    const send = (method: string, path: string, key: string, body?: unknown) =>
      new Promise<{ status: number; body: any }>((resolve, reject) => {
        const req = httpRequest(`${origin}${API}${path}`, {
          method,
          agent,
          headers: {
            authorization: `Bearer ${key}`,
            ...(body !== undefined && { 'content-type': 'application/json' }),
          },
        })
        req.on('socket', (socket) => sockets.add(socket))
        req.on('error', reject)
        req.on('response', (res) => {
          let text = ''
          res.setEncoding('utf8')
          res.on('data', (chunk: string) => (text += chunk))
          res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text) }))
        })
        req.end(body === undefined ? undefined : JSON.stringify(body))
      })
    const otherStore = await api.newKey({ store: 'store-b' })
    const readOnly = await api.newKey({ scopes: ['read'] })
    const created = await send('POST', '/products', api.key, { name: 'Mug' })
    assert.equal(created.status, 200)
    const id = created.body.data.id
    // Each key in turn on the same connection: its own store, its own scopes, its own fate.
    assert.equal((await send('GET', `/products/${id}`, otherStore)).status, 404, 'store-b')
    assert.equal((await send('GET', `/products/${id}`, api.key)).status, 200, 'store-a again')
    assert.equal((await send('POST', '/products', readOnly, { name: 'Cup' })).status, 403)
    assert.equal((await send('GET', `/products/${id}`, readOnly)).status, 200, 'read-only')
    const unknown = await send('GET', '/products', unknownWellFormedKey())
    assert.equal(unknown.status, 401, 'an unknown key after known ones')
    const listed = await send('GET', '/products', otherStore)
    assert.deepEqual(listed.body.data, [], 'store-b sees none of store-a')
    const [revokedId] = (
      await api.database.kysely
        .selectFrom('api_keys')
        .select('id')
        .where('store_id', '=', 'store-b')
        .execute()
    ).map((row) => row.id)
    assert.equal(await revokeApiKey(api.database, revokedId!), 'revoked')
    assert.equal((await send('GET', '/products', otherStore)).status, 401, 'revoked')
    assert.equal((await send('GET', `/products/${id}`, api.key)).status, 200, 'store-a at last')
    assert.equal(sockets.size, 1, 'every request went over one connection')
  })
})

describeEachDialect('GET /me', (dialect) => {
  it("answers any valid key's id, store and scopes, read-only keys included", async (t) => {
    const api = await buildTestApi(t, dialect)
    for (const scopes of [['read'], ['write'], ['read', 'write']] as const) {
      const made = await createApiKey(api.database, { store: 'store-me', scopes: [...scopes] })
      const res = await api.get('/me', made.key)
      assert.equal(res.statusCode, 200, res.body)
      assert.deepEqual(res.json(), {
        data: { keyId: made.id, store: 'store-me', scopes: [...scopes] },
      })
    }
  })

  it('is 401 without a key, with an unknown key or a revoked one', async (t) => {
    const api = await buildTestApi(t, dialect)
    const made = await createApiKey(api.database, { store: 'store-me', scopes: ['read'] })
    await revokeApiKey(api.database, made.id)
    for (const key of [unknownWellFormedKey(), made.key]) {
      expectError(await api.get('/me', key), 401, 'unauthorized')
    }
    const bare = await api.app.inject({ method: 'GET', url: `${API}/me` })
    expectError(bare, 401, 'unauthorized')
  })
})
