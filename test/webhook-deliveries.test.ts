import assert from 'node:assert/strict'
import { it } from 'node:test'
import { buildTestApi, describeEachDialect, type TestApi } from './helpers.js'
import { readFeed } from './event-helpers.js'

/** Deliveries are never sent in these tests: no dispatcher runs. */
const URL = 'http://127.0.0.1:9/hooks'

async function createEndpoint(api: TestApi, body: Record<string, unknown>, key?: string) {
  const res = await api.post('/webhook-endpoints', { url: URL, ...body }, key)
  assert.equal(res.statusCode, 200, res.body)
  return res.json().data as { id: string }
}

/** Every delivery in the database: [endpoint id, event id, event type, status]. */
async function deliveries(api: TestApi) {
  const rows = await api.database.kysely
    .selectFrom('webhook_deliveries')
    .select(['store_id', 'endpoint_id', 'event_id', 'event_type', 'status', 'attempts'])
    .execute()
  return rows.map((row) => ({ ...row, event_id: String(row.event_id) }))
}

/** Makes one event of each type in the key's store; answers the feed's events. */
async function everyEventType(api: TestApi, key?: string) {
  const product = await api.createProduct({ name: 'Shirt' }, key)
  const options = key === undefined ? {} : { key }
  let res = await api.patch(`/products/${product.id}`, { name: 'Shirt 2' }, options)
  assert.equal(res.statusCode, 200, res.body)
  res = await api.post(
    `/products/${product.id}/variants`,
    { name: 'S', sku: `S-${product.id}` },
    key,
  )
  assert.equal(res.statusCode, 200, res.body)
  const variant = res.json().data
  res = await api.patch(`/products/${product.id}/variants/${variant.id}`, { name: 'M' }, options)
  assert.equal(res.statusCode, 200, res.body)
  res = await api.delete(`/products/${product.id}/variants/${variant.id}`, options)
  assert.equal(res.statusCode, 200, res.body)
  res = await api.delete(`/products/${product.id}`, options)
  assert.equal(res.statusCode, 200, res.body)
}

describeEachDialect('webhook deliveries: enqueued with their event', (dialect) => {
  it('each event goes to the enabled endpoints subscribed to its type, in its store', async (t) => {
    const api = await buildTestApi(t, dialect, { webhooks: { allowPrivate: true } })
    const all = await createEndpoint(api, { events: ['*'] })
    const products = await createEndpoint(api, {
      events: ['product.created', 'product.updated', 'product.deleted'],
    })
    const variantUpdates = await createEndpoint(api, { events: ['variant.updated'] })
    const disabled = await createEndpoint(api, { events: ['*'] })
    let res = await api.patch(`/webhook-endpoints/${disabled.id}`, { enabled: false })
    assert.equal(res.statusCode, 200, res.body)
    const deleted = await createEndpoint(api, { events: ['*'] })
    res = await api.delete(`/webhook-endpoints/${deleted.id}`)
    assert.equal(res.statusCode, 200, res.body)
    const otherKey = await api.newKey({ store: 'store-b' })
    const otherStore = await createEndpoint(api, { events: ['*'] }, otherKey)

    await everyEventType(api)
    const events = await readFeed(api, { atLeast: 6 })
    assert.equal(events.length, 6)
    const rows = await deliveries(api)
    const got = (endpoint: string) =>
      rows
        .filter((row) => row.endpoint_id === endpoint)
        .map((row) => `${row.event_type} ${row.event_id}`)
        .sort()
    const expected = (types: string[]) =>
      events
        .filter((e) => types.includes(e.type) || types.includes('*'))
        .map((e) => `${e.type} ${e.id}`)
        .sort()
    assert.deepEqual(got(all.id), expected(['*']))
    assert.deepEqual(
      got(products.id),
      expected(['product.created', 'product.updated', 'product.deleted']),
    )
    assert.deepEqual(got(variantUpdates.id), expected(['variant.updated']))
    assert.deepEqual(got(disabled.id), [])
    assert.deepEqual(got(deleted.id), [])
    assert.deepEqual(got(otherStore.id), [])
    for (const row of rows) {
      assert.equal(row.store_id, 'store-a')
      assert.equal(row.status, 'pending')
      assert.equal(row.attempts, 0)
    }
    assert.equal(rows.length, 6 + 3 + 1)
  })

  it('an endpoint created after an event does not get it; deleting one drops its deliveries', async (t) => {
    const api = await buildTestApi(t, dialect, { webhooks: { allowPrivate: true } })
    const first = await createEndpoint(api, { events: ['*'] })
    await api.createProduct({ name: 'Before' })
    const second = await createEndpoint(api, { events: ['*'] })
    await api.createProduct({ name: 'After' })
    const rows = await deliveries(api)
    assert.equal(rows.filter((row) => row.endpoint_id === first.id).length, 2)
    assert.equal(rows.filter((row) => row.endpoint_id === second.id).length, 1)
    const res = await api.delete(`/webhook-endpoints/${first.id}`)
    assert.equal(res.statusCode, 200, res.body)
    assert.deepEqual(
      (await deliveries(api)).map((row) => row.endpoint_id),
      [second.id],
    )
  })

  it('a delivery id is a UUID version 7 with the time of its event, distinct for each endpoint', async (t) => {
    const api = await buildTestApi(t, dialect, { webhooks: { allowPrivate: true } })
    await createEndpoint(api, { events: ['*'] })
    await createEndpoint(api, { events: ['*'] })
    for (let i = 0; i < 3; i++) await api.createProduct({ name: `Shirt ${i}` })
    const rows = await api.database.kysely
      .selectFrom('webhook_deliveries')
      .select(['id', 'event_id'])
      .execute()
    assert.equal(rows.length, 6)
    const ids = rows.map((row) => String(row.id))
    assert.equal(new Set(ids).size, 6)
    for (const row of rows) {
      const id = String(row.id)
      assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
      // The first 48 bits, the time in ms, are the event's.
      assert.equal(id.slice(0, 13), String(row.event_id).slice(0, 13))
    }
  })

  it('a write that fails enqueues nothing', async (t) => {
    const api = await buildTestApi(t, dialect, { webhooks: { allowPrivate: true } })
    await createEndpoint(api, { events: ['*'] })
    const product = await api.createProduct({ name: 'Shirt' })
    let res = await api.post(`/products/${product.id}/variants`, { name: 'S', sku: 'DUP' })
    assert.equal(res.statusCode, 200, res.body)
    res = await api.post(`/products/${product.id}/variants`, { name: 'M', sku: 'DUP' })
    assert.equal(res.statusCode, 409, res.body)
    assert.equal((await deliveries(api)).length, 2)
  })
})
