import assert from 'node:assert/strict'
import { it } from 'node:test'
import { describeEachDialect } from '../helpers.js'
import { createKey, startServe } from '../process-helpers.js'
import { startReceiver } from '../webhook-receiver.js'
import { randomMs, sleep, startCatalogLoad } from './load.js'
import { scratchDatabaseUrl } from './scratch-database.js'
import {
  acknowledgedIds,
  receipts,
  subscribe,
  TIMEOUT_MS,
  waitForDeliveries,
  webhookEnv,
} from './webhooks.js'

const CLIENTS = 8

describeEachDialect('faults: kill -9 with a webhook endpoint subscribed', (dialect) => {
  it("every acknowledged write's event reaches the receiver after a restart (counted by webhook-id)", async (t) => {
    const DATABASE_URL = await scratchDatabaseUrl(t, dialect)
    const { key } = await createKey(DATABASE_URL, 'shop')
    // Verifies every delivery with the standardwebhooks library.
    const receiver = await startReceiver(t, () => 200)
    const env = webhookEnv(DATABASE_URL, '1,1,1,1,1')
    const first = await startServe(t, env)
    await subscribe(first, key, receiver)
    const load = startCatalogLoad({
      url: () => first.url,
      key,
      prefix: `hook-${Date.now()}`,
      clients: CLIENTS,
    })
    await load.acknowledged(20)
    await sleep(randomMs(200, 1500))
    first.child.kill('SIGKILL')
    assert.deepEqual(await first.exited, { code: null, signal: 'SIGKILL' })
    await load.done
    const expected = acknowledgedIds(load.calls)

    const second = await startServe(t, env)
    // Deliveries cut short by the kill are due again when their lease ends.
    const missing = await waitForDeliveries(receiver, expected, TIMEOUT_MS + 5000 + 15_000)
    const { received, distinct, duplicated } = receipts(receiver)
    t.diagnostic(
      `webhooks kill -9 [${dialect}]: acknowledged ${expected.size}, delivered ${expected.size - missing.length}, ` +
        `missing ${missing.length}, received ${received} (distinct webhook-ids ${distinct}, delivered more than once ${duplicated})`,
    )
    assert.deepEqual(missing.slice(0, 5), [])
    assert.deepEqual(receiver.rejected, [])
    assert.equal((await second.stop('SIGTERM')).code, 0)
  })
})
