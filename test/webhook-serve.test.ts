import assert from 'node:assert/strict'
import { it } from 'node:test'
import { describeEachDialect } from './helpers.js'
import { create, createKey, databaseUrlFor, request, startServe } from './process-helpers.js'
import { startReceiver } from './webhook-receiver.js'

describeEachDialect('catalog serve delivers webhooks', (dialect) => {
  it('in its background: a live endpoint gets its events, a failing one is logged and counted; SIGTERM exits 0', async (t) => {
    const receiver = await startReceiver(t, (path) => (path === '/down' ? 500 : 200))
    const databaseUrl = await databaseUrlFor(t, dialect)
    const { key } = await createKey(databaseUrl, 'shop')
    const server = await startServe(t, {
      DATABASE_URL: databaseUrl,
      WEBHOOK_ALLOW_PRIVATE: '1',
      WEBHOOK_RETRY_SCHEDULE: '60',
      WEBHOOK_TIMEOUT_MS: '2000',
    })
    const live = await create(server, key, '/webhook-endpoints', {
      url: `${receiver.url}/live`,
      events: ['*'],
    })
    receiver.trust('/live', live.secret)
    const down = await create(server, key, '/webhook-endpoints', {
      url: `${receiver.url}/down`,
      events: ['product.created'],
    })
    receiver.trust('/down', down.secret)
    const product = await create(server, key, '/products', { name: 'Shirt' })
    await receiver.waitFor(2, 5000)
    const got = receiver.received.find((r) => r.path === '/live')!
    assert.equal(JSON.parse(got.body).data.object.id, product.id)
    await server.waitForOutput(/webhook delivery attempt failed/, 5000)
    const line = server
      .stdout()
      .split('\n')
      .find((l) => l.includes('webhook delivery attempt failed'))!
    const logged = JSON.parse(line)
    assert.equal(logged.endpointId, down.id)
    assert.equal(logged.eventId, got.id)
    assert.equal(logged.statusCode, 500)
    assert.ok(!server.stdout().includes(down.secret.slice(6)))
    assert.ok(!server.stdout().includes(live.secret.slice(6)))
    // An attempt is counted when its outcome is back from the sender's thread, a moment after
    // the receiver has the request.
    const counted = [
      /webhook_delivery_attempts_total\{outcome="succeeded"\} 1/,
      /webhook_delivery_attempts_total\{outcome="retry"\} 1/,
    ]
    let metrics = await request(server, 'GET', '/metrics')
    for (let i = 0; i < 50 && !counted.every((line) => line.test(metrics.body)); i++) {
      await new Promise((resolve) => setTimeout(resolve, 100))
      metrics = await request(server, 'GET', '/metrics')
    }
    for (const line of counted) assert.match(metrics.body, line)
    assert.match(metrics.body, /webhook_oldest_pending_delivery_age_seconds \d/)
    assert.deepEqual(receiver.rejected, [])
    assert.equal((await server.stop('SIGTERM')).code, 0)
  })
})
