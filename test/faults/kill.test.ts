import assert from 'node:assert/strict'
import { it, type TestContext } from 'node:test'
import { API, describeEachDialect } from '../helpers.js'
import { createKey, request, startServe } from '../process-helpers.js'
import { post, randomMs, sleep, startCatalogLoad, type Call } from './load.js'
import { scratchDatabaseUrl } from './scratch-database.js'

const RUNS = 5
const CLIENTS = 12

/** Every product of the store, through the list endpoint, page by page. */
async function listAllProducts(server: { url: string }, key: string) {
  const products: { id: string; name: string }[] = []
  let cursor: string | null = null
  do {
    const query: string = cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''
    const page = await request(server, 'GET', `${API}/products?limit=200${query}`, { key })
    assert.equal(page.status, 200, JSON.stringify(page.body))
    products.push(...page.body.data)
    cursor = page.body.nextCursor
  } while (cursor)
  return products
}

/** Every event of the store, through the feed, page by page: "type id" of each. */
async function readAllEvents(server: { url: string }, key: string) {
  const events: string[] = []
  let after = ''
  for (;;) {
    const query = after ? `&after=${after}` : ''
    const page = await request(server, 'GET', `${API}/events?limit=500${query}`, { key })
    assert.equal(page.status, 200, JSON.stringify(page.body))
    for (const event of page.body.data) events.push(`${event.type} ${event.data.object.id}`)
    after = page.body.nextCursor
    if (!page.body.hasMore) return events
  }
}

const answered200 = (call: Call) => call.outcome?.answered === true && call.outcome.status === 200

describeEachDialect('faults: kill -9 under load', (dialect) => {
  it(`every write answered 200 survives SIGKILL; in-flight writes retried with their Idempotency-Key make no duplicates (${RUNS} runs)`, async (t) => {
    const DATABASE_URL = await scratchDatabaseUrl(t, dialect)
    const { key } = await createKey(DATABASE_URL, 'shop')
    for (let run = 1; run <= RUNS; run++) {
      await t.test(`run ${run}/${RUNS}`, (st) => killAndCheck(st, DATABASE_URL, key, run))
    }
  })

  async function killAndCheck(t: TestContext, DATABASE_URL: string, key: string, run: number) {
    const first = await startServe(t, { DATABASE_URL })
    const prefix = `kill-${run}-${Date.now()}`
    const loadStart = performance.now()
    const load = startCatalogLoad({ url: () => first.url, key, prefix, clients: CLIENTS })
    // A random moment once writes flow: anywhere from soon after the first answers
    // to a second and a half later.
    await load.acknowledged(20)
    await sleep(randomMs(200, 1500))
    const killedAfter = Math.round(performance.now() - loadStart)
    first.child.kill('SIGKILL')
    assert.deepEqual(await first.exited, { code: null, signal: 'SIGKILL' })
    await load.done

    const acknowledged = load.calls.filter(answered200)
    const unanswered = load.calls.filter((call) => call.outcome?.answered === false)
    const otherwise = load.calls.filter((call) => !answered200(call) && call.outcome?.answered)
    assert.deepEqual(
      otherwise.map((call) => JSON.stringify(call.outcome)),
      [],
      'every answer before the kill is a 200',
    )

    const second = await startServe(t, { DATABASE_URL })
    let found = 0
    const missing: string[] = []
    const products = new Map<string, any>()
    for (const call of acknowledged) {
      const record = call.outcome!.answered && call.outcome!.body.data
      const productId: string = call.path === '/products' ? record.id : record.productId
      let product = products.get(productId)
      if (product === undefined) {
        const read = await request(second, 'GET', `${API}/products/${productId}`, { key })
        product = read.status === 200 ? read.body.data : null
        products.set(productId, product)
      }
      const stored =
        product === null
          ? undefined
          : call.path === '/products'
            ? productAsCreated(product)
            : product.variants.find((variant: { id: string }) => variant.id === record.id)
      if (stored !== undefined && JSON.stringify(stored) === JSON.stringify(record)) found++
      else missing.push(`${call.path} ${record.id}`)
    }

    const events = await readAllEvents(second, key)
    const retries = await Promise.all(
      unanswered.map(async (call) => ({ call, outcome: await post(second.url, key, call) })),
    )
    const retriedOk = retries.filter(({ outcome }) => outcome.answered && outcome.status === 200)
    const replayed = retriedOk.filter(({ outcome }) => outcome.answered && outcome.replayed)
    const retryFailures = retries
      .filter(({ outcome }) => !(outcome.answered && outcome.status === 200))
      .map(
        ({ call, outcome }) =>
          `sku ${String(call.body.sku)}: ${outcome.answered ? `${outcome.status} ${outcome.body?.error}` : outcome.error}`,
      )

    // Every product name of this run is unique, so a name seen twice is a duplicate.
    const names = new Map<string, number>()
    for (const product of await listAllProducts(second, key)) {
      if (product.name.startsWith(`${prefix}-`))
        names.set(product.name, (names.get(product.name) ?? 0) + 1)
    }
    const duplicates = [...names].filter(([, count]) => count > 1).map(([name]) => name)

    t.diagnostic(
      `kill -9 [${dialect}] run ${run}/${RUNS} (killed ${killedAfter} ms into the load): acknowledged ${acknowledged.length}, found ${found}; ` +
        `in flight ${unanswered.length}, retried ${retries.length} (200: ${retriedOk.length}, ` +
        `replayed: ${replayed.length}), duplicates ${duplicates.length}`,
    )
    await t.test('every record answered 200 reads back as it was answered', () => {
      assert.deepEqual(missing.slice(0, 5), [])
      assert.equal(found, acknowledged.length)
    })
    // Read before the retries below, which append events of their own.
    await t.test('every write answered 200 has its event in the feed, once', () => {
      const counts = new Map<string, number>()
      for (const event of events) counts.set(event, (counts.get(event) ?? 0) + 1)
      const without = acknowledged
        .map((call) => {
          const record = call.outcome!.answered && call.outcome!.body.data
          return `${call.path === '/products' ? 'product' : 'variant'}.created ${record.id}`
        })
        .filter((event) => counts.get(event) !== 1)
      assert.deepEqual(without.slice(0, 5), [], `${without.length} without exactly one event`)
    })
    // These hold only with Idempotency-Key support: a write that committed but whose answer was
    // lost must be replayed, not made again (a second product) nor refused (the variant's sku
    // is already taken by its own first attempt).
    await t.test(
      'in-flight requests retried with their Idempotency-Key: 200 each, no duplicates',
      () => {
        assert.deepEqual(retryFailures.slice(0, 3), [], `${retryFailures.length} retries failed`)
        assert.deepEqual(duplicates, [], 'products created twice')
      },
    )
  }
})

/**
 * A product read back, as its create answered it: the load only adds variants, and each one
 * raised the product's version by 1 and moved its updatedAt to the variant's creation time, or
 * a millisecond past the time before when that is later (the adds commit in any order), so it
 * ends between the latest of those times and a millisecond more per variant. When the record
 * read does not bear that out, it is returned as read, so it matches nothing.
 */
function productAsCreated(product: Record<string, any>): Record<string, unknown> {
  const { variants, ...record } = product as { variants: { createdAt: string }[] }
  const { createdAt, updatedAt, version } = record as Record<string, any>
  const latest = Math.max(Date.parse(createdAt), ...variants.map((v) => Date.parse(v.createdAt)))
  const moved = Date.parse(updatedAt) - latest
  if (!(moved >= 0 && moved <= variants.length)) return record
  return { ...record, version: version - variants.length, updatedAt: createdAt }
}
