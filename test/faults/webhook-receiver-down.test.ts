import assert from 'node:assert/strict'
import { it } from 'node:test'
import { describeEachDialect } from '../helpers.js'
import { createKey, startServe } from '../process-helpers.js'
import { startReceiver } from '../webhook-receiver.js'
import { sleep, startCatalogLoad, tally } from './load.js'
import { scratchDatabaseUrl } from './scratch-database.js'
import {
  acknowledgedIds,
  receipts,
  settledDeliveries,
  subscribe,
  waitForDeliveries,
  webhookEnv,
} from './webhooks.js'

const CLIENTS = 4
/**
 * How long the receiver is down: shorter than the short schedule's 1+1+2+2+3 s (each up to
 * 10 % more), so that no delivery uses up its retries, and long enough for several.
 */
const OUTAGE_MS = 3000

describeEachDialect('faults: the webhook receiver down for a while', (dialect) => {
  it('deliveries that failed while it was down succeed once it is back, listed with attempts > 1', async (t) => {
    const DATABASE_URL = await scratchDatabaseUrl(t, dialect)
    const { key } = await createKey(DATABASE_URL, 'shop')
    // Verifies every delivery with the standardwebhooks library.
    const receiver = await startReceiver(t, () => 200)
    const server = await startServe(t, webhookEnv(DATABASE_URL))
    const endpoint = await subscribe(server, key, receiver)
    const load = startCatalogLoad({
      url: () => server.url,
      key,
      prefix: `down-${Date.now()}`,
      clients: CLIENTS,
    })
    t.after(() => load.stop())
    await load.acknowledged(20)

    // Down: the port refuses connections, and attempts under way lose theirs.
    await receiver.down()
    const downAt = Date.now()
    await sleep(OUTAGE_MS)
    await receiver.up()
    const upAt = Date.now()
    await sleep(1000)
    load.stop()
    await load.done
    const expected = acknowledgedIds(load.calls)

    const missing = await waitForDeliveries(receiver, expected, 20_000)
    const deliveries = await settledDeliveries(server, key, endpoint.id, 10_000)
    const retried = deliveries.filter((d) => d.attempts > 1)
    // Each event's last receipt: those retried must have come (again) after the receiver was back.
    const lastReceipt = new Map<string, number>()
    for (const r of receiver.received) lastReceipt.set(r.id, r.at)
    const retriedBeforeUp = retried.filter((d) => (lastReceipt.get(d.eventId) ?? 0) < upAt)
    const { received, distinct, duplicated } = receipts(receiver)
    t.diagnostic(
      `webhooks receiver down [${dialect}]: down ${upAt - downAt} ms; acknowledged ${expected.size}, ` +
        `delivered ${expected.size - missing.length}, missing ${missing.length}; deliveries ${deliveries.length} ` +
        `(${tally(deliveries.map((d) => d.status))}), by attempts ${tally(deliveries.map((d) => d.attempts))}; ` +
        `received ${received} (distinct webhook-ids ${distinct}, delivered more than once ${duplicated})`,
    )

    assert.deepEqual(missing.slice(0, 5), [], "every acknowledged write's event was delivered")
    assert.deepEqual(receiver.rejected, [])
    assert.ok(retried.length > 0, 'some deliveries failed while the receiver was down')
    assert.deepEqual(
      deliveries.filter((d) => d.status !== 'succeeded' || d.lastStatusCode !== 200),
      [],
      'every delivery succeeded in the end, with a 200',
    )
    assert.deepEqual(
      retriedBeforeUp.map((d) => d.eventId),
      [],
      'each retried delivery reached the receiver after it was back',
    )
    const listed = new Set(deliveries.map((d) => d.eventId))
    assert.equal(listed.size, distinct, 'one delivery per event received')
    assert.ok(
      receiver.received.every((r) => listed.has(r.id)),
      "every webhook-id received is a listed delivery's event",
    )
    assert.equal((await server.stop('SIGTERM')).code, 0)
  })
})
