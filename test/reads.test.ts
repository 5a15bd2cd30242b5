import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { it } from 'node:test'
import {
  addVariant,
  buildTestApi,
  describeEachDialect,
  expectError,
  type TestApi,
  updatedAtAfter,
  walkPages,
} from './helpers.js'

type Product = Record<string, any>

/** Creates products one after another (so their order is known), oldest first. */
async function createProducts(
  api: TestApi,
  count: number,
  body: (i: number) => Record<string, unknown> = (i) => ({ name: `Product ${i}` }),
  key?: string,
): Promise<Product[]> {
  const products: Product[] = []
  for (let i = 0; i < count; i++) products.push(await api.createProduct(body(i), key))
  return products
}

/**
 * The product as its variants' additions left it: each raised its version, and the last set
 * its updatedAt to that variant's creation time.
 */
/** The product after adding `variants`, in the order given: each add moved its version and updatedAt. */
function afterAdding(product: Product, variants: Product[]): Product {
  return {
    ...product,
    version: product.version + variants.length,
    updatedAt: updatedAtAfter(product.updatedAt, ...variants.map((v) => v.createdAt)),
  }
}

function newestFirst(products: Product[]): Product[] {
  return [...products].reverse()
}

function expectNotFound(res: { statusCode: number; body: string }, label: string): void {
  try {
    expectError(res, 404, 'not_found')
  } catch (cause) {
    throw new Error(`${label}: ${(cause as Error).message}`)
  }
}

describeEachDialect('GET /products/:id', (dialect) => {
  it('returns the product record with an empty variants array when it has none', async (t) => {
    const api = await buildTestApi(t, dialect)
    const product = await api.createProduct({ name: 'T-Shirt', price: 19.99, status: 'active' })
    const res = await api.get(`/products/${product.id}`)
    assert.equal(res.statusCode, 200)
    assert.match(String(res.headers['content-type']), /^application\/json\b/)
    const body = res.json()
    assert.deepEqual(Object.keys(body), ['data'])
    assert.deepEqual(body.data, { ...product, variants: [] })
  })

  it('lists the variants by position, then by creation', async (t) => {
    const api = await buildTestApi(t, dialect)
    const product = await api.createProduct({ name: 'T-Shirt' })
    const c1 = await addVariant(api, product.id, { name: 'C1', position: 3 })
    const a1 = await addVariant(api, product.id, { name: 'A1', position: 1 })
    const b = await addVariant(api, product.id, { name: 'B', position: 2 })
    const a2 = await addVariant(api, product.id, { name: 'A2', position: 1 })
    const c2 = await addVariant(api, product.id, { name: 'C2', position: 3 })
    const z = await addVariant(api, product.id, { name: 'Z', position: 0 })
    const a3 = await addVariant(api, product.id, { name: 'A3', position: 1 })
    const res = await api.get(`/products/${product.id}`)
    assert.equal(res.statusCode, 200)
    const { variants, ...record } = res.json().data
    assert.deepEqual(record, afterAdding(product, [c1, a1, b, a2, c2, z, a3]))
    assert.deepEqual(
      variants.map((variant: Product) => variant.name),
      ['Z', 'A1', 'A2', 'A3', 'B', 'C1', 'C2'],
    )
    assert.deepEqual(variants, [z, a1, a2, a3, b, c1, c2])
  })

  it('answers 404 not_found for an unknown id', async (t) => {
    const api = await buildTestApi(t, dialect)
    await api.createProduct({ name: 'T-Shirt' })
    const id = randomUUID()
    expectNotFound(await api.get(`/products/${id}`), id)
    expectNotFound(await api.get(`/products/${id}/variants`), `${id}/variants`)
  })

  it('answers 404 not_found for a malformed id', async (t) => {
    const api = await buildTestApi(t, dialect)
    const product = await api.createProduct({ name: 'T-Shirt' })
    const malformed = [
      'not-a-uuid',
      '123',
      `${product.id}0`,
      product.id.slice(1),
      product.id.replaceAll('-', ''),
      `{${product.id}}`,
      encodeURIComponent(`${product.id}' or '1'='1`),
    ]
    for (const id of malformed) {
      expectNotFound(await api.get(`/products/${id}`), id)
      expectNotFound(await api.get(`/products/${id}/variants`), `${id}/variants`)
    }
  })

  it("answers 404 not_found, never 403, for another store's product", async (t) => {
    const api = await buildTestApi(t, dialect)
    const otherStore = await api.newKey({ store: 'store-b' })
    const otherReader = await api.newKey({ store: 'store-b', scopes: ['read'] })
    const product = await api.createProduct({ name: 'T-Shirt' })
    await addVariant(api, product.id, { name: 'Large' })
    for (const key of [otherStore, otherReader]) {
      expectNotFound(await api.get(`/products/${product.id}`, key), 'other store')
      expectNotFound(await api.get(`/products/${product.id}/variants`, key), 'other store')
      const upper = product.id.toUpperCase()
      expectNotFound(await api.get(`/products/${upper}`, key), 'other store, uppercase')
    }
  })

  it('finds a product by the uppercase form of its id', async (t) => {
    const api = await buildTestApi(t, dialect)
    const product = await api.createProduct({ name: 'T-Shirt' })
    const variant = await addVariant(api, product.id, { name: 'Large' })
    const upper = product.id.toUpperCase()
    assert.notEqual(upper, product.id)
    const one = await api.get(`/products/${upper}`)
    assert.equal(one.statusCode, 200, one.body)
    assert.deepEqual(one.json().data, { ...afterAdding(product, [variant]), variants: [variant] })
    const variants = await api.get(`/products/${upper}/variants`)
    assert.equal(variants.statusCode, 200, variants.body)
    assert.deepEqual(variants.json(), { data: [variant] })
  })

  it('lets a key with only read, or only write, read products', async (t) => {
    const api = await buildTestApi(t, dialect)
    const product = await api.createProduct({ name: 'T-Shirt' })
    const variant = await addVariant(api, product.id, { name: 'Large' })
    for (const scopes of [['read'], ['write']] as const) {
      const key = await api.newKey({ scopes: [...scopes] })
      const one = await api.get(`/products/${product.id}`, key)
      assert.equal(one.statusCode, 200, `${scopes}: ${one.body}`)
      assert.deepEqual(one.json().data, { ...afterAdding(product, [variant]), variants: [variant] })
      const variants = await api.get(`/products/${product.id}/variants`, key)
      assert.equal(variants.statusCode, 200, `${scopes}: ${variants.body}`)
      assert.deepEqual(variants.json(), { data: [variant] })
      const list = await api.get('/products', key)
      assert.equal(list.statusCode, 200, `${scopes}: ${list.body}`)
      assert.deepEqual(list.json(), { data: [afterAdding(product, [variant])], nextCursor: null })
    }
  })
})

describeEachDialect('GET /products/:id/variants', (dialect) => {
  it('returns {"data": []} for a product without variants', async (t) => {
    const api = await buildTestApi(t, dialect)
    const product = await api.createProduct({ name: 'T-Shirt' })
    const res = await api.get(`/products/${product.id}/variants`)
    assert.equal(res.statusCode, 200)
    assert.match(String(res.headers['content-type']), /^application\/json\b/)
    assert.deepEqual(res.json(), { data: [] })
  })

  it('returns {"data": [...]} by position, then by creation, as GET /products/:id does', async (t) => {
    const api = await buildTestApi(t, dialect)
    const product = await api.createProduct({ name: 'T-Shirt' })
    const other = await api.createProduct({ name: 'Other' })
    await addVariant(api, other.id, { name: 'Not mine', position: 0 })
    const second = await addVariant(api, product.id, { name: 'Second', position: 5 })
    const first = await addVariant(api, product.id, { name: 'First', position: 2 })
    const fourth = await addVariant(api, product.id, { name: 'Fourth', position: 9 })
    const third = await addVariant(api, product.id, { name: 'Third', position: 5 })
    const res = await api.get(`/products/${product.id}/variants`)
    assert.equal(res.statusCode, 200)
    const body = res.json()
    assert.deepEqual(Object.keys(body), ['data'])
    assert.deepEqual(body.data, [first, second, third, fourth])
    const one = (await api.get(`/products/${product.id}`)).json().data
    assert.deepEqual(one.variants, body.data)
  })
})

describeEachDialect('GET /products', (dialect) => {
  it('lists products newest first as {"data": [...], "nextCursor": null}', async (t) => {
    const api = await buildTestApi(t, dialect)
    const products = await createProducts(api, 4)
    const res = await api.get('/products')
    assert.equal(res.statusCode, 200)
    assert.match(String(res.headers['content-type']), /^application\/json\b/)
    const body = res.json()
    assert.deepEqual(Object.keys(body).sort(), ['data', 'nextCursor'])
    assert.deepEqual(body.data, newestFirst(products))
    assert.equal(body.nextCursor, null)
  })

  it('lists nothing, with nextCursor null, for a store without products', async (t) => {
    const api = await buildTestApi(t, dialect)
    assert.deepEqual((await api.get('/products')).json(), { data: [], nextCursor: null })
  })

  it('returns 50 products by default, with a cursor to the rest', async (t) => {
    const api = await buildTestApi(t, dialect)
    const products = await createProducts(api, 51)
    const first = await api.get('/products')
    assert.equal(first.statusCode, 200)
    const page = first.json()
    assert.equal(page.data.length, 50)
    assert.deepEqual(page.data, newestFirst(products).slice(0, 50))
    assert.equal(typeof page.nextCursor, 'string')
    const rest = (await api.get(`/products?cursor=${page.nextCursor}`)).json()
    assert.deepEqual(rest, { data: [products[0]], nextCursor: null })
  })

  it('takes limit from 1 to 200', async (t) => {
    const api = await buildTestApi(t, dialect)
    const products = await createProducts(api, 3)
    const one = (await api.get('/products?limit=1')).json()
    assert.deepEqual(one.data, [products[2]])
    assert.equal(typeof one.nextCursor, 'string')
    const all = (await api.get('/products?limit=200')).json()
    assert.deepEqual(all, { data: newestFirst(products), nextCursor: null })
    const exact = (await api.get('/products?limit=3')).json()
    assert.deepEqual(exact, { data: newestFirst(products), nextCursor: null })
  })

  it('refuses limit 0, 201 or one that is not a whole number with 400 on limit', async (t) => {
    const api = await buildTestApi(t, dialect)
    await api.createProduct({ name: 'T-Shirt' })
    for (const limit of ['0', '201', '-1', 'abc', '1.5', '', '1e3']) {
      const res = await api.get(`/products?limit=${limit}`)
      let error
      try {
        error = expectError(res, 400, 'validation_failed')
      } catch (cause) {
        throw new Error(`limit=${limit}: ${(cause as Error).message}`)
      }
      const fields = (error.details ?? []).map((detail) => detail.field)
      assert.ok(fields.includes('limit'), `limit=${limit}: details ${JSON.stringify(fields)}`)
    }
  })

  it('walks every product exactly once, newest first, ending with nextCursor null', async (t) => {
    const api = await buildTestApi(t, dialect)
    const products = await createProducts(api, 7)
    for (const limit of [1, 2, 3, 7]) {
      const pages = await walkPages(api, `limit=${limit}`)
      assert.equal(pages.length, Math.ceil(7 / limit), `pages at limit ${limit}`)
      for (const page of pages) assert.ok(page.data.length >= 1 && page.data.length <= limit)
      assert.equal(pages.at(-1)!.nextCursor, null)
      const walked = pages.flatMap((page) => page.data)
      assert.deepEqual(walked, newestFirst(products), `walk at limit ${limit}`)
    }
  })

  it('keeps a walk whole when products are created while it runs', async (t) => {
    const api = await buildTestApi(t, dialect)
    const products = await createProducts(api, 5)
    const first = (await api.get('/products?limit=2')).json()
    await createProducts(api, 2, (i) => ({ name: `Later ${i}` }))
    const rest = await walkPages(api, 'limit=2', undefined, first.nextCursor)
    const walked = [...first.data, ...rest.flatMap((page) => page.data)]
    assert.deepEqual(walked, newestFirst(products))
  })

  it('filters by status, and pages within the filter', async (t) => {
    const api = await buildTestApi(t, dialect)
    const statuses = [
      'active',
      'draft',
      'active',
      'archived',
      'active',
      'draft',
      'active',
      'active',
    ]
    const products = await createProducts(api, statuses.length, (i) => ({
      name: `Product ${i}`,
      status: statuses[i],
    }))
    for (const status of ['active', 'draft', 'archived']) {
      const expected = newestFirst(products.filter((product) => product.status === status))
      const all = (await api.get(`/products?status=${status}`)).json()
      assert.deepEqual(all, { data: expected, nextCursor: null }, status)
      const pages = await walkPages(api, `status=${status}&limit=2`)
      assert.equal(pages.length, Math.ceil(expected.length / 2), `pages of ${status}`)
      assert.deepEqual(
        pages.flatMap((page) => page.data),
        expected,
        `walk of ${status}`,
      )
    }
  })

  it('refuses an unknown status with 400 validation_failed on status', async (t) => {
    const api = await buildTestApi(t, dialect)
    for (const status of ['published', 'Active', 'DRAFT', '']) {
      const res = await api.get(`/products?status=${status}`)
      let error
      try {
        error = expectError(res, 400, 'validation_failed')
      } catch (cause) {
        throw new Error(`status=${status}: ${(cause as Error).message}`)
      }
      const fields = (error.details ?? []).map((detail) => detail.field)
      assert.ok(fields.includes('status'), `status=${status}: details ${JSON.stringify(fields)}`)
    }
  })

  it('refuses a cursor it did not make with 400 validation_failed on cursor', async (t) => {
    const api = await buildTestApi(t, dialect)
    await createProducts(api, 3)
    const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url')
    const id = randomUUID()
    const invalid = [
      'abc',
      'not a cursor!',
      '',
      '%00',
      encode('hello'),
      encode({}),
      encode([]),
      encode([1, 2]),
      encode(['2026-01-01T00:00:00.000Z']),
      encode(['2026-01-01T00:00:00.000Z', 'not-a-uuid']),
      encode(['not a date', id]),
      encode(['2026-01-01T00:00:00.000Z', id, 'extra']),
      encode({ createdAt: '2026-01-01T00:00:00.000Z', id }),
    ]
    for (const cursor of invalid) await expectCursorRefused(api, cursor)
  })

  it('refuses a tampered cursor with 400 validation_failed on cursor, never 500', async (t) => {
    const api = await buildTestApi(t, dialect)
    const products = await createProducts(api, 3)
    const cursor: string = (await api.get('/products?limit=1')).json().nextCursor
    const flip = (text: string, at: number) =>
      text.slice(0, at) + (text[at] === 'A' ? 'B' : 'A') + text.slice(at + 1)
    const tampered = [
      cursor.slice(0, -3),
      cursor.slice(3),
      `${cursor}A`,
      `${cursor}==`,
      flip(cursor, 0),
      flip(cursor, Math.floor(cursor.length / 2)),
      `${cursor.slice(0, 10)}!${cursor.slice(11)}`,
    ]
    for (const bad of tampered) await expectCursorRefused(api, bad)
    // The untouched cursor still works.
    const rest = (await api.get(`/products?cursor=${cursor}`)).json()
    assert.deepEqual(rest.data, [products[1], products[0]])
  })

  it('refuses a cursor edited to a date outside what a database stores with 400, never 500', async (t) => {
    const api = await buildTestApi(t, dialect)
    await createProducts(api, 3)
    const cursor: string = (await api.get('/products?limit=1')).json().nextCursor
    const [, id] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'))
    const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url')
    // Each is what new Date(...).toISOString() writes, so only its date is out of range.
    const answers: string[] = []
    for (const createdAt of [
      '-271821-04-20T00:00:00.000Z',
      '+275760-09-13T00:00:00.000Z',
      '0000-01-01T00:00:00.000Z',
    ]) {
      const res = await api.get(`/products?cursor=${encode([createdAt, id])}`)
      answers.push(`${createdAt}: ${res.statusCode} ${res.body}`)
      if (res.statusCode === 400) await expectCursorRefused(api, encode([createdAt, id]))
    }
    assert.ok(
      answers.every((answer) => answer.includes(': 400 ')),
      `expected 400 validation_failed for each:\n${answers.join('\n')}`,
    )
  })

  it("never lists another store's products", async (t) => {
    const api = await buildTestApi(t, dialect)
    const otherStore = await api.newKey({ store: 'store-b' })
    const theirs = await createProducts(
      api,
      3,
      (i) => ({ name: `Theirs ${i}`, status: 'active' }),
      otherStore,
    )
    const mine = await createProducts(api, 3, (i) => ({ name: `Mine ${i}`, status: 'active' }))
    assert.deepEqual((await api.get('/products')).json().data, newestFirst(mine))
    assert.deepEqual((await api.get('/products', otherStore)).json().data, newestFirst(theirs))
    const mineActive = await walkPages(api, 'status=active&limit=1')
    assert.deepEqual(
      mineActive.flatMap((page) => page.data),
      newestFirst(mine),
    )
    const theirsActive = await walkPages(api, 'status=active&limit=2', otherStore)
    assert.deepEqual(
      theirsActive.flatMap((page) => page.data),
      newestFirst(theirs),
    )
    // A cursor from one store's list, used by the other store, pages through only its own.
    const cursor = (await api.get('/products?limit=1')).json().nextCursor
    const fromMyCursor = await walkPages(api, 'limit=1', otherStore, cursor)
    assert.deepEqual(
      fromMyCursor.flatMap((page) => page.data),
      newestFirst(theirs),
    )
  })
})

async function expectCursorRefused(api: TestApi, cursor: string): Promise<void> {
  const res = await api.get(`/products?cursor=${encodeURIComponent(cursor)}`)
  let error
  try {
    error = expectError(res, 400, 'validation_failed')
  } catch (cause) {
    throw new Error(`cursor ${JSON.stringify(cursor)}: ${(cause as Error).message}`)
  }
  const fields = (error.details ?? []).map((detail) => detail.field)
  assert.ok(fields.includes('cursor'), `cursor ${cursor}: details ${JSON.stringify(fields)}`)
}
