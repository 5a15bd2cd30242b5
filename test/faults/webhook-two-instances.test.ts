import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { createKey, request, startServe, type ServeProcess } from '../process-helpers.js'
import { startReceiver } from '../webhook-receiver.js'
import { sleep, startCatalogLoad } from './load.js'
import { scratchDatabaseUrl } from './scratch-database.js'
import {
  acknowledgedIds,
  receipts,
  settledDeliveries,
  subscribe,
  TIMEOUT_MS,
  waitForDeliveries,
  webhookEnv,
} from './webhooks.js'

const CLIENTS = 8
const LOAD_MS = 4000
/**
 * The receiver takes this long to answer: an attempt is in flight long enough that a second
 * attempt of the same event, claimed by the other instance at the same time, would overlap it.
 */
const ANSWER_MS = 20

/** The attempts this instance's dispatcher made that succeeded, from its /metrics. */
async function succeededAttempts(server: ServeProcess): Promise<number> {
  const metrics = await request(server, 'GET', '/metrics')
  const line = String(metrics.body)
    .split('\n')
    .find((l) => l.startsWith('webhook_delivery_attempts_total{outcome="succeeded"}'))
  return line === undefined ? 0 : Number(line.split(' ').at(-1))
}

describe(
  'faults: two instances of catalog serve on one PostgreSQL database',
  { skip: !process.env.TEST_POSTGRES_URL && 'TEST_POSTGRES_URL is not set' },
  () => {
    it('writes spread across both: every event delivered, each attempt by one instance at a time', async (t) => {
      const DATABASE_URL = await scratchDatabaseUrl(t, 'postgres')
      const { key } = await createKey(DATABASE_URL, 'shop')
      // Verifies every delivery with the standardwebhooks library, and notes any attempt that
      // arrives while another of the same webhook-id is unanswered.
      const receiver = await startReceiver(t, () => ({ status: 200, afterMs: ANSWER_MS }))
      const env = webhookEnv(DATABASE_URL)
      const servers = [await startServe(t, env), await startServe(t, env)]
      const endpoint = await subscribe(servers[0]!, key, receiver)
      // The load asks for the URL as it sends each call, in order: call i goes to servers[i % 2].
      let next = 0
      const load = startCatalogLoad({
        url: () => servers[next++ % 2]!.url,
        key,
        prefix: `two-${Date.now()}`,
        clients: CLIENTS,
      })
      t.after(() => load.stop())
      await sleep(LOAD_MS)
      load.stop()
      await load.done
      const expected = acknowledgedIds(load.calls)
      const perInstanceWrites = servers.map(
        (_, n) => acknowledgedIds(load.calls.filter((_, i) => i % 2 === n)).size,
      )

      const missing = await waitForDeliveries(receiver, expected, TIMEOUT_MS + 5000 + 15_000)
      const deliveries = await settledDeliveries(servers[0]!, key, endpoint.id, 10_000)
      const perInstance = await Promise.all(servers.map(succeededAttempts))
      const { received, distinct, duplicated } = receipts(receiver)
      t.diagnostic(
        `webhooks two instances: acknowledged ${expected.size} (by instance ${perInstanceWrites.join(' + ')}), ` +
          `delivered ${expected.size - missing.length}, missing ${missing.length}; ` +
          `successful attempts by instance ${perInstance.join(' + ')}; received ${received} ` +
          `(distinct webhook-ids ${distinct}, delivered more than once ${duplicated}, ` +
          `while another attempt of it was in flight ${receiver.overlapping.length})`,
      )

      assert.ok(
        perInstanceWrites.every((n) => n > 0),
        `writes acknowledged by both: ${perInstanceWrites.join(', ')}`,
      )
      assert.deepEqual(missing.slice(0, 5), [], "every acknowledged write's event was delivered")
      assert.deepEqual(receiver.rejected, [])
      assert.ok(
        perInstance.every((n) => n > 0),
        `both instances delivered: ${perInstance.join(', ')}`,
      )
      assert.deepEqual(receiver.overlapping, [], 'no two attempts of one event in flight at once')
      // Nothing failed and no attempt came near its lease (the timeout plus 5 s, against an
      // answer within 20 ms), so no claim could be taken twice: each event arrives once.
      assert.equal(duplicated, 0, 'no event delivered twice')
      assert.equal(received, deliveries.length)
      assert.ok(deliveries.every((d) => d.status === 'succeeded' && d.attempts === 1))
      for (const server of servers) assert.equal((await server.stop('SIGTERM')).code, 0)
    })
  },
)
