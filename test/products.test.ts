import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { it } from 'node:test'
import { buildApp } from '../src/app.js'
import { slugify } from '../src/slugs/slug.js'
import { API, buildTestApi, describeEachDialect, expectError, type TestApi } from './helpers.js'
import { PRODUCT_FIELDS } from './update-cases.js'

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
const ISO_UTC_MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/

/** Posts a product and asserts a 400 validation_failed whose details name `field`. */
async function expectInvalid(api: TestApi, body: unknown, field: string): Promise<void> {
  const res = await api.post('/products', body)
  const label = `POST /products ${JSON.stringify(body).slice(0, 120)}`
  let error
  try {
    error = expectError(res, 400, 'validation_failed')
  } catch (cause) {
    throw new Error(`${label}: ${(cause as Error).message}`)
  }
  const fields = (error.details ?? []).map((detail) => detail.field)
  assert.ok(fields.includes(field), `${label}: details ${JSON.stringify(fields)} lack ${field}`)
}

/** Whether `slug` is `base` itself or `base-N` with N >= 2, as the contract's suffixes are. */
function isSlugOf(slug: string, base: string): boolean {
  if (slug === base) return true
  const suffix = slug.startsWith(`${base}-`) ? slug.slice(base.length + 1) : ''
  return /^[1-9]\d*$/.test(suffix) && Number(suffix) >= 2
}

describeEachDialect('POST /products', (dialect) => {
  it('answers 200 application/json with a body that is exactly {"data": record}', async (t) => {
    const api = await buildTestApi(t, dialect)
    const res = await api.post('/products', { name: 'T-Shirt' })
    assert.equal(res.statusCode, 200)
    assert.match(String(res.headers['content-type']), /^application\/json\b/)
    const body = res.json()
    assert.deepEqual(Object.keys(body), ['data'])
    assert.equal(typeof body.data, 'object')
    assert.equal(body.data.name, 'T-Shirt')
  })

  it('returns every field of the record, each with its default when not sent', async (t) => {
    const api = await buildTestApi(t, dialect)
    const before = Date.now()
    const product = await api.createProduct({ name: 'T-Shirt' })
    const after = Date.now()
    assert.deepEqual(Object.keys(product).sort(), PRODUCT_FIELDS)
    assert.match(product.id, UUID)
    assert.equal(product.name, 'T-Shirt')
    assert.equal(product.slug, 't-shirt')
    assert.equal(product.status, 'draft')
    assert.equal(product.price, 0)
    assert.equal(product.compareAtPrice, null)
    assert.equal(product.sku, null)
    assert.equal(product.description, null)
    assert.equal(product.barcode, null)
    assert.equal(product.taxRate, null)
    assert.match(product.createdAt, ISO_UTC_MS)
    assert.match(product.updatedAt, ISO_UTC_MS)
    const createdAt = Date.parse(product.createdAt)
    assert.ok(
      createdAt >= before && createdAt <= after,
      `createdAt ${product.createdAt} is not now`,
    )
    assert.ok(Date.parse(product.updatedAt) >= createdAt)
  })

  it('takes snake_case fields in and returns them camelCase, as sent', async (t) => {
    const api = await buildTestApi(t, dialect)
    const product = await api.createProduct({
      name: 'Linen Shirt',
      description: 'Cool in summer.',
      status: 'active',
      price: 49.9,
      compare_at_price: 59.9,
      sku: 'LS-001',
      barcode: '4006381333931',
      tax_rate: 19,
    })
    assert.deepEqual(Object.keys(product).sort(), PRODUCT_FIELDS)
    assert.equal(product.name, 'Linen Shirt')
    assert.equal(product.slug, 'linen-shirt')
    assert.equal(product.description, 'Cool in summer.')
    assert.equal(product.status, 'active')
    assert.equal(product.price, 49.9)
    assert.equal(product.compareAtPrice, 59.9)
    assert.equal(product.sku, 'LS-001')
    assert.equal(product.barcode, '4006381333931')
    assert.equal(product.taxRate, 19)
    for (const snake of ['compare_at_price', 'tax_rate', 'created_at', 'updated_at']) {
      assert.equal(snake in product, false, `${snake} in the response`)
    }
  })

  it('creates the product in the status sent: draft, active or archived', async (t) => {
    const api = await buildTestApi(t, dialect)
    for (const status of ['draft', 'active', 'archived']) {
      const product = await api.createProduct({ name: `A ${status} product`, status })
      assert.equal(product.status, status)
    }
  })

  it('treats null for description, price, compare_at_price, sku, barcode and tax_rate as not sent', async (t) => {
    const api = await buildTestApi(t, dialect)
    for (const field of [
      'description',
      'price',
      'compare_at_price',
      'sku',
      'barcode',
      'tax_rate',
    ]) {
      const res = await api.post('/products', { name: 'T-Shirt', [field]: null })
      assert.equal(res.statusCode, 200, `${field}: null answered ${res.statusCode} ${res.body}`)
    }
    const product = await api.createProduct({
      name: 'T-Shirt',
      description: null,
      price: null,
      compare_at_price: null,
      sku: null,
      barcode: null,
      tax_rate: null,
    })
    assert.equal(product.price, 0)
    assert.equal(product.compareAtPrice, null)
    assert.equal(product.sku, null)
    assert.equal(product.description, null)
    assert.equal(product.barcode, null)
    assert.equal(product.taxRate, null)
  })

  it('treats status: null as not sent, giving draft', async (t) => {
    const api = await buildTestApi(t, dialect)
    const res = await api.post('/products', { name: 'T-Shirt', status: null })
    assert.equal(res.statusCode, 200, `status: null answered ${res.statusCode} ${res.body}`)
    assert.equal(res.json().data.status, 'draft')
  })

  it('ignores fields the request does not define, including slug, id, store_id and created_at', async (t) => {
    const api = await buildTestApi(t, dialect)
    const otherStore = await api.newKey({ store: 'store-b' })
    const sentId = randomUUID()
    const product = await api.createProduct({
      name: 'T-Shirt',
      slug: 'my-own-slug',
      id: sentId,
      store_id: 'store-b',
      storeId: 'store-b',
      created_at: '2000-01-01T00:00:00.000Z',
      createdAt: '2000-01-01T00:00:00.000Z',
      updated_at: '2000-01-01T00:00:00.000Z',
      variants: [{ name: 'Large' }],
      colour: 'red',
    })
    assert.deepEqual(Object.keys(product).sort(), PRODUCT_FIELDS)
    assert.equal(product.slug, 't-shirt')
    assert.notEqual(product.id, sentId)
    assert.match(product.id, UUID)
    assert.notEqual(product.createdAt.slice(0, 4), '2000')
    assert.notEqual(product.updatedAt.slice(0, 4), '2000')
    // It belongs to the key's store, not the one named in the body, and has no variants.
    const mine = await api.get(`/products/${product.id}`)
    assert.equal(mine.statusCode, 200)
    assert.deepEqual(mine.json().data.variants, [])
    expectError(await api.get(`/products/${product.id}`, otherStore), 404, 'not_found')
    expectError(await api.get(`/products/${sentId}`), 404, 'not_found')
    assert.deepEqual((await api.get('/products', otherStore)).json().data, [])
  })

  it('trims the name', async (t) => {
    const api = await buildTestApi(t, dialect)
    const product = await api.createProduct({ name: '  \t T-Shirt \n ' })
    assert.equal(product.name, 'T-Shirt')
    assert.equal(product.slug, 't-shirt')
  })

  it('refuses a missing, empty or whitespace-only name with 400 validation_failed on name', async (t) => {
    const api = await buildTestApi(t, dialect)
    await expectInvalid(api, {}, 'name')
    await expectInvalid(api, { price: 10 }, 'name')
    await expectInvalid(api, { name: '' }, 'name')
    await expectInvalid(api, { name: '   ' }, 'name')
    await expectInvalid(api, { name: ' \t\n ' }, 'name')
    await expectInvalid(api, { name: null }, 'name')
  })

  it('accepts a name of 255 characters after trimming and refuses 256', async (t) => {
    const api = await buildTestApi(t, dialect)
    const longest = 'a'.repeat(255)
    assert.equal((await api.createProduct({ name: longest })).name, longest)
    assert.equal((await api.createProduct({ name: `   ${longest}   ` })).name, longest)
    const cyrillic = 'ж'.repeat(255)
    assert.equal((await api.createProduct({ name: cyrillic })).name, cyrillic)
    await expectInvalid(api, { name: 'a'.repeat(256) }, 'name')
    await expectInvalid(api, { name: `  ${'a'.repeat(256)}  ` }, 'name')
  })

  it('trims sku and barcode and keeps them to 1 to 255 characters (Shopify bound)', async (t) => {
    const api = await buildTestApi(t, dialect)
    for (const [field, key] of [
      ['sku', 'sku'],
      ['barcode', 'barcode'],
    ] as const) {
      assert.equal((await api.createProduct({ name: 'A', [field]: '  AB-1  ' }))[key], 'AB-1')
      assert.equal((await api.createProduct({ name: 'A', [field]: 'X' }))[key], 'X')
      const longest = '7'.repeat(255)
      assert.equal((await api.createProduct({ name: 'A', [field]: longest }))[key], longest)
      assert.equal((await api.createProduct({ name: 'A', [field]: ` ${longest} ` }))[key], longest)
      await expectInvalid(api, { name: 'A', [field]: '7'.repeat(256) }, field)
      await expectInvalid(api, { name: 'A', [field]: '' }, field)
      await expectInvalid(api, { name: 'A', [field]: '   ' }, field)
    }
  })

  it('accepts a description of up to 20,000 characters, returned as sent, and refuses 20,001', async (t) => {
    const api = await buildTestApi(t, dialect)
    const longest = 'd'.repeat(20_000)
    assert.equal(
      (await api.createProduct({ name: 'A', description: longest })).description,
      longest,
    )
    const text = 'Line one.\nLine two: «quoted», 100% cotton ☺'
    assert.equal((await api.createProduct({ name: 'A', description: text })).description, text)
    await expectInvalid(api, { name: 'A', description: 'd'.repeat(20_001) }, 'description')
  })

  it('refuses a status other than draft, active or archived', async (t) => {
    const api = await buildTestApi(t, dialect)
    for (const status of ['published', 'Active', 'DRAFT', '', ' active']) {
      await expectInvalid(api, { name: 'A', status }, 'status')
    }
  })

  it('refuses a value of the wrong type for every field: types are strict', async (t) => {
    const api = await buildTestApi(t, dialect)
    const wrong: [field: string, value: unknown][] = [
      ['name', 123],
      ['name', true],
      ['name', ['T-Shirt']],
      ['name', { en: 'T-Shirt' }],
      ['description', 5],
      ['description', false],
      ['description', ['text']],
      ['status', 1],
      ['status', true],
      ['status', ['active']],
      ['price', '19.99'],
      ['price', '0'],
      ['price', true],
      ['price', [19.99]],
      ['price', { amount: 19.99 }],
      ['compare_at_price', '29.99'],
      ['compare_at_price', false],
      ['sku', 123],
      ['sku', true],
      ['sku', { code: 'A' }],
      ['barcode', 4006381333931],
      ['barcode', ['4006381333931']],
      ['tax_rate', '20'],
      ['tax_rate', true],
      ['tax_rate', {}],
    ]
    for (const [field, value] of wrong) {
      const body: Record<string, unknown> = { name: 'T-Shirt', [field]: value }
      await expectInvalid(api, body, field)
    }
  })

  it('returns price and compare_at_price exactly as sent, and reads them back the same', async (t) => {
    const api = await buildTestApi(t, dialect)
    const amounts = [19.99, 0.1, 0.2, 1234.5678, 999999999.9999, 1000000000, 0, 0.0001, 5, 0.3]
    for (const amount of amounts) {
      const product = await api.createProduct({
        name: `P ${amount}`,
        price: amount,
        compare_at_price: amount,
      })
      assert.equal(product.price, amount, `price ${amount} came back as ${product.price}`)
      assert.equal(product.compareAtPrice, amount, `compare_at_price ${amount}`)
      const read = (await api.get(`/products/${product.id}`)).json().data
      assert.equal(read.price, amount, `price ${amount} read back as ${read.price}`)
      assert.equal(read.compareAtPrice, amount, `compare_at_price ${amount} read back`)
    }
    // The JSON text itself carries the number as sent, not a rounding of it.
    const res = await api.post('/products', '{"name": "Text", "price": 1234.5678}')
    assert.match(res.body, /"price":1234\.5678[,}]/)
  })

  it('refuses a price or compare_at_price below 0, above 1,000,000,000 or with more than 4 decimals', async (t) => {
    const api = await buildTestApi(t, dialect)
    const bad = [-1, -0.0001, 1000000000.0001, 1000000001, 1e12, 0.00001, 1.23456, 19.99999]
    for (const field of ['price', 'compare_at_price']) {
      for (const amount of bad) await expectInvalid(api, { name: 'A', [field]: amount }, field)
    }
  })

  it('accepts tax_rate from 0 to 100, returned as sent, and refuses values outside', async (t) => {
    const api = await buildTestApi(t, dialect)
    for (const rate of [0, 7.5, 19, 20, 100]) {
      assert.equal((await api.createProduct({ name: 'A', tax_rate: rate })).taxRate, rate)
    }
    for (const rate of [-1, -0.01, 100.01, 101, 1000]) {
      await expectInvalid(api, { name: 'A', tax_rate: rate }, 'tax_rate')
    }
  })

  it('lists one details entry per problem, naming every bad field', async (t) => {
    const api = await buildTestApi(t, dialect)
    const res = await api.post('/products', {
      name: 123,
      description: 5,
      status: 'bogus',
      price: '19.99',
      compare_at_price: -1,
      sku: '',
      barcode: 'b'.repeat(256),
      tax_rate: 101,
    })
    const error = expectError(res, 400, 'validation_failed')
    const details = error.details ?? []
    for (const detail of details) {
      assert.deepEqual(Object.keys(detail).sort(), ['field', 'message'])
      assert.equal(typeof detail.message, 'string')
      assert.ok(detail.message.length > 0, `empty message for ${detail.field}`)
    }
    assert.deepEqual(details.map((detail) => detail.field).sort(), [
      'barcode',
      'compare_at_price',
      'description',
      'name',
      'price',
      'sku',
      'status',
      'tax_rate',
    ])
    // Nothing was created.
    assert.deepEqual((await api.get('/products')).json().data, [])
  })

  it('slugs the same name t-shirt, t-shirt-2, t-shirt-3 in one store', async (t) => {
    const api = await buildTestApi(t, dialect)
    const slugs = []
    for (let i = 0; i < 4; i++) slugs.push((await api.createProduct({ name: 'T-Shirt' })).slug)
    assert.deepEqual(slugs, ['t-shirt', 't-shirt-2', 't-shirt-3', 't-shirt-4'])
    // Names that give the same slug share its suffixes.
    assert.equal((await api.createProduct({ name: 't shirt' })).slug, 't-shirt-5')
  })

  it('starts the slugs of a name again at t-shirt in another store', async (t) => {
    const api = await buildTestApi(t, dialect)
    const otherStore = await api.newKey({ store: 'store-b' })
    await api.createProduct({ name: 'T-Shirt' })
    await api.createProduct({ name: 'T-Shirt' })
    assert.equal((await api.createProduct({ name: 'T-Shirt' }, otherStore)).slug, 't-shirt')
    assert.equal((await api.createProduct({ name: 'T-Shirt' }, otherStore)).slug, 't-shirt-2')
    assert.equal((await api.createProduct({ name: 'T-Shirt' })).slug, 't-shirt-3')
  })

  it('gives a name whose slug is already taken as a suffix (T-Shirt 2) a unique slug', async (t) => {
    const api = await buildTestApi(t, dialect)
    assert.equal((await api.createProduct({ name: 'T-Shirt' })).slug, 't-shirt')
    assert.equal((await api.createProduct({ name: 'T-Shirt' })).slug, 't-shirt-2')
    const second = await api.createProduct({ name: 'T-Shirt 2' })
    assert.match(second.slug, /^t-shirt-2-([2-9]|[1-9]\d+)$/)
    const third = await api.createProduct({ name: 'T-Shirt 2' })
    assert.match(third.slug, /^t-shirt-2-([2-9]|[1-9]\d+)$/)
    assert.notEqual(third.slug, second.slug)
    assert.equal((await api.createProduct({ name: 'T-Shirt' })).slug, 't-shirt-3')
  })

  it('gives a name its own slug when that is free, even after T-Shirt 2 took t-shirt-2', async (t) => {
    const api = await buildTestApi(t, dialect)
    assert.equal((await api.createProduct({ name: 'T-Shirt 2' })).slug, 't-shirt-2')
    // No product has t-shirt, so there is no collision and nothing to suffix.
    assert.equal((await api.createProduct({ name: 'T-Shirt' })).slug, 't-shirt')
  })

  it('skips t-shirt-2 for a new T-Shirt once T-Shirt 2 has it', async (t) => {
    const api = await buildTestApi(t, dialect)
    const taken = new Set<string>()
    const create = async (name: string) => {
      const { slug } = await api.createProduct({ name })
      assert.equal(taken.has(slug), false, `${name} got ${slug}, already taken`)
      taken.add(slug)
      return slug
    }
    assert.equal(await create('T-Shirt'), 't-shirt')
    assert.equal(await create('T-Shirt 2'), 't-shirt-2')
    assert.equal(await create('T-Shirt'), 't-shirt-3')
    assert.equal(await create('T-Shirt 5'), 't-shirt-5')
    assert.match(await create('T-Shirt'), /^t-shirt-([2-9]|[1-9]\d+)$/)
    assert.match(await create('T-Shirt'), /^t-shirt-([2-9]|[1-9]\d+)$/)
  })

  it('keeps every slug in the store unique, each the name slug or it with -N, N >= 2', async (t) => {
    const api = await buildTestApi(t, dialect)
    const names = [
      'T-Shirt',
      'T-Shirt 2',
      'T-Shirt',
      't shirt 2',
      'T-Shirt-2-2',
      'T-Shirt 3',
      'T-Shirt',
      'T-Shirt 2',
      'T-Shirt 1',
      'T-Shirt 02',
      'T-Shirt',
      '😀',
      'Product',
      'Product 2',
      '🎉',
      '!!!',
      'x'.repeat(120),
      'x'.repeat(120),
      'Crème Brûlée',
      'Creme Brulee',
    ]
    const slugs: string[] = []
    for (const name of names) {
      const { slug } = await api.createProduct({ name })
      const base = slugify(name)
      assert.ok(isSlugOf(slug, base), `${name} got ${slug}, which is neither ${base} nor ${base}-N`)
      slugs.push(slug)
    }
    assert.equal(new Set(slugs).size, slugs.length, `duplicate slugs: ${slugs.join(' ')}`)
    const listed = (await api.get('/products?limit=200')).json().data.map((p: any) => p.slug)
    assert.deepEqual([...listed].sort(), [...slugs].sort())
  })

  it('gives concurrent creations with the same name each a slug of their own', async (t) => {
    const api = await buildTestApi(t, dialect)
    const responses = await Promise.all(
      Array.from({ length: 12 }, () => api.post('/products', { name: 'T-Shirt' })),
    )
    for (const res of responses) assert.equal(res.statusCode, 200, res.body)
    const slugs = responses.map((res) => res.json().data.slug).sort()
    const expected = ['t-shirt', ...Array.from({ length: 11 }, (_, i) => `t-shirt-${i + 2}`)]
    assert.deepEqual(slugs, expected.sort())
  })

  it('can read the created product back by GET /products/:id with the same fields', async (t) => {
    const api = await buildTestApi(t, dialect)
    const created = await api.createProduct({
      name: 'Crème Brûlée',
      description: 'Vanilla.',
      status: 'archived',
      price: 7.5,
      compare_at_price: 9.25,
      sku: 'CB-1',
      barcode: '123456',
      tax_rate: 7,
    })
    const res = await api.get(`/products/${created.id}`)
    assert.equal(res.statusCode, 200)
    const { variants, ...read } = res.json().data
    assert.deepEqual(read, created)
    assert.deepEqual(variants, [])
  })

  it('stores the product before answering 200: a new app on the same database finds it', async (t) => {
    const api = await buildTestApi(t, dialect)
    const created = await api.createProduct({ name: 'Durable', price: 1.5, sku: 'D-1' })
    const fresh = buildApp({ database: api.database })
    t.after(() => fresh.close())
    const headers = { authorization: `Bearer ${api.key}` }
    const one = await fresh.inject({ method: 'GET', url: `${API}/products/${created.id}`, headers })
    assert.equal(one.statusCode, 200)
    const { variants, ...read } = one.json().data
    assert.deepEqual(read, created)
    assert.deepEqual(variants, [])
    const list = await fresh.inject({ method: 'GET', url: `${API}/products`, headers })
    assert.deepEqual(list.json().data, [created])
  })
})
