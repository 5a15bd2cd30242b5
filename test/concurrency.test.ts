import assert from 'node:assert/strict'
import { sql } from 'kysely'
import { it, type TestContext } from 'node:test'
import type { Dialect } from '../src/db/database.js'
import { API, buildTestApi, describeEachDialect, expectError, type TestApi } from './helpers.js'

/** How many requests each case fires at once. */
const N = 30

interface Answer {
  statusCode: number
  body: string
  json(): any
}

interface Server {
  api: TestApi
  post(path: string, body: unknown, key?: string): Promise<Answer>
  /** Fires every request before awaiting any, and waits for them all. */
  postAll(requests: { path: string; body: unknown; key?: string }[]): Promise<Answer[]>
}

/**
 * The real app on a fresh database, listening on a real socket, so that requests overlap as
 * they would in production (inject runs them one handler at a time). Closed by the helper.
 */
async function startServer(t: TestContext, dialect: Dialect): Promise<Server> {
  const api = await buildTestApi(t, dialect)
  const address = await api.app.listen({ port: 0, host: '127.0.0.1' })
  const post = async (path: string, body: unknown, key = api.key): Promise<Answer> => {
    const res = await fetch(`${address}${API}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    })
    const text = await res.text()
    return { statusCode: res.status, body: text, json: () => JSON.parse(text) }
  }
  const postAll = (requests: { path: string; body: unknown; key?: string }[]) =>
    Promise.all(requests.map((r) => post(r.path, r.body, r.key)))
  return { api, post, postAll }
}

/** Splits answers into the 200s and the rest, failing on anything but 200 or the expected error. */
function partition(
  answers: Answer[],
  status: number,
  code: string,
): { ok: any[]; refused: number } {
  const ok: any[] = []
  let refused = 0
  for (const answer of answers) {
    if (answer.statusCode === 200) ok.push(answer.json().data)
    else {
      expectError(answer, status, code)
      refused++
    }
  }
  return { ok, refused }
}

function assertAllOk(answers: Answer[]): any[] {
  for (const answer of answers) assert.equal(answer.statusCode, 200, answer.body)
  return answers.map((answer) => answer.json().data)
}

async function variantsOf(api: TestApi, productId: string, key?: string): Promise<any[]> {
  const res = await api.get(`/products/${productId}`, key)
  assert.equal(res.statusCode, 200, res.body)
  return res.json().data.variants
}

async function allProducts(api: TestApi): Promise<any[]> {
  const res = await api.get('/products?limit=200')
  assert.equal(res.statusCode, 200, res.body)
  assert.equal(res.json().nextCursor, null)
  return res.json().data
}

function permutations<T>(items: T[]): T[][] {
  if (items.length <= 1) return [items]
  return items.flatMap((item, i) =>
    permutations([...items.slice(0, i), ...items.slice(i + 1)]).map((rest) => [item, ...rest]),
  )
}

/** Whether `slug` is `base` itself or `base-N` with N >= 2, as the contract's suffix rule allows. */
function isSlugOf(slug: string, base: string): boolean {
  if (slug === base) return true
  const match = new RegExp(`^${base}-([1-9][0-9]*)$`).exec(slug)
  return match !== null && Number(match[1]) >= 2
}

describeEachDialect('concurrent requests', (dialect) => {
  it('gives 30 concurrent products with the same name the slugs t-shirt, t-shirt-2 ... t-shirt-30', async (t) => {
    const server = await startServer(t, dialect)
    const answers = await server.postAll(
      Array.from({ length: N }, () => ({ path: '/products', body: { name: 'T-Shirt' } })),
    )
    const products = assertAllOk(answers)
    const expected = ['t-shirt', ...Array.from({ length: N - 1 }, (_, i) => `t-shirt-${i + 2}`)]
    assert.deepEqual(products.map((p) => p.slug).sort(), expected.sort())
    assert.equal(new Set(products.map((p) => p.id)).size, N)
    const stored = await allProducts(server.api)
    assert.deepEqual(stored.map((p) => p.slug).sort(), expected.sort())
  })

  it('gives concurrent products whose names collide across bases distinct slugs, each from its own name', async (t) => {
    const server = await startServer(t, dialect)
    const names = ['T-Shirt', 'T-Shirt 2', 'T-Shirt 3']
    const bases: Record<string, string> = {
      'T-Shirt': 't-shirt',
      'T-Shirt 2': 't-shirt-2',
      'T-Shirt 3': 't-shirt-3',
    }
    const requests = Array.from({ length: N }, (_, i) => names[i % names.length]!)
    const answers = await server.postAll(
      requests.map((name) => ({ path: '/products', body: { name } })),
    )
    const products = assertAllOk(answers)
    const slugs = products.map((p) => p.slug)
    assert.equal(new Set(slugs).size, N, `slugs are not distinct: ${slugs.join(', ')}`)
    for (const product of products) {
      assert.ok(
        isSlugOf(product.slug, bases[product.name]!),
        `${product.name} got slug ${product.slug}`,
      )
    }
    const stored = await allProducts(server.api)
    assert.deepEqual(stored.map((p) => p.slug).sort(), [...slugs].sort())
  })

  it(
    'does not queue a name with a number behind its base, and the base steps over the suffix it reserved meanwhile',
    { skip: dialect !== 'postgres' },
    async (t) => {
      const server = await startServer(t, dialect)
      const { database } = server.api
      for (const expected of ['t-shirt', 't-shirt-2']) {
        const res = await server.post('/products', { name: 'T-Shirt' })
        assert.equal(res.json().data.slug, expected)
      }
      // Another write holds the counter of t-shirt. "T-Shirt" queues on it; "T-Shirt 3"
      // reserves its suffix in its own counter and is answered at once. Released, "T-Shirt"
      // (whose statement began before t-shirt-3 was taken) finds t-shirt-3 counted and claims
      // again: t-shirt-4, no deadlock, no retried transaction.
      let release!: () => void
      const released = new Promise<void>((resolve) => (release = resolve))
      t.after(() => release())
      let holder!: number
      const held = new Promise<void>((resolve, reject) => {
        database.kysely
          .transaction()
          .execute(async (tx) => {
            const { rows } = await sql<{ pid: number }>`
              select pg_backend_pid() as pid from slug_counters
              where slug = 't-shirt' for update`.execute(tx)
            holder = rows[0]!.pid
            resolve()
            await released
          })
          .catch(reject)
      })
      await held
      const waiting = async (count: number) => {
        for (;;) {
          const { rows } = await sql<{ waiting: number }>`
            with recursive blocked(pid) as (
              select pid from pg_stat_activity where ${holder}::int = any(pg_blocking_pids(pid))
              union
              select a.pid from pg_stat_activity a join blocked b on b.pid = any(pg_blocking_pids(a.pid))
            )
            select count(*)::int as waiting from blocked`.execute(database.kysely)
          if (rows[0]!.waiting >= count) return
          await new Promise((resolve) => setTimeout(resolve, 10))
        }
      }
      const base = server.post('/products', { name: 'T-Shirt' })
      await waiting(1)
      const numberedAnswer = await server.post('/products', { name: 'T-Shirt 3' })
      assert.equal(numberedAnswer.statusCode, 200, numberedAnswer.body)
      assert.equal(numberedAnswer.json().data.slug, 't-shirt-3')
      release()
      const baseAnswer = await base
      assert.equal(baseAnswer.statusCode, 200, baseAnswer.body)
      assert.equal(baseAnswer.json().data.slug, 't-shirt-4')
      assert.deepEqual(database.writeRetries!(), {
        serialization_failure: 0,
        deadlock_detected: 0,
      })
    },
  )

  it(
    'creates a family of names (Product ab12-2, -3, ...) while the counter of their base is held: none queues behind it',
    { skip: dialect !== 'postgres' },
    async (t) => {
      const server = await startServer(t, dialect)
      const { database } = server.api
      const first = await server.post('/products', { name: 'Product ab12' })
      assert.equal(first.json().data.slug, 'product-ab12')
      const done = (async () => {
        await database.kysely.transaction().execute(async (tx) => {
          await sql`select 1 from slug_counters where slug = 'product-ab12' for update`.execute(tx)
          const answers = await server.postAll(
            Array.from({ length: 8 }, (_, i) => ({
              path: '/products',
              body: { name: `Product ab12-${i + 2}` },
            })),
          )
          const slugs = assertAllOk(answers).map((p) => p.slug)
          assert.deepEqual(
            slugs,
            Array.from({ length: 8 }, (_, i) => `product-ab12-${i + 2}`),
          )
        })
      })()
      await done
      // The base steps over every suffix its family reserved.
      const next = await server.post('/products', { name: 'Product ab12' })
      assert.equal(next.json().data.slug, 'product-ab12-10')
    },
  )

  it('lets exactly one of 30 concurrent variants with the same sku on one product succeed; the rest are 409 duplicate_sku', async (t) => {
    const server = await startServer(t, dialect)
    const product = await server.api.createProduct({ name: 'Race' })
    const answers = await server.postAll(
      Array.from({ length: N }, (_, i) => ({
        path: `/products/${product.id}/variants`,
        body: { name: `Racer ${i}`, sku: 'RACE-1' },
      })),
    )
    const { ok, refused } = partition(answers, 409, 'duplicate_sku')
    assert.equal(ok.length, 1)
    assert.equal(refused, N - 1)
    const variants = await variantsOf(server.api, product.id)
    assert.deepEqual(variants, ok)
    assert.equal(variants.filter((v) => v.sku === 'RACE-1').length, 1)
  })

  it('lets exactly one of 30 concurrent variants with the same sku across products of one store succeed', async (t) => {
    const server = await startServer(t, dialect)
    const products: Record<string, any>[] = []
    for (let i = 0; i < 5; i++) products.push(await server.api.createProduct({ name: `P${i}` }))
    const answers = await server.postAll(
      Array.from({ length: N }, (_, i) => ({
        path: `/products/${products[i % products.length]!.id}/variants`,
        // Padded and bare spellings are the same sku once trimmed.
        body: { name: `Racer ${i}`, sku: i % 2 === 0 ? 'SHARED' : '  SHARED ' },
      })),
    )
    const { ok, refused } = partition(answers, 409, 'duplicate_sku')
    assert.equal(ok.length, 1)
    assert.equal(refused, N - 1)
    assert.equal(ok[0].sku, 'SHARED')
    const all = (await Promise.all(products.map((p) => variantsOf(server.api, p.id)))).flat()
    assert.deepEqual(all, ok)
  })

  it('lets exactly one variant per store win a concurrent race for one sku', async (t) => {
    const server = await startServer(t, dialect)
    const keys = [server.api.key, await server.api.newKey({ store: 'store-b' })]
    const products: Record<string, any>[] = []
    for (const key of keys) products.push(await server.api.createProduct({ name: 'Same' }, key))
    const answers = await server.postAll(
      Array.from({ length: N }, (_, i) => ({
        path: `/products/${products[i % 2]!.id}/variants`,
        body: { name: `Racer ${i}`, sku: 'PER-STORE' },
        key: keys[i % 2]!,
      })),
    )
    for (const store of [0, 1]) {
      const mine = answers.filter((_, i) => i % 2 === store)
      const { ok, refused } = partition(mine, 409, 'duplicate_sku')
      assert.equal(ok.length, 1, `store ${store}`)
      assert.equal(refused, N / 2 - 1)
      assert.deepEqual(await variantsOf(server.api, products[store]!.id, keys[store]), ok)
    }
  })

  it('lets exactly one of 30 concurrent variants with equal options in shuffled key order succeed; the rest are 409 duplicate_options', async (t) => {
    const server = await startServer(t, dialect)
    const product = await server.api.createProduct({ name: 'Options race' })
    const chosen: Record<string, string> = {
      color: 'Red',
      size: 'M',
      material: 'Cotton',
      fit: 'Slim',
    }
    const orders = permutations(Object.keys(chosen))
    const answers = await server.postAll(
      Array.from({ length: N }, (_, i) => ({
        path: `/products/${product.id}/variants`,
        body: {
          name: `Racer ${i}`,
          sku: `OPT-${i}`,
          options: Object.fromEntries(orders[i % orders.length]!.map((k) => [k, chosen[k]!])),
        },
      })),
    )
    const { ok, refused } = partition(answers, 409, 'duplicate_options')
    assert.equal(ok.length, 1)
    assert.equal(refused, N - 1)
    assert.deepEqual(ok[0].options, chosen)
    assert.deepEqual(await variantsOf(server.api, product.id), ok)
  })

  it('gives 30 concurrent variants without a position the distinct positions 1 to 30', async (t) => {
    const server = await startServer(t, dialect)
    const product = await server.api.createProduct({ name: 'Positions' })
    const answers = await server.postAll(
      Array.from({ length: N }, (_, i) => ({
        path: `/products/${product.id}/variants`,
        body: { name: `V${i}`, sku: `POS-${i}` },
      })),
    )
    const variants = assertAllOk(answers)
    const expected = Array.from({ length: N }, (_, i) => i + 1)
    assert.deepEqual(
      variants.map((v) => v.position).sort((a, b) => a - b),
      expected,
    )
    const stored = await variantsOf(server.api, product.id)
    assert.deepEqual(
      stored.map((v) => v.position),
      expected,
    )
    assert.deepEqual(new Set(stored.map((v) => v.id)), new Set(variants.map((v) => v.id)))
  })

  it('lets 30 concurrent variants without options on one product all succeed', async (t) => {
    const server = await startServer(t, dialect)
    const product = await server.api.createProduct({ name: 'Plain', price: 4.5 })
    const shapes = [{}, { options: {} }, { options: null }]
    const answers = await server.postAll(
      Array.from({ length: N }, (_, i) => ({
        path: `/products/${product.id}/variants`,
        body: { name: `Plain ${i}`, ...shapes[i % shapes.length] },
      })),
    )
    const variants = assertAllOk(answers)
    for (const variant of variants) {
      assert.deepEqual(variant.options, {})
      assert.equal(variant.price, 4.5)
    }
    const stored = await variantsOf(server.api, product.id)
    assert.equal(stored.length, N)
    assert.equal(new Set(stored.map((v) => v.position)).size, N)
  })
})
