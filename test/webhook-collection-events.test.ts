import assert from 'node:assert/strict'
import { it } from 'node:test'
import { startDispatcher } from '../src/webhooks/dispatcher.js'
import { createSender } from '../src/webhooks/sender.js'
import { readFeed } from './event-helpers.js'
import { buildTestApi, describeEachDialect } from './helpers.js'
import { startReceiver } from './webhook-receiver.js'

/**
 * Collection events through a real delivery: a receiver subscribed to `["*"]` gets them, and
 * the endpoint's deliveries name what each was about, for collection.products_changed (whose
 * object is `{collectionId, added, removed}`, no `id`) the collection itself.
 */
describeEachDialect('webhooks: collection events delivered, and their subject', (dialect) => {
  it('collection.products_changed names its collection, in the body, the feed and the deliveries', async (t) => {
    const api = await buildTestApi(t, dialect, { webhooks: { allowPrivate: true } })
    const receiver = await startReceiver(t)
    const created = await api.post('/webhook-endpoints', {
      url: `${receiver.url}/all`,
      events: ['*'],
    })
    assert.equal(created.statusCode, 200, created.body)
    const endpoint = created.json().data
    receiver.trust('/all', endpoint.secret)
    const sender = createSender({ timeoutMs: 5000, allowPrivate: true })
    t.after(() => sender.close())
    const dispatcher = startDispatcher({
      database: api.database,
      sender,
      timeoutMs: 5000,
      schedule: [1, 1],
    })
    t.after(() => dispatcher.stop())

    const product = await api.createProduct({ name: 'Linen Shirt' })
    let res = await api.post('/collections', { title: 'Summer' })
    assert.equal(res.statusCode, 200, res.body)
    const collection = res.json().data
    res = await api.post(`/collections/${collection.id}/products`, { product_ids: [product.id] })
    assert.equal(res.statusCode, 200, res.body)

    // The receiver got the three events, products_changed with its collection's id.
    await receiver.waitFor(3)
    const bodies = receiver.received.map((delivery) => JSON.parse(delivery.body))
    const changed = bodies.find((body) => body.type === 'collection.products_changed')
    assert.ok(changed, bodies.map((body) => body.type).join(', '))
    assert.deepEqual(changed.data.object, {
      collectionId: collection.id,
      added: [product.id],
      removed: [],
    })
    // The feed holds the same event.
    const feed = await readFeed(api, { query: 'type=collection.products_changed', atLeast: 1 })
    assert.deepEqual(
      feed.map((event) => [event.id, event.data.object]),
      [[changed.id, changed.data.object]],
    )

    // The deliveries list says what each event was about: never "undefined".
    res = await api.get(`/webhook-endpoints/${endpoint.id}/deliveries`)
    assert.equal(res.statusCode, 200, res.body)
    const subjects = Object.fromEntries(
      res
        .json()
        .data.map((delivery: { eventType: string; subject: unknown }) => [
          delivery.eventType,
          delivery.subject,
        ]),
    )
    assert.deepEqual(subjects, {
      'product.created': { id: product.id, name: 'Linen Shirt', sku: null },
      'collection.created': { id: collection.id, name: 'Summer', sku: null },
      'collection.products_changed': { id: collection.id, name: 'Summer', sku: null },
    })

    // Once the collection is deleted, its products_changed delivery still names its id.
    res = await api.delete(`/collections/${collection.id}`)
    assert.equal(res.statusCode, 200, res.body)
    res = await api.get(`/webhook-endpoints/${endpoint.id}/deliveries`)
    const after = res
      .json()
      .data.find(
        (delivery: { eventType: string }) => delivery.eventType === 'collection.products_changed',
      )
    assert.deepEqual(after.subject, { id: collection.id, name: '', sku: null })
  })
})
