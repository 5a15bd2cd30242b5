import assert from 'node:assert/strict'
import { it } from 'node:test'
import type { Dialect } from '../src/db/database.js'
import {
  addVariant,
  buildTestApi,
  describeEachDialect,
  expectError,
  type TestApi,
} from './helpers.js'
import { readFeed } from './event-helpers.js'

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/

/** The events after the ones already seen: `before` is how many there were. */
async function newEvents(api: TestApi, before: number, count: number) {
  const events = await readFeed(api, { atLeast: before + count })
  return events.slice(before)
}

/** Writes a change that appends an event, to show that nothing else was appended before it. */
async function marker(api: TestApi): Promise<string> {
  return (await api.createProduct({ name: 'Marker' })).id
}

/** Asserts that since `before` events, the only new one is the marker's. */
async function expectNoEventSince(api: TestApi, before: number, what: string) {
  const id = await marker(api)
  const events = await newEvents(api, before, 1)
  assert.deepEqual(
    events.map((event) => [event.type, event.data.object.id]),
    [['product.created', id]],
    `${what} appended an event`,
  )
}

function checkEnvelope(event: Record<string, any>, type: string) {
  assert.equal(event.type, type)
  assert.match(event.id, UUID)
  assert.match(event.createdAt, ISO)
}

const FULL_PRODUCT = {
  name: 'Linen Shirt',
  description: 'Washed linen',
  status: 'draft',
  price: 49.9,
  compare_at_price: 59.9,
  sku: 'LS-1',
  barcode: '0123',
  tax_rate: 20,
  vendor: 'Acme',
  product_type: 'Shirts',
  tags: ['Summer', 'linen'],
  images: [{ url: 'https://img.example/1.jpg', alt: 'front' }],
}

async function productWithEvents(dialect: Dialect, t: Parameters<typeof buildTestApi>[0]) {
  const api = await buildTestApi(t, dialect)
  const product = await api.createProduct(FULL_PRODUCT)
  const [created] = await readFeed(api, { atLeast: 1 })
  return { api, product, created: created! }
}

describeEachDialect('events of products', (dialect) => {
  it('a create appends product.created with the product as answered, without previousAttributes', async (t) => {
    const { product, created } = await productWithEvents(dialect, t)
    checkEnvelope(created, 'product.created')
    assert.deepEqual(created.data, { object: product })
  })

  it('a PATCH of plain fields appends product.updated: the product after, the old values of what changed', async (t) => {
    const { api, product } = await productWithEvents(dialect, t)
    const res = await api.patch(`/products/${product.id}`, {
      name: 'Linen Shirt II',
      price: 39.9,
      description: null,
      compare_at_price: null,
      tax_rate: 20,
      images: [],
    })
    assert.equal(res.statusCode, 200, res.body)
    const [event] = await newEvents(api, 1, 1)
    checkEnvelope(event!, 'product.updated')
    assert.deepEqual(event!.data, {
      object: res.json().data,
      previousAttributes: {
        name: 'Linen Shirt',
        price: 49.9,
        description: 'Washed linen',
        compareAtPrice: 59.9,
        images: [{ url: 'https://img.example/1.jpg', alt: 'front' }],
      },
    })
  })

  it('a PATCH of tags and slug (the transaction path) lists them; fields cleared with null list their old value', async (t) => {
    const { api, product } = await productWithEvents(dialect, t)
    const res = await api.patch(`/products/${product.id}`, {
      tags: ['autumn'],
      slug: 'linen-shirt-autumn',
      vendor: null,
      product_type: null,
      sku: null,
      barcode: null,
    })
    assert.equal(res.statusCode, 200, res.body)
    const [event] = await newEvents(api, 1, 1)
    checkEnvelope(event!, 'product.updated')
    assert.deepEqual(event!.data, {
      object: res.json().data,
      previousAttributes: {
        tags: ['Summer', 'linen'],
        slug: 'linen-shirt',
        vendor: 'Acme',
        productType: 'Shirts',
        sku: 'LS-1',
        barcode: '0123',
      },
    })
  })

  it('status transitions each append product.updated with the status before', async (t) => {
    const { api, product } = await productWithEvents(dialect, t)
    const answers = []
    for (const status of ['active', 'archived', 'draft']) {
      const res = await api.patch(`/products/${product.id}`, { status })
      assert.equal(res.statusCode, 200, res.body)
      answers.push(res.json().data)
    }
    const events = await newEvents(api, 1, 3)
    assert.deepEqual(
      events.map((event) => [event.type, event.data.previousAttributes, event.data.object]),
      [
        ['product.updated', { status: 'draft' }, answers[0]],
        ['product.updated', { status: 'active' }, answers[1]],
        ['product.updated', { status: 'archived' }, answers[2]],
      ],
    )
    assert.deepEqual(
      events.map((event) => event.data.object.version),
      [2, 3, 4],
    )
  })

  it('a PATCH that changes nothing appends no event', async (t) => {
    const { api, product } = await productWithEvents(dialect, t)
    for (const patch of [
      {},
      { name: 'Linen Shirt', price: 49.9 },
      { tags: ['Summer', 'linen', 'SUMMER'] },
      { status: 'draft' },
      { slug: 'linen-shirt' },
    ]) {
      const res = await api.patch(`/products/${product.id}`, patch)
      assert.equal(res.statusCode, 200, res.body)
      assert.equal(res.json().data.version, 1)
    }
    await expectNoEventSince(api, 1, 'a PATCH that changes nothing')
  })

  it('a refused write appends no event: 404, 412, 409 invalid_transition and duplicate_slug, 400', async (t) => {
    const { api, product } = await productWithEvents(dialect, t)
    const other = await api.createProduct({ name: 'Other' })
    await readFeed(api, { atLeast: 2 })
    await api.patch(`/products/${product.id}`, { status: 'archived' })
    await readFeed(api, { atLeast: 3 })
    const missing = '01937c2e-0000-7000-8000-000000000000'
    expectError(await api.patch(`/products/${missing}`, { name: 'x' }), 404, 'not_found')
    expectError(await api.delete(`/products/${missing}`), 404, 'not_found')
    expectError(
      await api.patch(`/products/${product.id}`, { name: 'x' }, { headers: { 'if-match': '"1"' } }),
      412,
      'precondition_failed',
    )
    expectError(
      await api.delete(`/products/${product.id}`, { headers: { 'if-match': '"1"' } }),
      412,
      'precondition_failed',
    )
    expectError(
      await api.patch(`/products/${product.id}`, { status: 'active', name: 'Renamed' }),
      409,
      'invalid_transition',
    )
    // Refused after the slug's counters were written: the whole unit goes, its event with it.
    expectError(
      await api.patch(`/products/${product.id}`, { slug: other.slug, name: 'Renamed' }),
      409,
      'duplicate_slug',
    )
    expectError(await api.patch(`/products/${product.id}`, { price: -1 }), 400, 'validation_failed')
    expectError(await api.post('/products', { name: '' }), 400, 'validation_failed')
    await expectNoEventSince(api, 3, 'a refused write')
  })

  it('a DELETE appends product.deleted with the product before, and no event for its variants', async (t) => {
    const { api, product } = await productWithEvents(dialect, t)
    await addVariant(api, product.id, { name: 'S', options: { size: 'S' } })
    await addVariant(api, product.id, { name: 'M', options: { size: 'M' } })
    const before = (await api.get(`/products/${product.id}`)).json().data
    const res = await api.delete(`/products/${product.id}`)
    assert.equal(res.statusCode, 200, res.body)
    const events = await newEvents(api, 1, 3)
    assert.deepEqual(
      events.map((event) => event.type),
      ['variant.created', 'variant.created', 'product.deleted'],
    )
    const { variants, ...withoutVariants } = before
    assert.equal(variants.length, 2)
    assert.deepEqual(events[2]!.data, { object: withoutVariants })
    await expectNoEventSince(api, 4, 'the delete')
  })

  it('a replay of an Idempotency-Key appends nothing; a stored error appends nothing either', async (t) => {
    const api = await buildTestApi(t, dialect)
    const send = (body: unknown, path = '/products') =>
      api.request('POST', path, { body, headers: { 'idempotency-key': `key-${path}` } })
    const first = await send({ name: 'Once' })
    const again = await send({ name: 'Once' })
    assert.equal(first.statusCode, 200, first.body)
    assert.equal(again.headers['idempotent-replayed'], 'true')
    const missing = '01937c2e-0000-7000-8000-000000000000'
    const refused = await send({ name: 'V' }, `/products/${missing}/variants`)
    expectError(refused, 404, 'not_found')
    const events = await readFeed(api, { atLeast: 1 })
    assert.deepEqual(
      events.map((event) => [event.type, event.data.object.id]),
      [['product.created', first.json().data.id]],
    )
    await expectNoEventSince(api, 1, 'a replay')
  })
})

describeEachDialect('events of variants', (dialect) => {
  it('variant.created, .updated and .deleted: the variant after (before, for deleted); the product gets no event', async (t) => {
    const { api, product } = await productWithEvents(dialect, t)
    const variant = await addVariant(api, product.id, {
      name: 'Blue / S',
      sku: 'V-1',
      barcode: 'B-1',
      price: 10,
      options: { color: 'Blue', size: 'S' },
      weight_grams: 200,
    })
    const patched = await api.patch(`/products/${product.id}/variants/${variant.id}`, {
      options: { color: 'Red', size: 'S' },
      sku: null,
      price: 12.5,
      weight_grams: null,
    })
    assert.equal(patched.statusCode, 200, patched.body)
    // The position takes the transaction path on PostgreSQL.
    const moved = await api.patch(`/products/${product.id}/variants/${variant.id}`, {
      position: 7,
      name: 'Red / S',
    })
    assert.equal(moved.statusCode, 200, moved.body)
    const before = (await api.get(`/products/${product.id}/variants/${variant.id}`)).json().data
    const deleted = await api.delete(`/products/${product.id}/variants/${variant.id}`)
    assert.equal(deleted.statusCode, 200, deleted.body)
    const events = await newEvents(api, 1, 4)
    assert.deepEqual(
      events.map((event) => event.type),
      ['variant.created', 'variant.updated', 'variant.updated', 'variant.deleted'],
    )
    checkEnvelope(events[0]!, 'variant.created')
    assert.deepEqual(events[0]!.data, { object: variant })
    assert.deepEqual(events[1]!.data, {
      object: patched.json().data,
      previousAttributes: {
        options: { color: 'Blue', size: 'S' },
        sku: 'V-1',
        price: 10,
        weightGrams: 200,
      },
    })
    assert.deepEqual(events[2]!.data, {
      object: moved.json().data,
      previousAttributes: { position: 1, name: 'Blue / S' },
    })
    assert.deepEqual(events[3]!.data, { object: before })
    // The product's version moved four times, with no product event.
    assert.equal((await api.get(`/products/${product.id}`)).json().data.version, 5)
  })

  it('a variant PATCH that changes nothing (options in another key order) and refused variant writes append nothing', async (t) => {
    const { api, product } = await productWithEvents(dialect, t)
    const a = await addVariant(api, product.id, {
      name: 'A',
      sku: 'A',
      options: { c: 'x', s: 'y' },
    })
    await addVariant(api, product.id, { name: 'B', sku: 'B', options: { c: 'z' } })
    await readFeed(api, { atLeast: 3 })
    const path = `/products/${product.id}/variants/${a.id}`
    const same = await api.patch(path, { options: { s: 'y', c: 'x' }, name: 'A' })
    assert.equal(same.statusCode, 200, same.body)
    assert.equal(same.json().data.version, 1)
    expectError(await api.patch(path, { sku: 'B' }), 409, 'duplicate_sku')
    expectError(await api.patch(path, { options: { c: 'z' } }), 409, 'duplicate_options')
    expectError(await api.patch(path, { sku: 'B', position: 3 }), 409, 'duplicate_sku')
    expectError(
      await api.patch(path, { name: 'x' }, { headers: { 'if-match': '"9"' } }),
      412,
      'precondition_failed',
    )
    expectError(
      await api.delete(path, { headers: { 'if-match': '"9"' } }),
      412,
      'precondition_failed',
    )
    expectError(
      await api.post(`/products/${product.id}/variants`, { name: 'C', sku: 'A' }),
      409,
      'duplicate_sku',
    )
    expectError(
      await api.post(`/products/${product.id}/variants`, { name: 'C', options: { c: 'z' } }),
      409,
      'duplicate_options',
    )
    const missing = '01937c2e-0000-7000-8000-000000000000'
    expectError(
      await api.patch(`/products/${product.id}/variants/${missing}`, { name: 'x' }),
      404,
      'not_found',
    )
    await expectNoEventSince(api, 3, 'a refused variant write')
  })
})

describeEachDialect('events and concurrent writes', (dialect) => {
  it('writes committed together (a group commit on SQLite) append one event each; a refused one none', async (t) => {
    const api = await buildTestApi(t, dialect)
    const product = await api.createProduct({ name: 'Base' })
    await addVariant(api, product.id, { name: 'Taken', sku: 'TAKEN' })
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        i % 5 === 4
          ? api.post(`/products/${product.id}/variants`, { name: `v${i}`, sku: 'TAKEN' })
          : api.post('/products', { name: `P${i}` }),
      ),
    )
    const created = answers.filter((res) => res.statusCode === 200).map((res) => res.json().data.id)
    assert.equal(created.length, 16)
    for (const res of answers.filter((res) => res.statusCode !== 200)) {
      expectError(res, 409, 'duplicate_sku')
    }
    const events = await readFeed(api, { atLeast: 18 })
    assert.equal(events.length, 18)
    assert.deepEqual(
      events
        .slice(2)
        .map((event) => event.data.object.id)
        .sort(),
      created.sort(),
    )
    assert.equal(new Set(events.map((event) => event.id)).size, 18)
  })

  it("concurrent PATCHes of one record: each event's previousAttributes are the values of the version before it", async (t) => {
    const api = await buildTestApi(t, dialect)
    const product = await api.createProduct({ name: 'Contended', price: 1 })
    const variant = await addVariant(api, product.id, { name: 'V', price: 1, sku: 'V0' })
    const patches = await Promise.all(
      Array.from({ length: 24 }, (_, i) =>
        i % 2 === 0
          ? api.patch(`/products/${product.id}`, { price: 100 + i, name: `Contended ${i}` })
          : api.patch(`/products/${product.id}/variants/${variant.id}`, {
              price: 100 + i,
              sku: `V${i}`,
            }),
      ),
    )
    for (const res of patches) assert.equal(res.statusCode, 200, res.body)
    const events = await readFeed(api, { atLeast: 26 })
    assert.equal(events.length, 26)
    for (const type of ['product.updated', 'variant.updated']) {
      const chain = events
        .filter((event) => event.type === type)
        .sort((a, b) => a.data.object.version - b.data.object.version)
      assert.equal(chain.length, 12)
      let before = type === 'product.updated' ? product : variant
      for (const event of chain) {
        // A product's version also moves with its variants' changes, which append no product event.
        if (type === 'variant.updated') assert.equal(event.data.object.version, before.version + 1)
        else assert.ok(event.data.object.version > before.version)
        for (const [field, old] of Object.entries(event.data.previousAttributes)) {
          assert.deepEqual(old, before[field], `${type} v${event.data.object.version} ${field}`)
        }
        assert.deepEqual(
          Object.keys(event.data.previousAttributes).sort(),
          type === 'product.updated' ? ['name', 'price'] : ['price', 'sku'],
        )
        before = event.data.object
      }
    }
  })
})
