import assert from 'node:assert/strict'
import { it } from 'node:test'
import { describeEachDialect } from '../helpers.js'
import { create, createKey, startServe } from '../process-helpers.js'
import { startReceiver } from '../webhook-receiver.js'
import { randomMs, sleep, startCatalogLoad, type Call } from './load.js'
import { scratchDatabaseUrl } from './scratch-database.js'

const CLIENTS = 8
/** The sender's timeout; a claim's lease is this plus 5 s. */
const TIMEOUT_MS = 2000

const answered200 = (call: Call) => call.outcome?.answered === true && call.outcome.status === 200

describeEachDialect('faults: kill -9 with a webhook endpoint subscribed', (dialect) => {
  it("every acknowledged write's event reaches the receiver after a restart (counted by webhook-id)", async (t) => {
    const DATABASE_URL = await scratchDatabaseUrl(t, dialect)
    const { key } = await createKey(DATABASE_URL, 'shop')
    // Verifies every delivery with the standardwebhooks library.
    const receiver = await startReceiver(t, () => 200)
    const env = {
      DATABASE_URL,
      WEBHOOK_ALLOW_PRIVATE: '1',
      WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS),
      WEBHOOK_RETRY_SCHEDULE: '1,1,1,1,1',
    }
    const first = await startServe(t, env)
    const endpoint = await create(first, key, '/webhook-endpoints', {
      url: `${receiver.url}/hooks`,
      events: ['*'],
    })
    receiver.trust('/hooks', endpoint.secret)
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
    const acknowledged = load.calls.filter(answered200)
    const expected = new Set(
      acknowledged.map((call) => (call.outcome as { body: any }).body.data.id as string),
    )

    const second = await startServe(t, env)
    const objectIds = () =>
      new Set(receiver.received.map((r) => JSON.parse(r.body).data.object.id as string))
    // Deliveries cut short by the kill are due again when their lease ends.
    const deadline = Date.now() + TIMEOUT_MS + 5000 + 15_000
    let missing = [...expected].filter((id) => !objectIds().has(id))
    while (missing.length > 0 && Date.now() < deadline) {
      await sleep(200)
      missing = [...expected].filter((id) => !objectIds().has(id))
    }
    const perId = new Map<string, number>()
    for (const r of receiver.received) perId.set(r.id, (perId.get(r.id) ?? 0) + 1)
    const duplicates = [...perId.values()].filter((n) => n > 1).length
    t.diagnostic(
      `webhooks kill -9 [${dialect}]: acknowledged ${acknowledged.length}, delivered ${expected.size - missing.length}, ` +
        `missing ${missing.length}, received ${receiver.received.length} (distinct webhook-ids ${perId.size}, delivered more than once ${duplicates})`,
    )
    assert.deepEqual(missing.slice(0, 5), [])
    assert.deepEqual(receiver.rejected, [])
    assert.equal((await second.stop('SIGTERM')).code, 0)
  })
})
