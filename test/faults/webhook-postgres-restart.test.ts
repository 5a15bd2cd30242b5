import assert from 'node:assert/strict'
import { it } from 'node:test'
import pg from 'pg'
import { createKey, create, startServe } from '../process-helpers.js'
import { startReceiver } from '../webhook-receiver.js'
import { sleep, startCatalogLoad, type Call, tally } from './load.js'
import { describeOnPrivatePostgres } from './private-postgres.js'
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
const OUTAGE_MS = 3000
/** The receiver takes this long to answer, so that attempts are in flight when PostgreSQL stops. */
const ANSWER_MS = 100
const RECOVERY_LIMIT_MS = 15_000

/**
 * The dispatchers' LISTEN connections on the cluster, as PostgreSQL sees them, once there is
 * one (each is opened beside the server, not before it answers), or 0 after `timeoutMs`.
 */
async function listeningConnections(url: string, timeoutMs = 5000): Promise<number> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    const deadline = Date.now() + timeoutMs
    for (;;) {
      const { rows } = await client.query<{ n: number }>(
        `select count(*)::int as n from pg_stat_activity
         where query = 'listen "catalog_webhook_deliveries"' and state = 'idle'`,
      )
      if (rows[0]!.n > 0 || Date.now() > deadline) return rows[0]!.n
      await sleep(100)
    }
  } finally {
    await client.end()
  }
}

describeOnPrivatePostgres(
  'faults: PostgreSQL restarted while webhooks are delivered',
  (cluster) => {
    it('writes acknowledged before and after the restart all have their event delivered; the dispatcher listens and claims again', async (t) => {
      const DATABASE_URL = cluster.url
      const { key } = await createKey(DATABASE_URL, 'shop')
      // Verifies every delivery with the standardwebhooks library.
      const receiver = await startReceiver(t, () => ({ status: 200, afterMs: ANSWER_MS }))
      const server = await startServe(t, webhookEnv(DATABASE_URL))
      const endpoint = await subscribe(server, key, receiver)
      assert.equal(await listeningConnections(DATABASE_URL), 1, 'listening before the restart')
      const load = startCatalogLoad({
        url: () => server.url,
        key,
        prefix: `pg-${Date.now()}`,
        clients: CLIENTS,
        stopOnError: false,
      })
      t.after(() => load.stop())
      await load.acknowledged(50)

      const stopping = performance.now()
      await cluster.stop('immediate')
      await sleep(OUTAGE_MS)
      await cluster.start()
      const up = performance.now()
      const sentAfter = (call: Call) => call.sentAt >= up
      let recovered = false
      while (!recovered && performance.now() - up < RECOVERY_LIMIT_MS) {
        recovered = acknowledgedIds(load.calls.filter(sentAfter)).size > 0
        if (!recovered) await sleep(50)
      }
      await sleep(1000)
      load.stop()
      await load.done

      const expected = acknowledgedIds(load.calls)
      const before = acknowledgedIds(load.calls.filter((call) => call.sentAt < stopping)).size
      const afterUp = acknowledgedIds(load.calls.filter(sentAfter)).size
      // Attempts whose outcome could not be recorded are due again when their lease ends.
      const missing = await waitForDeliveries(receiver, expected, TIMEOUT_MS + 5000 + 15_000)
      const deliveries = await settledDeliveries(server, key, endpoint.id, 10_000)
      const listening = await listeningConnections(DATABASE_URL)

      // Woken by NOTIFY, not the poll of every second: one write's event arrives at once.
      const probeSentAt = Date.now()
      const probe = await create(server, key, '/products', { name: `probe-${probeSentAt}` })
      const probeMissing = await waitForDeliveries(receiver, new Set([probe.id]), 5000)
      const probeReceipt = receiver.received.find(
        (r) => JSON.parse(r.body).data.object.id === probe.id,
      )
      const probeMs = probeReceipt ? probeReceipt.at - probeSentAt : undefined

      const claimErrors = server
        .stdout()
        .split('\n')
        .filter((line) => line.includes('"level":50'))
      const { received, distinct, duplicated } = receipts(receiver)
      t.diagnostic(
        `webhooks PostgreSQL restart: outage ${OUTAGE_MS} ms; acknowledged ${expected.size} ` +
          `(before the stop ${before}, after the start ${afterUp}), delivered ${expected.size - missing.length}, ` +
          `missing ${missing.length}; deliveries ${deliveries.length} (${tally(deliveries.map((d) => d.status))}), ` +
          `by attempts ${tally(deliveries.map((d) => d.attempts))}; received ${received} ` +
          `(distinct webhook-ids ${distinct}, delivered more than once ${duplicated}); ` +
          `error lines logged ${claimErrors.length}; LISTEN connections after ${listening}; ` +
          `a write's event ${probeMs} ms after it was sent`,
      )

      assert.ok(before > 0 && afterUp > 0, 'writes acknowledged before and after the restart')
      assert.deepEqual(missing.slice(0, 5), [], "every acknowledged write's event was delivered")
      assert.deepEqual(receiver.rejected, [])
      assert.deepEqual(
        deliveries.filter((d) => d.status !== 'succeeded'),
        [],
        'every delivery succeeded',
      )
      // Only an attempt in flight when PostgreSQL stopped can lose its outcome and be sent again
      // when its lease ends; the dispatcher has at most 4 in flight per endpoint.
      assert.ok(duplicated <= 4, `at most 4 events delivered twice: ${duplicated}`)
      assert.equal(listening, 1, 'the dispatcher LISTENs again')
      assert.deepEqual(probeMissing, [], 'a write after the restart is delivered')
      assert.equal(server.child.exitCode, null, 'the process is still running')
      assert.equal((await server.stop('SIGTERM')).code, 0)
    })
  },
)
