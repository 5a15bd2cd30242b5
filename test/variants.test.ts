import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { it } from 'node:test'
import { addVariant, buildTestApi, describeEachDialect, expectError } from './helpers.js'
import { VARIANT_FIELDS } from './update-cases.js'

const ISO_WITH_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

/** Asserts a 400 validation_failed whose details name `field` (or a field under it). */
function expectInvalid(res: { statusCode: number; body: string }, field: string): void {
  const body = expectError(res, 400, 'validation_failed')
  assert.ok(
    body.details?.some((d) => d.field === field || d.field.startsWith(`${field}.`)),
    `details should name ${field}: ${res.body}`,
  )
}

describeEachDialect('POST /products/:id/variants', (dialect) => {
  it('answers 200 with {"data": variant} carrying every field, as sent', async (t) => {
    const api = await buildTestApi(t, dialect)
    const product = await api.createProduct({ name: 'T-Shirt', price: 20 })
    const res = await api.post(`/products/${product.id}/variants`, {
      name: 'Red / M',
      sku: 'TS-RED-M',
      barcode: '4006381333931',
      price: 21.5,
      compare_at_price: 25.0001,
      options: { color: 'Red', size: 'M' },
      position: 3,
    })
    assert.equal(res.statusCode, 200, res.body)
    assert.match(String(res.headers['content-type']), /^application\/json/)
    const body = res.json()
    assert.deepEqual(Object.keys(body), ['data'])
    const variant = body.data
    assert.deepEqual(Object.keys(variant).sort(), VARIANT_FIELDS)
    assert.match(variant.id, UUID)
    assert.equal(variant.productId, product.id)
    assert.equal(variant.name, 'Red / M')
    assert.equal(variant.sku, 'TS-RED-M')
    assert.equal(variant.barcode, '4006381333931')
    assert.equal(variant.price, 21.5)
    assert.equal(variant.compareAtPrice, 25.0001)
    assert.deepEqual(variant.options, { color: 'Red', size: 'M' })
    assert.equal(variant.position, 3)
    assert.match(variant.createdAt, ISO_WITH_MS)
    assert.match(variant.updatedAt, ISO_WITH_MS)
  })

  it('answers null sku, barcode and compareAtPrice and {} options when they are not sent', async (t) => {
    const api = await buildTestApi(t, dialect)
    const product = await api.createProduct({ name: 'Mug' })
    const variant = await addVariant(api, product.id, { name: 'Plain' })
    assert.equal(variant.sku, null)
    assert.equal(variant.barcode, null)
    assert.equal(variant.compareAtPrice, null)
    assert.deepEqual(variant.options, {})
    assert.equal(variant.position, 1)
    assert.match(variant.createdAt, ISO_WITH_MS)
    assert.match(variant.updatedAt, ISO_WITH_MS)
  })

  it('treats null optional fields as not sent', async (t) => {
    const api = await buildTestApi(t, dialect)
    const product = await api.createProduct({ name: 'Mug', price: 7.25 })
    const variant = await addVariant(api, product.id, {
      name: 'Plain',
      sku: null,
      barcode: null,
      price: null,
      compare_at_price: null,
      options: null,
      position: null,
    })
    assert.equal(variant.sku, null)
    assert.equal(variant.barcode, null)
    assert.equal(variant.price, 7.25)
    assert.equal(variant.compareAtPrice, null)
    assert.deepEqual(variant.options, {})
    assert.equal(variant.position, 1)
  })

  it('returns options with the same keys and values as sent', async (t) => {
    const api = await buildTestApi(t, dialect)
    const product = await api.createProduct({ name: 'Poster' })
    const options = {
      Größe: 'XL',
      'color name': 'Crème / brûlée',
      'a.b': 'with "quotes" and \\ backslash',
      emoji: '👕',
    }
    const variant = await addVariant(api, product.id, { name: 'Fancy', options })
    assert.deepEqual(variant.options, options)
    const read = (await api.get(`/products/${product.id}`)).json().data
    assert.deepEqual(read.variants[0].options, options)
  })

  it('shows the created variant in GET /products/:id and its variants list', async (t) => {
    const api = await buildTestApi(t, dialect)
    const product = await api.createProduct({ name: 'Hoodie', price: 40 })
    const variant = await addVariant(api, product.id, {
      name: 'Black / L',
      sku: 'HD-BLK-L',
      options: { color: 'Black', size: 'L' },
    })
    const res = await api.get(`/products/${product.id}`)
    assert.equal(res.statusCode, 200, res.body)
    assert.deepEqual(res.json().data.variants, [variant])
    const list = await api.get(`/products/${product.id}/variants`)
    assert.equal(list.statusCode, 200, list.body)
    assert.deepEqual(list.json().data, [variant])
  })

  it("defaults price to the product's price", async (t) => {
    const api = await buildTestApi(t, dialect)
    const product = await api.createProduct({ name: 'Cap', price: 12.5 })
    assert.equal((await addVariant(api, product.id, { name: 'Default' })).price, 12.5)
    assert.equal((await addVariant(api, product.id, { name: 'Null', price: null })).price, 12.5)
    const free = await api.createProduct({ name: 'Sticker' })
    assert.equal((await addVariant(api, free.id, { name: 'Default' })).price, 0)
  })

  it("takes an explicit price over the product's, 0 included", async (t) => {
    const api = await buildTestApi(t, dialect)
    const product = await api.createProduct({ name: 'Cap', price: 12.5 })
    assert.equal(
      (await addVariant(api, product.id, { name: 'Dear', price: 99.9999 })).price,
      99.9999,
    )
    assert.equal((await addVariant(api, product.id, { name: 'Free', price: 0 })).price, 0)
  })

  it('defaults position to 1 for the first variant, then one more than the highest', async (t) => {
    const api = await buildTestApi(t, dialect)
    const product = await api.createProduct({ name: 'Socks' })
    const positions = []
    for (const name of ['A', 'B', 'C'])
      positions.push((await addVariant(api, product.id, { name })).position)
    assert.deepEqual(positions, [1, 2, 3])
    assert.equal((await addVariant(api, product.id, { name: 'Ten', position: 10 })).position, 10)
    assert.equal((await addVariant(api, product.id, { name: 'Next' })).position, 11)
    assert.equal((await addVariant(api, product.id, { name: 'Low', position: 5 })).position, 5)
    assert.equal((await addVariant(api, product.id, { name: 'After low' })).position, 12)
  })

  it('defaults position to 1 after a single variant at explicit position 0', async (t) => {
    const api = await buildTestApi(t, dialect)
    const product = await api.createProduct({ name: 'Socks' })
    assert.equal((await addVariant(api, product.id, { name: 'Zero', position: 0 })).position, 0)
    assert.equal((await addVariant(api, product.id, { name: 'Next' })).position, 1)
  })

  it("counts only the product's own variants for the default position", async (t) => {
    const api = await buildTestApi(t, dialect)
    const busy = await api.createProduct({ name: 'Busy' })
    await addVariant(api, busy.id, { name: 'Far', position: 500 })
    const fresh = await api.createProduct({ name: 'Fresh' })
    assert.equal((await addVariant(api, fresh.id, { name: 'First' })).position, 1)
  })

  it('accepts explicit positions from 0 to 2147483647', async (t) => {
    const api = await buildTestApi(t, dialect)
    const product = await api.createProduct({ name: 'Socks' })
    for (const position of [0, 1, 7, 2147483647]) {
      const variant = await addVariant(api, product.id, { name: `At ${position}`, position })
      assert.equal(variant.position, position)
    }
  })

  it('refuses positions that are not integers from 0 to 2147483647 with 400', async (t) => {
    const api = await buildTestApi(t, dialect)
    const product = await api.createProduct({ name: 'Socks' })
    for (const position of [2147483648, -1, 1.5, '3', true, [1], {}]) {
      const res = await api.post(`/products/${product.id}/variants`, { name: 'Bad', position })
      expectInvalid(res, 'position')
    }
    assert.deepEqual((await api.get(`/products/${product.id}`)).json().data.variants, [])
  })

  it('refuses a sku already used by a variant of another product in the store with 409 duplicate_sku', async (t) => {
    const api = await buildTestApi(t, dialect)
    const first = await api.createProduct({ name: 'First' })
    const second = await api.createProduct({ name: 'Second' })
    await addVariant(api, first.id, { name: 'One', sku: 'SKU-1' })
    const sameProduct = await api.post(`/products/${first.id}/variants`, {
      name: 'Two',
      sku: 'SKU-1',
    })
    expectError(sameProduct, 409, 'duplicate_sku')
    const otherProduct = await api.post(`/products/${second.id}/variants`, {
      name: 'Two',
      sku: 'SKU-1',
    })
    expectError(otherProduct, 409, 'duplicate_sku')
    assert.equal((await api.get(`/products/${first.id}`)).json().data.variants.length, 1)
    assert.equal((await api.get(`/products/${second.id}`)).json().data.variants.length, 0)
  })

  it('accepts the same sku in another store', async (t) => {
    const api = await buildTestApi(t, dialect)
    const otherKey = await api.newKey({ store: 'store-b' })
    const mine = await api.createProduct({ name: 'Shared' })
    const theirs = await api.createProduct({ name: 'Shared' }, otherKey)
    await addVariant(api, mine.id, { name: 'Mine', sku: 'SAME' })
    const variant = await addVariant(api, theirs.id, { name: 'Theirs', sku: 'SAME' }, otherKey)
    assert.equal(variant.sku, 'SAME')
  })

  it('trims sku, so " ABC " and "ABC" are the same sku', async (t) => {
    const api = await buildTestApi(t, dialect)
    const product = await api.createProduct({ name: 'Trim' })
    const variant = await addVariant(api, product.id, { name: 'Padded', sku: ' ABC ' })
    assert.equal(variant.sku, 'ABC')
    const res = await api.post(`/products/${product.id}/variants`, { name: 'Bare', sku: 'ABC' })
    expectError(res, 409, 'duplicate_sku')
  })

  it('does not check product skus against variant skus', async (t) => {
    const api = await buildTestApi(t, dialect)
    const product = await api.createProduct({ name: 'Kettle', sku: 'KETTLE' })
    const variant = await addVariant(api, product.id, { name: 'Steel', sku: 'KETTLE' })
    assert.equal(variant.sku, 'KETTLE')
    const another = await api.createProduct({ name: 'Other kettle', sku: 'KETTLE' })
    assert.equal(another.sku, 'KETTLE')
  })

  it('refuses the same options in another key order on one product with 409 duplicate_options', async (t) => {
    const api = await buildTestApi(t, dialect)
    const product = await api.createProduct({ name: 'Shirt' })
    await addVariant(api, product.id, { name: 'Red M', options: { color: 'Red', size: 'M' } })
    const same = await api.post(`/products/${product.id}/variants`, {
      name: 'Again',
      sku: 'OTHER',
      options: { size: 'M', color: 'Red' },
    })
    expectError(same, 409, 'duplicate_options')
    assert.equal((await api.get(`/products/${product.id}`)).json().data.variants.length, 1)
  })

  it('names the sku when both the sku and the options are taken: 409 duplicate_sku, on add and on PATCH, on both databases', async (t) => {
    const api = await buildTestApi(t, dialect)
    const product = await api.createProduct({ name: 'Shirt' })
    await addVariant(api, product.id, { name: 'Red M', sku: 'RM', options: { color: 'Red' } })
    const both = { name: 'Again', sku: 'RM', options: { color: 'Red' } }
    expectError(await api.post(`/products/${product.id}/variants`, both), 409, 'duplicate_sku')
    const other = await addVariant(api, product.id, {
      name: 'Blue',
      sku: 'B',
      options: { color: 'Blue' },
    })
    const patched = await api.patch(`/products/${product.id}/variants/${other.id}`, {
      sku: 'RM',
      options: { color: 'Red' },
    })
    expectError(patched, 409, 'duplicate_sku')
    // Its own sku kept, another's options: the options are what is taken.
    const own = await api.patch(`/products/${product.id}/variants/${other.id}`, {
      sku: 'B',
      options: { color: 'Red' },
    })
    expectError(own, 409, 'duplicate_options')
  })

  it('accepts options that differ in a value, a name or the number of entries', async (t) => {
    const api = await buildTestApi(t, dialect)
    const product = await api.createProduct({ name: 'Shirt' })
    const sets = [
      { color: 'Red', size: 'M' },
      { color: 'Red', size: 'L' },
      { colour: 'Red', size: 'M' },
      { color: 'Red' },
      { color: 'Red', size: 'M', fit: 'Slim' },
    ]
    for (const [i, options] of sets.entries()) {
      assert.deepEqual(
        (await addVariant(api, product.id, { name: `V${i}`, options })).options,
        options,
      )
    }
  })

  it('accepts the same options on a different product', async (t) => {
    const api = await buildTestApi(t, dialect)
    const first = await api.createProduct({ name: 'First' })
    const second = await api.createProduct({ name: 'Second' })
    await addVariant(api, first.id, { name: 'Red', options: { color: 'Red' } })
    const variant = await addVariant(api, second.id, { name: 'Red', options: { color: 'Red' } })
    assert.deepEqual(variant.options, { color: 'Red' })
  })

  it('exempts variants without options from the options rule', async (t) => {
    const api = await buildTestApi(t, dialect)
    const product = await api.createProduct({ name: 'Plain' })
    await addVariant(api, product.id, { name: 'Omitted' })
    await addVariant(api, product.id, { name: 'Empty', options: {} })
    await addVariant(api, product.id, { name: 'Null', options: null })
    await addVariant(api, product.id, { name: 'Empty again', options: {} })
    const variants = (await api.get(`/products/${product.id}`)).json().data.variants
    assert.equal(variants.length, 4)
    for (const variant of variants) assert.deepEqual(variant.options, {})
  })

  it('accepts options at their bounds: 50 entries, 64-character names, 255-character values', async (t) => {
    const api = await buildTestApi(t, dialect)
    const product = await api.createProduct({ name: 'Bounds' })
    const fifty = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`o${i}`, `v${i}`]))
    assert.deepEqual(
      (await addVariant(api, product.id, { name: 'Fifty', options: fifty })).options,
      fifty,
    )
    const long = { ['k'.repeat(64)]: 'v'.repeat(255) }
    assert.deepEqual(
      (await addVariant(api, product.id, { name: 'Long', options: long })).options,
      long,
    )
  })

  it('refuses options out of bounds or of the wrong shape with 400', async (t) => {
    const api = await buildTestApi(t, dialect)
    const product = await api.createProduct({ name: 'Bounds' })
    const cases: Record<string, unknown> = {
      '51 entries': Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`o${i}`, 'v'])),
      'a 65-character name': { ['k'.repeat(65)]: 'v' },
      'an empty name': { '': 'v' },
      'a 256-character value': { size: 'v'.repeat(256) },
      'an empty value': { size: '' },
      'a number value': { size: 1 },
      'a null value': { size: null },
      'a boolean value': { size: true },
      'an object value': { size: { label: 'M' } },
      'an array': ['M'],
      'a string': 'size=M',
    }
    for (const [label, options] of Object.entries(cases)) {
      const res = await api.post(`/products/${product.id}/variants`, { name: 'Bad', options })
      assert.equal(res.statusCode, 400, `${label}: ${res.body}`)
      expectInvalid(res, 'options')
    }
    assert.deepEqual((await api.get(`/products/${product.id}`)).json().data.variants, [])
  })

  it('adds variants to draft, active and archived products', async (t) => {
    const api = await buildTestApi(t, dialect)
    for (const status of ['draft', 'active', 'archived']) {
      const product = await api.createProduct({ name: `Product ${status}`, status })
      assert.equal(product.status, status)
      const variant = await addVariant(api, product.id, { name: 'Only', sku: `SKU-${status}` })
      assert.equal(variant.productId, product.id)
    }
  })

  it('answers 404 not_found for an unknown product id', async (t) => {
    const api = await buildTestApi(t, dialect)
    await api.createProduct({ name: 'Exists' })
    const res = await api.post(`/products/${randomUUID()}/variants`, { name: 'Nowhere' })
    expectError(res, 404, 'not_found')
  })

  it('answers 404 not_found for a malformed product id', async (t) => {
    const api = await buildTestApi(t, dialect)
    for (const id of [
      'not-a-uuid',
      '123',
      'ffffffff-ffff-ffff-ffff-fffffffffffg',
      "1' or '1'='1",
    ]) {
      const res = await api.post(`/products/${encodeURIComponent(id)}/variants`, { name: 'Bad id' })
      expectError(res, 404, 'not_found')
    }
  })

  it("answers 404 not_found for another store's product and adds nothing to it", async (t) => {
    const api = await buildTestApi(t, dialect)
    const otherKey = await api.newKey({ store: 'store-b' })
    const theirs = await api.createProduct({ name: 'Theirs' }, otherKey)
    const res = await api.post(`/products/${theirs.id}/variants`, { name: 'Intruder', sku: 'X' })
    expectError(res, 404, 'not_found')
    const read = await api.get(`/products/${theirs.id}`, otherKey)
    assert.deepEqual(read.json().data.variants, [])
  })

  it('checks existence before conflicts: a duplicate sku sent to an unknown product is 404', async (t) => {
    const api = await buildTestApi(t, dialect)
    const product = await api.createProduct({ name: 'Exists' })
    await addVariant(api, product.id, { name: 'Taken', sku: 'TAKEN', options: { size: 'M' } })
    const res = await api.post(`/products/${randomUUID()}/variants`, {
      name: 'Clash',
      sku: 'TAKEN',
      options: { size: 'M' },
    })
    expectError(res, 404, 'not_found')
  })

  it('checks the body before existence: an invalid body sent to an unknown product is 400', async (t) => {
    const api = await buildTestApi(t, dialect)
    const unknown = randomUUID()
    expectInvalid(await api.post(`/products/${unknown}/variants`, { price: 5 }), 'name')
    expectInvalid(await api.post(`/products/not-a-uuid/variants`, { name: 42 }), 'name')
    expectError(await api.post(`/products/${unknown}/variants`, '{"name": '), 400, 'invalid_json')
  })

  it('answers 403 forbidden to a key with only read scope, even with a broken body', async (t) => {
    const api = await buildTestApi(t, dialect)
    const product = await api.createProduct({ name: 'Guarded' })
    const readKey = await api.newKey({ scopes: ['read'] })
    const path = `/products/${product.id}/variants`
    expectError(await api.post(path, { name: 'Valid' }, readKey), 403, 'forbidden')
    expectError(await api.post(path, '{not json', readKey), 403, 'forbidden')
    expectError(await api.post(path, { name: 123, position: -1 }, readKey), 403, 'forbidden')
    expectError(await api.post(`/products/${randomUUID()}/variants`, {}, readKey), 403, 'forbidden')
    assert.deepEqual((await api.get(`/products/${product.id}`, readKey)).json().data.variants, [])
  })

  it('refuses fields of the wrong type with 400: no coercion', async (t) => {
    const api = await buildTestApi(t, dialect)
    const product = await api.createProduct({ name: 'Strict' })
    const cases: [string, Record<string, unknown>][] = [
      ['name', { name: 123 }],
      ['name', { name: ['Red'] }],
      ['sku', { name: 'V', sku: 123 }],
      ['barcode', { name: 'V', barcode: 4006381333931 }],
      ['price', { name: 'V', price: '19.99' }],
      ['compare_at_price', { name: 'V', compare_at_price: '5' }],
    ]
    for (const [field, body] of cases) {
      expectInvalid(await api.post(`/products/${product.id}/variants`, body), field)
    }
    assert.deepEqual((await api.get(`/products/${product.id}`)).json().data.variants, [])
  })

  it('requires a name, trimmed, of 1 to 255 characters', async (t) => {
    const api = await buildTestApi(t, dialect)
    const product = await api.createProduct({ name: 'Names' })
    const path = `/products/${product.id}/variants`
    assert.equal((await addVariant(api, product.id, { name: '  Red  ' })).name, 'Red')
    assert.equal((await addVariant(api, product.id, { name: 'x' })).name, 'x')
    const longest = 'n'.repeat(255)
    assert.equal((await addVariant(api, product.id, { name: ` ${longest} ` })).name, longest)
    expectInvalid(await api.post(path, {}), 'name')
    expectInvalid(await api.post(path, { name: null }), 'name')
    expectInvalid(await api.post(path, { name: '' }), 'name')
    expectInvalid(await api.post(path, { name: ' \t\n ' }), 'name')
    expectInvalid(await api.post(path, { name: 'n'.repeat(256) }), 'name')
    assert.equal((await api.get(`/products/${product.id}`)).json().data.variants.length, 3)
  })

  it('refuses sku and barcode that are empty after trimming or longer than 255 characters', async (t) => {
    const api = await buildTestApi(t, dialect)
    const product = await api.createProduct({ name: 'Codes' })
    const path = `/products/${product.id}/variants`
    for (const field of ['sku', 'barcode']) {
      expectInvalid(await api.post(path, { name: 'V', [field]: '' }), field)
      expectInvalid(await api.post(path, { name: 'V', [field]: '   ' }), field)
      expectInvalid(await api.post(path, { name: 'V', [field]: 'c'.repeat(256) }), field)
      const variant = await addVariant(api, product.id, { name: 'V', [field]: 'c'.repeat(255) })
      assert.equal(variant[field], 'c'.repeat(255))
    }
  })

  it('refuses prices below 0, above 1,000,000,000 or with more than 4 decimals with 400', async (t) => {
    const api = await buildTestApi(t, dialect)
    const product = await api.createProduct({ name: 'Prices' })
    const path = `/products/${product.id}/variants`
    for (const field of ['price', 'compare_at_price']) {
      for (const amount of [-0.01, 1_000_000_000.0001, 1.23456]) {
        expectInvalid(await api.post(path, { name: 'V', [field]: amount }), field)
      }
    }
    const top = await addVariant(api, product.id, {
      name: 'Top',
      price: 1_000_000_000,
      compare_at_price: 0.0001,
    })
    assert.equal(top.price, 1_000_000_000)
    assert.equal(top.compareAtPrice, 0.0001)
  })

  it('ignores fields the request does not define', async (t) => {
    const api = await buildTestApi(t, dialect)
    const product = await api.createProduct({ name: 'Ignore' })
    const other = await api.createProduct({ name: 'Other' })
    const id = randomUUID()
    const variant = await addVariant(api, product.id, {
      name: 'V',
      id,
      productId: other.id,
      product_id: other.id,
      createdAt: '2000-01-01T00:00:00.000Z',
      color: 'Red',
    })
    assert.notEqual(variant.id, id)
    assert.equal(variant.productId, product.id)
    assert.notEqual(variant.createdAt, '2000-01-01T00:00:00.000Z')
    assert.equal('color' in variant, false)
  })

  it('refuses a default position past 2,147,483,647 with 400 on position, adding nothing', async (t) => {
    const api = await buildTestApi(t, dialect)
    const product = await api.createProduct({ name: 'Edge' })
    const last = await api.post(`/products/${product.id}/variants`, {
      name: 'Last',
      position: 2_147_483_647,
    })
    assert.equal(last.statusCode, 200, last.body)
    const next = await api.post(`/products/${product.id}/variants`, { name: 'Next' })
    const body = expectError(next, 400, 'validation_failed')
    assert.deepEqual(
      body.details?.map((d) => d.field),
      ['position'],
    )
    const explicit = await api.post(`/products/${product.id}/variants`, {
      name: 'Explicit',
      position: 5,
    })
    assert.equal(explicit.statusCode, 200, explicit.body)
    const variants = (await api.get(`/products/${product.id}/variants`)).json().data
    assert.deepEqual(
      variants.map((v: { name: string }) => v.name),
      ['Explicit', 'Last'],
    )
  })
})
