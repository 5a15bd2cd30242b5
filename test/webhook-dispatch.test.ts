// test:serial: a delivery must arrive within 2 s of its write.
import assert from 'node:assert/strict'
import { it, type TestContext } from 'node:test'
import { sql } from 'kysely'
import pg from 'pg'
import { Registry } from 'prom-client'
import { buildApp } from '../src/app.js'
import { createApiKey } from '../src/auth/api-key.service.js'
import { createDatabase, type Database, type Dialect } from '../src/db/database.js'
import { migrateToLatest } from '../src/db/migrate.js'
import { toIso } from '../src/db/values.js'
import {
  findDueDeliveries,
  findOldestPending,
  recordOutcomes,
} from '../src/webhooks/delivery-claim.repository.js'
import { startDispatcher, type DispatcherOptions } from '../src/webhooks/dispatcher.js'
import { createSender } from '../src/webhooks/sender.js'
import { readFeed } from './event-helpers.js'
import {
  addVariant,
  API,
  buildTestApi,
  createTestSchema,
  describeEachDialect,
  POSTGRES_URL,
  type TestApi,
} from './helpers.js'
import { fakeScheduler, type FakeScheduler } from './webhook-fake-scheduler.js'
import { startReceiver, type Answer, type Receiver } from './webhook-receiver.js'

interface Setup {
  api: TestApi
  receiver: Receiver
  /** Creates an endpoint at the receiver's `path`, which the receiver then verifies. */
  endpoint(path: string, events?: string[]): Promise<string>
  /**
   * A clock that stands still until the test moves it on: a dispatcher started with
   * `{ scheduler: s.clock }` polls, retries and gives up waiting on it alone.
   */
  clock: FakeScheduler
  /** Starts a dispatcher on the test's database (stopped when the test ends, at the latest). */
  dispatch(options?: Partial<DispatcherOptions>): ReturnType<typeof startDispatcher>
  /**
   * Settles when the LISTEN connection of a dispatcher of this database first calls its
   * listener (PostgreSQL; it does once it listens), right after that call.
   */
  listened: Promise<void>
}

async function setup(
  t: TestContext,
  dialect: Dialect,
  answer?: (path: string, id: string, count: number) => Answer,
  defaults: { timeoutMs?: number; schedule?: number[] } = {},
): Promise<Setup> {
  const api = await buildTestApi(t, dialect, { webhooks: { allowPrivate: true } })
  const receiver = await startReceiver(t, answer)
  const timeoutMs = defaults.timeoutMs ?? 2000
  const sender = createSender({ timeoutMs, allowPrivate: true })
  t.after(() => sender.close())
  const clock = fakeScheduler()
  let heard = () => {}
  const listened = new Promise<void>((resolve) => (heard = resolve))
  const listen = api.database.listen
  if (listen) {
    Object.assign(api.database, {
      listen: (channel: string, listener: () => void) =>
        listen(channel, () => {
          heard()
          listener()
        }),
    })
  }
  return {
    api,
    receiver,
    clock,
    listened,
    async endpoint(path, events = ['*']) {
      const res = await api.post('/webhook-endpoints', { url: `${receiver.url}${path}`, events })
      assert.equal(res.statusCode, 200, res.body)
      receiver.trust(path, res.json().data.secret)
      return res.json().data.id
    },
    dispatch(options = {}) {
      const dispatcher = startDispatcher({
        database: api.database,
        sender,
        timeoutMs,
        schedule: defaults.schedule ?? [1, 1],
        ...options,
      })
      // On the fake clock, stop's grace for the attempts in flight passes as the clock moves.
      t.after(() =>
        options.scheduler === clock ? clock.settle(dispatcher.stop()) : dispatcher.stop(),
      )
      return dispatcher
    },
  }
}

/** The deliveries of an endpoint, oldest first, as stored. */
async function deliveriesOf(database: Database, endpointId: string) {
  const rows = await database.kysely
    .selectFrom('webhook_deliveries')
    .selectAll()
    .where('endpoint_id', '=', endpointId)
    .orderBy('created_at')
    .execute()
  return rows
}

/**
 * Waits until `check` holds, or fails after `timeoutMs`: polls the database while the
 * receiver answers and the dispatcher records. With a fake `clock`, each round runs the passes
 * the dispatcher asked for (the clock does not move).
 */
async function until(
  check: () => Promise<boolean>,
  timeoutMs = 10_000,
  what = 'condition',
  clock?: FakeScheduler,
) {
  const deadline = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what} not reached within ${timeoutMs} ms`)
    await clock?.flush()
    await new Promise((resolve) => setTimeout(resolve, clock ? 10 : 25))
  }
}

/**
 * On PostgreSQL the dispatcher's LISTEN connection asks for a pass once it listens (NOTIFYs may
 * have been missed before): waits for that and runs it, so that a test does not take it for
 * a pass that a write asked for. At once on SQLite.
 */
async function untilListening(s: Setup) {
  if (s.api.database.dialect !== 'postgres') return
  let timer: NodeJS.Timeout | undefined
  await Promise.race([
    s.listened,
    new Promise((_, reject) => {
      timer = setTimeout(
        () => reject(new Error('the dispatcher did not listen within 10 s')),
        10_000,
      )
    }),
  ]).finally(() => clearTimeout(timer))
  await s.clock.flush()
}

describeEachDialect('webhook dispatcher', (dialect) => {
  it('delivers every event, signed, as the feed shows it, within 2 s of its commit', async (t) => {
    const s = await setup(t, dialect)
    const all = await s.endpoint('/all')
    const created = await s.endpoint('/created', ['product.created'])
    const dispatcher = s.dispatch()
    const before = Date.now()
    const product = await s.api.createProduct({ name: 'Shirt' })
    const res = await s.api.patch(`/products/${product.id}`, { name: 'Shirt 2' })
    assert.equal(res.statusCode, 200, res.body)
    await s.receiver.waitFor(3, 2000)
    assert.ok(Date.now() - before < 2000)
    const events = await readFeed(s.api, { atLeast: 2 })
    for (const event of events) {
      const got = s.receiver.received.filter((r) => r.id === event.id)
      const paths = got.map((r) => r.path).sort()
      assert.deepEqual(paths, event.type === 'product.created' ? ['/all', '/created'] : ['/all'])
      for (const r of got) assert.deepEqual(JSON.parse(r.body), event)
    }
    await until(
      async () =>
        [
          ...(await deliveriesOf(s.api.database, all)),
          ...(await deliveriesOf(s.api.database, created)),
        ].every((d) => d.status === 'succeeded'),
      5000,
      'succeeded recorded',
    )
    for (const d of [
      ...(await deliveriesOf(s.api.database, all)),
      ...(await deliveriesOf(s.api.database, created)),
    ]) {
      assert.equal(d.status, 'succeeded')
      assert.equal(d.attempts, 1)
      assert.equal(d.last_status_code, 200)
      assert.equal(d.next_attempt_at, null)
    }
    assert.deepEqual(s.receiver.rejected, [])
    await dispatcher.stop()
  })

  it("records an attempt's start as lastAttemptAt, and counts the retry's delay from its end", async (t) => {
    const s = await setup(t, dialect, () => ({ status: 503, afterMs: 700 }), { schedule: [60] })
    const endpoint = await s.endpoint('/slow')
    s.dispatch()
    await s.api.createProduct({ name: 'Slow' })
    await s.receiver.waitFor(1, 2000)
    const arrived = s.receiver.received[0]!.at
    let delivery: Awaited<ReturnType<typeof deliveriesOf>>[number] | undefined
    await until(
      async () => {
        ;[delivery] = await deliveriesOf(s.api.database, endpoint)
        return delivery?.attempts === 1
      },
      5000,
      'the outcome recorded',
    )
    const lastAttemptAt = Date.parse(toIso(delivery!.last_attempt_at!))
    // Sent just before it arrived, not when its answer came 700 ms later.
    assert.ok(lastAttemptAt <= arrived, `${lastAttemptAt} after the arrival at ${arrived}`)
    assert.ok(arrived - lastAttemptAt < 500, `${arrived - lastAttemptAt} ms before the arrival`)
    const retryIn = Date.parse(toIso(delivery!.next_attempt_at!)) - lastAttemptAt
    assert.ok(retryIn >= 60_700, `the retry is due ${retryIn} ms after the start`)
  })

  it('retries a failed attempt on the schedule, with the same webhook-id and body', async (t) => {
    const s = await setup(t, dialect, (_, __, count) => (count < 3 ? 503 : 204), {
      schedule: [1, 1, 1],
    })
    const endpoint = await s.endpoint('/flaky')
    const clock = s.clock
    // Polled every 100 ms of the clock, so that polls before the retry's time find it not due.
    s.dispatch({ scheduler: clock, random: () => 0, pollIntervalMs: 100 })
    await s.api.createProduct({ name: 'Shirt' })
    await clock.flush()
    const stored = async () => (await deliveriesOf(s.api.database, endpoint))[0]!
    for (let attempts = 1; attempts <= 2; attempts++) {
      await s.receiver.waitFor(attempts, 3000)
      await until(async () => (await stored()).attempts === attempts, 5000, 'recorded', clock)
      const delivery = await stored()
      assert.equal(delivery.status, 'pending')
      assert.equal(delivery.last_status_code, 503)
      // 1 s after the attempt (the clock stood still while it was made).
      const due = clock.now().getTime() + 1000
      assert.equal(toIso(delivery.next_attempt_at!), new Date(due).toISOString())
      // The polls before its time leave it alone (a claim would have leased it).
      await clock.advance(999)
      assert.equal(toIso((await stored()).next_attempt_at!), new Date(due).toISOString())
      assert.equal(s.receiver.received.length, attempts, 'retried before its time')
      await clock.advance(1)
    }
    await s.receiver.waitFor(3, 3000)
    const [first, second, third] = s.receiver.received
    assert.equal(second!.id, first!.id)
    assert.equal(third!.body, first!.body)
    await until(async () => (await stored()).status === 'succeeded', 5000, 'succeeded', clock)
    const delivery = await stored()
    assert.equal(delivery.attempts, 3)
    assert.equal(delivery.last_status_code, 204)
    assert.equal(delivery.next_attempt_at, null)
    assert.deepEqual(s.receiver.rejected, [])
  })

  it('fails a delivery after the last retry; a redirect is a failure, not followed', async (t) => {
    const s = await setup(
      t,
      dialect,
      (path) => (path === '/moved' ? { redirect: '/target' } : path === '/target' ? 200 : 500),
      { schedule: [1] },
    )
    const down = await s.endpoint('/down')
    const moved = await s.endpoint('/moved')
    const logged: { object: Record<string, unknown>; message: string }[] = []
    const log = {
      warn: (object: Record<string, unknown>, message: string) => logged.push({ object, message }),
      error: (object: Record<string, unknown>, message: string) => logged.push({ object, message }),
    }
    const registry = new Registry()
    const clock = s.clock
    s.dispatch({ log, registry, scheduler: clock, random: () => 0 })
    await s.api.createProduct({ name: 'Shirt' })
    await until(
      async () =>
        [
          ...(await deliveriesOf(s.api.database, down)),
          ...(await deliveriesOf(s.api.database, moved)),
        ].every((d) => d.attempts === 1),
      5000,
      'first attempts recorded',
      clock,
    )
    // The retry's time: 1 s later.
    await clock.advance(1000)
    await until(
      async () =>
        [
          ...(await deliveriesOf(s.api.database, down)),
          ...(await deliveriesOf(s.api.database, moved)),
        ].every((d) => d.status === 'failed'),
      5000,
      'failed',
      clock,
    )
    for (const endpoint of [down, moved]) {
      const [delivery] = await deliveriesOf(s.api.database, endpoint)
      assert.equal(delivery!.attempts, 2)
      assert.equal(delivery!.next_attempt_at, null)
    }
    const [redirected] = await deliveriesOf(s.api.database, moved)
    assert.equal(redirected!.last_status_code, 302)
    assert.match(redirected!.last_error!, /redirect/)
    assert.equal(s.receiver.received.filter((r) => r.path === '/target').length, 0)
    assert.equal(s.receiver.received.length, 4)
    // One line per failed attempt: endpoint, event, status; never the secret.
    const [event] = await readFeed(s.api, { atLeast: 1 })
    assert.equal(logged.length, 4)
    for (const { object, message } of logged) {
      assert.equal(message, 'webhook delivery attempt failed')
      assert.ok(object.endpointId === down || object.endpointId === moved)
      assert.equal(object.eventId, event!.id)
      assert.ok(object.statusCode === 500 || object.statusCode === 302)
      const secrets = (
        await s.api.database.kysely.selectFrom('webhook_endpoints').select('secret').execute()
      ).map((r) => r.secret)
      for (const secret of secrets) assert.ok(!JSON.stringify(object).includes(secret.slice(6)))
    }
    const metrics = await registry.metrics()
    assert.match(metrics, /webhook_delivery_attempts_total\{outcome="retry"\} 2/)
    assert.match(metrics, /webhook_delivery_attempts_total\{outcome="failed"\} 2/)
    assert.match(metrics, /webhook_delivery_attempts_in_flight 0/)
    assert.match(metrics, /webhook_oldest_pending_delivery_age_seconds 0/)
  })

  it("the oldest pending delivery's age leaves out disabled endpoints, whose deliveries wait on purpose", async (t) => {
    const s = await setup(t, dialect)
    const oldest = async () => {
      const found = await findOldestPending(s.api.database.kysely)
      return found === undefined ? undefined : toIso(found)
    }
    const paused = await s.endpoint('/paused')
    await s.api.createProduct({ name: 'For the paused one' })
    const [waiting] = await deliveriesOf(s.api.database, paused)
    assert.equal(await oldest(), toIso(waiting!.created_at))
    const disabled = await s.api.patch(`/webhook-endpoints/${paused}`, { enabled: false })
    assert.equal(disabled.statusCode, 200, disabled.body)
    assert.equal(await oldest(), undefined)
    const live = await s.endpoint('/live')
    // The next delivery is created at a later millisecond.
    const first = Date.parse(toIso(waiting!.created_at))
    await until(async () => Date.now() > first, 1000, 'the clock moves on')
    await s.api.createProduct({ name: 'For the live one' })
    const [pending] = await deliveriesOf(s.api.database, live)
    assert.ok(toIso(pending!.created_at) > toIso(waiting!.created_at))
    assert.equal(await oldest(), toIso(pending!.created_at))
  })

  it("a write wakes its own process's dispatcher at once, not at the next poll", async (t) => {
    const s = await setup(t, dialect)
    await s.endpoint('/now')
    // The clock stands still: no poll ever runs, only the passes that something asked for.
    s.dispatch({ scheduler: s.clock })
    // Its first pass, made as it starts, finds nothing.
    await s.clock.flush()
    for (let i = 0; i < 3; i++) {
      await s.api.createProduct({ name: `P${i}` })
      assert.ok(s.clock.queued() > 0, 'the write asked for no pass')
      await s.clock.flush()
      await s.receiver.waitFor(i + 1, 2000)
    }
  })

  it('with no enabled endpoint a write wakes no pass; the first endpoint created makes it wake again', async (t) => {
    const s = await setup(t, dialect)
    let looks = 0
    const counting = s.api.database.kysely.withPlugin({
      transformQuery({ node }) {
        if (JSON.stringify(node).includes('from webhook_deliveries x')) looks++
        return node
      },
      transformResult: async ({ result }) => result,
    })
    // On the database object itself: the endpoint routes signal their changes to it.
    Object.assign(s.api.database, { kysely: counting })
    s.dispatch({ scheduler: s.clock })
    await untilListening(s)
    // A poll: it reads that no endpoint is enabled, and looks for due deliveries.
    await s.clock.advance(1000)
    assert.ok(looks > 0, 'the poll looked')
    looks = 0
    for (let i = 0; i < 5; i++) await s.api.createProduct({ name: `Unheard ${i}` })
    assert.equal(s.clock.queued(), 0, 'writes with no endpoint asked for a pass')
    await s.clock.flush()
    assert.equal(looks, 0, 'writes with no endpoint woke a pass')

    await s.endpoint('/first')
    await s.api.createProduct({ name: 'Heard' })
    assert.ok(s.clock.queued() > 0, 'the write asked for no pass')
    await s.clock.flush()
    await s.receiver.waitFor(1, 2000)
    assert.ok(looks > 0)
  })

  it('an endpoint enabled by another process is sent its deliveries at the next poll', async (t) => {
    const s = await setup(t, dialect)
    const endpointId = await s.endpoint('/elsewhere')
    const disabled = await s.api.patch(`/webhook-endpoints/${endpointId}`, { enabled: false })
    assert.equal(disabled.statusCode, 200, disabled.body)
    const clock = s.clock
    s.dispatch({ scheduler: clock, pollIntervalMs: 300 })
    await untilListening(s)
    // A poll: no endpoint is enabled.
    await clock.advance(300)
    // As another instance would: straight to the table, so this process is told nothing.
    await s.api.database.kysely
      .updateTable('webhook_endpoints')
      .set({ enabled: dialect === 'postgres' ? true : (1 as unknown as boolean) })
      .where('id', '=', endpointId)
      .execute()
    await s.api.createProduct({ name: 'Found by the poll' })
    assert.equal(clock.queued(), 0, 'the write asked for a pass')
    // The next poll finds its delivery, and reads that the endpoint is enabled.
    await clock.advance(300)
    await s.receiver.waitFor(1, 2000)
    await until(
      async () => (await deliveriesOf(s.api.database, endpointId))[0]?.status === 'succeeded',
      5000,
      'the outcome recorded',
      clock,
    )
    await clock.flush()
    await s.api.createProduct({ name: 'Woken by its write' })
    assert.ok(clock.queued() > 0, 'the write asked for no pass')
    await clock.flush()
    await s.receiver.waitFor(2, 2000)
  })

  it(
    'a write that queues deliveries sends no NOTIFY (it would serialize the commits)',
    {
      skip: dialect !== 'postgres',
    },
    async (t) => {
      const s = await setup(t, dialect)
      await s.endpoint('/quiet')
      // On the test's own database (NOTIFYs do not cross databases), this schema's only.
      const { rows } = await sql<{ schema: string; database: string }>`
        select current_schema() as schema, current_database() as database
      `.execute(s.api.database.kysely)
      const url = new URL(POSTGRES_URL!)
      url.pathname = `/${rows[0]!.database}`
      const listener = new pg.Client({ connectionString: url.toString() })
      await listener.connect()
      t.after(() => listener.end())
      const heard: string[] = []
      let markerHeard = false
      listener.on('notification', (message) => {
        if (message.payload === rows[0]!.schema) heard.push(message.channel)
        if (message.payload === `${rows[0]!.schema}:marker`) markerHeard = true
      })
      await listener.query('listen catalog_webhook_deliveries')
      const product = await s.api.createProduct({ name: 'Quiet' })
      await s.api.patch(`/products/${product.id}`, { name: 'Still quiet' })
      const [delivery] = await deliveriesOf(
        s.api.database,
        (await s.api.get('/webhook-endpoints')).json().data[0].id,
      )
      assert.ok(delivery, 'the write queued a delivery')
      // Notifications reach a listener in the order their transactions committed: once this
      // marker, sent after the writes committed, is heard, any NOTIFY of theirs was too.
      await sql`select pg_notify('catalog_webhook_deliveries', current_schema() || ':marker')`.execute(
        s.api.database.kysely,
      )
      await until(async () => markerHeard, 10_000, 'the marker NOTIFY')
      assert.deepEqual(heard, [])
    },
  )

  it('a dead endpoint does not delay a live one by more than 1 s', async (t) => {
    const s = await setup(t, dialect, (path) => (path === '/dead' ? 'hang' : 200), {
      timeoutMs: 5000,
    })
    await s.endpoint('/dead')
    await s.endpoint('/live')
    s.dispatch({ maxInFlight: 8, maxPerEndpoint: 4 })
    const committed = new Map<string, number>()
    for (let i = 0; i < 20; i++) {
      const product = await s.api.createProduct({ name: `P${i}` })
      committed.set(product.id, Date.now())
    }
    await until(
      async () => s.receiver.received.filter((r) => r.path === '/live').length >= 20,
      5000,
      'live deliveries',
    )
    let worst = 0
    for (const r of s.receiver.received.filter((r) => r.path === '/live')) {
      const id = JSON.parse(r.body).data.object.id
      worst = Math.max(worst, r.at - committed.get(id)!)
    }
    assert.ok(worst < 1000, `worst lag of the live endpoint ${worst} ms`)
  })

  it('records the outcomes of finished attempts with the next claim: fewer writes than deliveries', async (t) => {
    const s = await setup(t, dialect)
    const endpointId = await s.endpoint('/fast')
    for (let i = 0; i < 24; i++) await s.api.createProduct({ name: `P${i}` })
    let writes = 0
    const database = s.api.database
    s.dispatch({
      database: { ...database, write: (work) => (writes++, database.write(work)) },
    })
    await until(
      async () => (await deliveriesOf(database, endpointId)).every((d) => d.status === 'succeeded'),
      10_000,
      'outcomes recorded',
    )
    // One write per outcome and one per claim made at least 24 + 6.
    assert.ok(writes < 24, `${writes} writes for 24 deliveries`)
  })

  it('a pass reads a few due deliveries per endpoint, not the whole backlog of the oldest', async (t) => {
    // No dispatcher runs: the deliveries stay pending. /backlog's 30 are due before /new's one.
    const s = await setup(t, dialect)
    const backlog = await s.endpoint('/backlog')
    for (let i = 0; i < 30; i++) await s.api.createProduct({ name: `Old ${i}` })
    const fresh = await s.endpoint('/new')
    await s.api.createProduct({ name: 'New' })
    const now = new Date(Date.now() + 1000).toISOString()
    const endpoints = (rows: { endpoint_id: string }[]) => rows.map((row) => row.endpoint_id)

    const page = endpoints(await findDueDeliveries(s.api.database.kysely, now, [], 8, 4))
    assert.equal(page.filter((id) => id === backlog).length, 4)
    assert.equal(page.filter((id) => id === fresh).length, 1)
    const notBusy = await findDueDeliveries(s.api.database.kysely, now, [backlog], 8, 4)
    assert.deepEqual(endpoints(notBusy), [fresh])
  })

  it("claims an endpoint's next deliveries ahead while its slots are busy; stop gives them back", async (t) => {
    const s = await setup(t, dialect, () => 'hang', { timeoutMs: 30_000 })
    const endpoint = await s.endpoint('/slow')
    for (let i = 0; i < 20; i++) await s.api.createProduct({ name: `P${i}` })
    const clock = s.clock
    const leased = async () => {
      const now = clock.now().toISOString()
      const rows = await deliveriesOf(s.api.database, endpoint)
      return rows.filter((d) => new Date(d.next_attempt_at!).toISOString() > now).length
    }
    const dispatcher = s.dispatch({ scheduler: clock, maxPerEndpoint: 1, stopGraceMs: 100 })
    await clock.flush()
    await s.receiver.waitFor(1, 3000)
    // One attempt in flight (the bound), fifteen more claimed ahead (16 times the bound).
    await until(async () => (await leased()) === 16, 3000, '16 deliveries claimed', clock)
    assert.equal(dispatcher.inFlight(), 1)
    await clock.settle(dispatcher.stop())
    // Those claimed ahead are due again now; the abandoned attempt's keeps its lease.
    assert.equal(await leased(), 1)
    assert.equal(s.receiver.received.length, 1)
  })

  it('records the outcomes of one pass in one statement, each on its own delivery', async (t) => {
    const s = await setup(t, dialect)
    const ok = await s.endpoint('/ok')
    const flaky = await s.endpoint('/flaky')
    const gone = await s.endpoint('/gone')
    await s.api.createProduct({ name: 'Shirt' })
    const first = async (id: string) => (await deliveriesOf(s.api.database, id))[0]!
    const okDelivery = await first(ok)
    const flakyDelivery = await first(flaky)
    const goneDelivery = await first(gone)
    const at = '2026-11-26T10:00:00.000Z'
    const retryAt = '2026-11-26T10:05:00.000Z'
    await recordOutcomes(s.api.database.kysely, [
      {
        delivery: okDelivery,
        outcome: {
          status: 'succeeded',
          attempts: 1,
          lastAttemptAt: at,
          lastStatusCode: 204,
          lastError: null,
          nextAttemptAt: null,
        },
      },
      {
        delivery: flakyDelivery,
        outcome: {
          status: 'pending',
          attempts: 2,
          lastAttemptAt: at,
          lastStatusCode: null,
          lastError: 'connection refused',
          nextAttemptAt: retryAt,
        },
      },
    ])
    const stored = async (id: string) => {
      const row = (await deliveriesOf(s.api.database, id))[0]!
      return {
        status: row.status,
        attempts: row.attempts,
        last_attempt_at: row.last_attempt_at === null ? null : toIso(row.last_attempt_at),
        last_status_code: row.last_status_code,
        last_error: row.last_error,
        next_attempt_at: row.next_attempt_at === null ? null : toIso(row.next_attempt_at),
      }
    }
    assert.deepEqual(await stored(ok), {
      status: 'succeeded',
      attempts: 1,
      last_attempt_at: at,
      last_status_code: 204,
      last_error: null,
      next_attempt_at: null,
    })
    assert.deepEqual(await stored(flaky), {
      status: 'pending',
      attempts: 2,
      last_attempt_at: at,
      last_status_code: null,
      last_error: 'connection refused',
      next_attempt_at: retryAt,
    })
    // A delivery with no outcome in the batch is left as it was.
    assert.deepEqual(await stored(gone), {
      status: 'pending',
      attempts: 0,
      last_attempt_at: null,
      last_status_code: null,
      last_error: null,
      next_attempt_at: toIso(goneDelivery.next_attempt_at!),
    })
  })

  it('claims ahead only for an endpoint whose last attempt succeeded: a failing one gets its free slots', async (t) => {
    const answered = new Set<string>()
    const s = await setup(
      t,
      dialect,
      (path) => {
        // Each endpoint's first attempt is answered (a failure, a success), the rest hang.
        if (answered.has(path)) return 'hang'
        answered.add(path)
        return path === '/failing' ? 500 : 200
      },
      { timeoutMs: 30_000, schedule: [600] },
    )
    const failing = await s.endpoint('/failing')
    const healthy = await s.endpoint('/healthy')
    const clock = s.clock
    s.dispatch({ scheduler: clock, maxPerEndpoint: 1, stopGraceMs: 100 })
    await s.api.createProduct({ name: 'First' })
    const database = s.api.database
    await until(
      async () =>
        (await deliveriesOf(database, failing))[0]?.attempts === 1 &&
        (await deliveriesOf(database, healthy))[0]?.status === 'succeeded',
      3000,
      'first outcomes recorded',
      clock,
    )
    for (let i = 0; i < 20; i++) await s.api.createProduct({ name: `P${i}` })
    // Claimed: leased and never attempted yet (in flight, or waiting for the slot).
    const claimed = async (endpoint: string) => {
      const now = clock.now()
      return (await deliveriesOf(database, endpoint)).filter(
        (d) => d.attempts === 0 && new Date(d.next_attempt_at!) > now,
      ).length
    }
    await until(async () => (await claimed(healthy)) === 16, 3000, '16 claimed for /healthy', clock)
    // Every pass asked for has run.
    await clock.flush()
    assert.equal(await claimed(failing), 1)
    assert.equal(await claimed(healthy), 16)
  })

  it('stopped mid-attempt, it leaves the delivery to its lease: retried later, not lost', async (t) => {
    const s = await setup(t, dialect, (_, __, count) => (count === 1 ? 'hang' : 200), {
      timeoutMs: 30_000,
    })
    const endpoint = await s.endpoint('/slow')
    const clock = s.clock
    const first = s.dispatch({ scheduler: clock, stopGraceMs: 100 })
    await s.api.createProduct({ name: 'Shirt' })
    await clock.flush()
    await s.receiver.waitFor(1, 3000)
    await clock.settle(first.stop())
    let [delivery] = await deliveriesOf(s.api.database, endpoint)
    assert.equal(delivery!.status, 'pending')
    assert.equal(delivery!.attempts, 0)
    // Due again when its lease (timeout + 5 s from the claim) ends, and not before.
    const leaseEnd = Date.parse(toIso(delivery!.next_attempt_at!))
    assert.equal(leaseEnd - clock.now().getTime(), 35_000 - 100)
    const later = s.dispatch({ scheduler: clock })
    await clock.advance(leaseEnd - 1 - clock.now().getTime())
    ;[delivery] = await deliveriesOf(s.api.database, endpoint)
    assert.equal(toIso(delivery!.next_attempt_at!), new Date(leaseEnd).toISOString())
    // The first poll after it takes it.
    await clock.advance(1000)
    await s.receiver.waitFor(2, 3000)
    await until(
      async () => (await deliveriesOf(s.api.database, endpoint))[0]?.status === 'succeeded',
      3000,
      'succeeded',
      clock,
    )
    ;[delivery] = await deliveriesOf(s.api.database, endpoint)
    assert.equal(delivery!.attempts, 1)
    await clock.settle(later.stop())
  })
})

it(
  'two dispatchers on one PostgreSQL schema make each attempt once',
  { skip: !POSTGRES_URL },
  async (t) => {
    const url = await createTestSchema(t)
    const databases = [createDatabase(url), createDatabase(url)]
    t.after(() => Promise.all(databases.map((database) => database.close())))
    await migrateToLatest(databases[0]!)
    const app = buildApp({ database: databases[0]!, webhooks: { allowPrivate: true } })
    t.after(() => app.close())
    const { key } = await createApiKey(databases[0]!, { store: 'shop', scopes: ['read', 'write'] })
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' }
    const receiver = await startReceiver(t, () => 200)
    let res = await app.inject({
      method: 'POST',
      url: `${API}/webhook-endpoints`,
      headers,
      payload: JSON.stringify({ url: `${receiver.url}/both`, events: ['*'] }),
    })
    assert.equal(res.statusCode, 200, res.body)
    receiver.trust('/both', res.json().data.secret)
    const sender = createSender({ timeoutMs: 2000, allowPrivate: true })
    t.after(() => sender.close())
    const dispatchers = databases.map((database) =>
      startDispatcher({ database, sender, timeoutMs: 2000, schedule: [1], maxPerEndpoint: 8 }),
    )
    t.after(() => Promise.all(dispatchers.map((dispatcher) => dispatcher.stop())))
    const count = 100
    // 10 writes at a time: 100 at once outwaited the pool's bound on a loaded machine (503).
    for (let batch = 0; batch < count; batch += 10) {
      await Promise.all(
        Array.from({ length: 10 }, async (_, i) => {
          res = await app.inject({
            method: 'POST',
            url: `${API}/products`,
            headers,
            payload: JSON.stringify({ name: `P${batch + i}` }),
          })
          assert.equal(res.statusCode, 200, res.body)
        }),
      )
    }
    await receiver.waitFor(count, 10_000)
    // Once every outcome is recorded no claim can be made again; stopping waits for the
    // attempts in flight, so a second attempt of any of them would have arrived by then.
    await until(
      async () =>
        (
          await databases[0]!.kysely
            .selectFrom('webhook_deliveries')
            .select('status')
            .where('status', '<>', 'succeeded')
            .execute()
        ).length === 0,
      10_000,
      'every outcome recorded',
    )
    await Promise.all(dispatchers.map((dispatcher) => dispatcher.stop()))
    const ids = receiver.received.map((r) => r.id)
    assert.equal(ids.length, count)
    assert.equal(new Set(ids).size, count)
    assert.deepEqual(receiver.rejected, [])
  },
)

it(
  'on PostgreSQL a pass looks its deliveries up by key: never a scan of the table, whatever its statistics',
  { skip: !POSTGRES_URL },
  async (t) => {
    // Every connection of the test is named, so that the test can wait for them all to end:
    // a backend's table statistics are certain to be counted once it has exited.
    const name = `key-lookups-${process.pid}-${Date.now()}`
    const schemaUrl = new URL(await createTestSchema(t))
    schemaUrl.searchParams.set('application_name', name)
    const url = schemaUrl.toString()
    const open = new Set<Database>()
    const connect = () => {
      const database = createDatabase(url)
      open.add(database)
      return database
    }
    const close = async (database: Database) => {
      if (open.delete(database)) await database.close()
    }
    t.after(() => Promise.all([...open].map(close)))
    const admin = new pg.Client({ connectionString: POSTGRES_URL })
    await admin.connect()
    t.after(() => admin.end())
    const schema = schemaUrl.searchParams.get('options')!.split('=')[1]!
    /** The scans of webhook_deliveries and its indexes, once every connection of the test has ended. */
    const counters = async () => {
      await until(
        async () =>
          (
            await admin.query(
              'select count(*)::int as n from pg_stat_activity where application_name = $1',
              [name],
            )
          ).rows[0].n === 0,
        10_000,
        'connections ended',
      )
      await admin.query('select pg_stat_clear_snapshot()')
      const { rows } = await admin.query<{ name: string; scans: string }>(
        `select 'table' as name, seq_scan as scans from pg_stat_user_tables
           where schemaname = $1 and relname = 'webhook_deliveries'
         union all
         select 'updates', n_tup_upd from pg_stat_user_tables
           where schemaname = $1 and relname = 'webhook_deliveries'
         union all
         select indexrelname, idx_scan from pg_stat_user_indexes
           where schemaname = $1 and relname = 'webhook_deliveries'`,
        [schema],
      )
      return Object.fromEntries(rows.map((row) => [row.name, Number(row.scans)]))
    }

    const database = connect()
    await migrateToLatest(database)
    // The table as a bench or a new installation has it: never analyzed (this test does not
    // wait for autovacuum). That is when the planner hash joined the keys to a scan of it.
    await sql`alter table webhook_deliveries set (autovacuum_enabled = false)`.execute(
      database.kysely,
    )
    const app = buildApp({ database, webhooks: { allowPrivate: true } })
    const { key } = await createApiKey(database, { store: 'shop', scopes: ['read', 'write'] })
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' }
    const receiver = await startReceiver(t, () => ({ status: 200, afterMs: 200 }))
    const endpoint = await app.inject({
      method: 'POST',
      url: `${API}/webhook-endpoints`,
      headers,
      payload: JSON.stringify({ url: `${receiver.url}/live`, events: ['*'] }),
    })
    assert.equal(endpoint.statusCode, 200, endpoint.body)
    receiver.trust('/live', endpoint.json().data.secret)
    // The endpoint's history: 5,000 deliveries made long ago.
    await sql`
      insert into webhook_deliveries (store_id, id, endpoint_id, event_id, event_type, event_xid,
        event_seq, status, attempts, last_attempt_at, last_status_code, created_at)
      select 'shop', gen_random_uuid(), ${endpoint.json().data.id}::uuid, gen_random_uuid(),
        'product.created', '1'::xid8, n, 'succeeded', 1, now(), 200, now() - interval '1 day'
      from generate_series(1, 5000) n`.execute(database.kysely)
    const count = 150
    for (let i = 0; i < count; i++) {
      const res = await app.inject({
        method: 'POST',
        url: `${API}/products`,
        headers,
        payload: JSON.stringify({ name: `P${i}` }),
      })
      assert.equal(res.statusCode, 200, res.body)
    }
    await app.close()
    await close(database)
    const before = await counters()

    // Passes that claim, find the attempts and record outcomes, many at a time: 64 attempts
    // in flight, answered together 200 ms later, recorded by the next pass.
    const dispatching = connect()
    const sender = createSender({ timeoutMs: 2000, allowPrivate: true })
    t.after(() => sender.close())
    const dispatcher = startDispatcher({
      database: dispatching,
      sender,
      timeoutMs: 2000,
      schedule: [1],
    })
    await receiver.waitFor(count, 10_000)
    await dispatcher.stop()
    await close(dispatching)
    const after = await counters()

    const delta = (name: string) => (after[name] ?? 0) - (before[name] ?? 0)
    // Every delivery was claimed and its outcome recorded (the statistics are complete)...
    assert.ok(delta('updates') >= 2 * count, `updates: ${delta('updates')}`)
    assert.ok(delta('webhook_deliveries_pkey') > 0)
    // ...by key: no pass read the table, nor the endpoint's deliveries in the list's index.
    assert.equal(delta('table'), 0, 'sequential scans of webhook_deliveries')
    assert.equal(
      delta('webhook_deliveries_of_endpoint'),
      0,
      'scans of webhook_deliveries_of_endpoint',
    )
    assert.deepEqual(receiver.rejected, [])
  },
)

describeEachDialect('webhook deliveries routes', (dialect) => {
  it('lists an endpoint deliveries newest first, paged, in its store only', async (t) => {
    const s = await setup(t, dialect)
    const endpoint = await s.endpoint('/list')
    const products = []
    for (let i = 0; i < 5; i++) products.push(await s.api.createProduct({ name: `P${i}` }))
    const events = await readFeed(s.api, { atLeast: 5 })
    const seen: Record<string, any>[] = []
    let cursor: string | null = null
    do {
      const query: string = `?limit=2${cursor ? `&cursor=${cursor}` : ''}`
      const res = await s.api.get(`/webhook-endpoints/${endpoint}/deliveries${query}`)
      assert.equal(res.statusCode, 200, res.body)
      const page = res.json()
      assert.ok(page.data.length <= 2)
      seen.push(...page.data)
      cursor = page.nextCursor
    } while (cursor)
    // Newest first by the event's time; events of one millisecond come in no promised order.
    assert.deepEqual(seen.map((d) => d.eventId).sort(), events.map((e) => e.id).sort())
    const time = new Map(events.map((e) => [e.id, e.createdAt]))
    for (let i = 1; i < seen.length; i++) {
      assert.ok(time.get(seen[i - 1]!.eventId)! >= time.get(seen[i]!.eventId)!)
    }
    for (const d of seen) {
      assert.deepEqual(Object.keys(d).sort(), [
        'attempts',
        'eventId',
        'eventType',
        'id',
        'lastAttemptAt',
        'lastStatusCode',
        'nextAttemptAt',
        'status',
        'subject',
      ])
      assert.equal(d.status, 'pending')
      assert.equal(d.eventType, 'product.created')
    }
    // Each names what its event was about, from the event's record.
    const byId = new Map(products.map((product) => [product.id, product]))
    for (const d of seen) {
      const product = byId.get(d.subject.id)!
      assert.deepEqual(d.subject, { id: product.id, name: product.name, sku: null })
    }
    assert.equal(new Set(seen.map((d) => d.subject.id)).size, 5)
    const other = await s.api.newKey({ store: 'store-b' })
    let res = await s.api.get(`/webhook-endpoints/${endpoint}/deliveries`, other)
    assert.equal(res.statusCode, 404, res.body)
    res = await s.api.request(
      'POST',
      `/webhook-endpoints/${endpoint}/deliveries/${seen[0]!.id}/retry`,
      { key: other },
    )
    assert.equal(res.statusCode, 404, res.body)
    const reader = await s.api.newKey({ scopes: ['read'] })
    res = await s.api.get(`/webhook-endpoints/${endpoint}/deliveries`, reader)
    assert.equal(res.statusCode, 403, res.body)
    res = await s.api.get(`/webhook-endpoints/${endpoint}/deliveries?cursor=nonsense`)
    assert.equal(res.statusCode, 400, res.body)
  })

  it("names a variant's delivery by the variant, a deleted product's by the product as it was; null once the event is pruned", async (t) => {
    const s = await setup(t, dialect)
    const endpoint = await s.endpoint('/subjects')
    const product = await s.api.createProduct({ name: 'Wool Hat', sku: 'HAT' })
    const variant = await addVariant(s.api, product.id, { name: 'Red', sku: 'HAT-RED' })
    assert.equal((await s.api.delete(`/products/${product.id}`)).statusCode, 200)
    const created = await s.api.post('/collections', { title: 'Winter' })
    assert.equal(created.statusCode, 200, created.body)
    const collection = created.json().data
    const list = async () =>
      (await s.api.get(`/webhook-endpoints/${endpoint}/deliveries`)).json().data as Record<
        string,
        any
      >[]
    const subjects = (await list()).map((d) => [d.eventType, d.subject])
    assert.deepEqual(subjects, [
      ['collection.created', { id: collection.id, name: 'Winter', sku: null }],
      ['product.deleted', { id: product.id, name: 'Wool Hat', sku: 'HAT' }],
      ['variant.created', { id: variant.id, name: 'Red', sku: 'HAT-RED' }],
      ['product.created', { id: product.id, name: 'Wool Hat', sku: 'HAT' }],
    ])
    await s.api.database.kysely.deleteFrom('events').execute()
    assert.deepEqual(
      (await list()).map((d) => d.subject),
      [null, null, null, null],
    )
  })

  it('a manual retry makes one more attempt now; a failed delivery failing again stays failed', async (t) => {
    let up = false
    const s = await setup(t, dialect, () => (up ? 200 : 500), { schedule: [1] })
    const endpoint = await s.endpoint('/retry')
    const clock = s.clock
    s.dispatch({ scheduler: clock, random: () => 0 })
    await s.api.createProduct({ name: 'Shirt' })
    const listed = async () =>
      (await s.api.get(`/webhook-endpoints/${endpoint}/deliveries`)).json().data[0]
    await until(async () => (await listed()).attempts === 1, 5000, 'first attempt', clock)
    await clock.advance(1000)
    await until(async () => (await listed()).status === 'failed', 5000, 'failed', clock)
    let delivery = await listed()
    assert.equal(delivery.attempts, 2)
    assert.equal(delivery.lastStatusCode, 500)
    assert.equal(delivery.nextAttemptAt, null)

    const retry = () =>
      s.api.request('POST', `/webhook-endpoints/${endpoint}/deliveries/${delivery.id}/retry`)
    let res = await retry()
    assert.equal(res.statusCode, 200, res.body)
    assert.equal(res.json().data.status, 'pending')
    // Now: the clock does not move.
    await until(async () => (await listed()).attempts === 3, 3000, 'third attempt', clock)
    await until(async () => (await listed()).status === 'failed', 3000, 'failed again', clock)
    assert.equal(s.receiver.received.length, 3)

    up = true
    res = await retry()
    assert.equal(res.statusCode, 200, res.body)
    await until(async () => (await listed()).status === 'succeeded', 3000, 'succeeded', clock)
    delivery = await listed()
    assert.equal(delivery.attempts, 4)
    assert.equal(delivery.lastStatusCode, 200)
    res = await s.api.request('POST', `/webhook-endpoints/${endpoint}/deliveries/${endpoint}/retry`)
    assert.equal(res.statusCode, 404, res.body)
    assert.deepEqual(s.receiver.rejected, [])
  })

  it('a manual retry failing stays failed whatever the schedule; asked twice, it is one attempt', async (t) => {
    let answers = 0
    const s = await setup(t, dialect, () => (answers++, 500), { schedule: [1] })
    const endpoint = await s.endpoint('/retry')
    const clock = s.clock
    const first = s.dispatch({ scheduler: clock, random: () => 0 })
    await s.api.createProduct({ name: 'Shirt' })
    const listed = async () =>
      (await s.api.get(`/webhook-endpoints/${endpoint}/deliveries`)).json().data[0]
    await until(async () => (await listed()).attempts === 1, 5000, 'first attempt', clock)
    await clock.advance(1000)
    await until(async () => (await listed()).status === 'failed', 5000, 'failed', clock)
    await clock.settle(first.stop())
    // The operator lengthens WEBHOOK_RETRY_SCHEDULE: the failed delivery has had 2 attempts of
    // 4, yet a manual retry is one attempt, not a new start of the schedule.
    s.dispatch({ scheduler: clock, schedule: [1, 1, 1] })
    const { id } = await listed()
    const retry = () =>
      s.api.request('POST', `/webhook-endpoints/${endpoint}/deliveries/${id}/retry`)
    const [once, twice] = [await retry(), await retry()]
    assert.equal(once.statusCode, 200, once.body)
    assert.equal(twice.statusCode, 200, twice.body)
    await until(async () => (await listed()).attempts === 3, 3000, 'third attempt', clock)
    await until(async () => (await listed()).status === 'failed', 3000, 'failed again', clock)
    // Past when a retry on the schedule, or a second attempt for the second click, would be.
    await clock.advance(1500)
    const delivery = await listed()
    assert.equal(delivery.status, 'failed')
    assert.equal(delivery.attempts, 3)
    assert.equal(delivery.nextAttemptAt, null)
    assert.equal(answers, 3)
  })
})
