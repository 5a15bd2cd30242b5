import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { sql } from 'kysely'
import { lockStoreRules } from '../src/collections/membership/rules-state.repository.js'
import { addVariant, buildTestApi, POSTGRES_URL, type TestApi } from './helpers.js'

/**
 * PostgreSQL runs writes concurrently: product writes and a rules change running at once
 * must never leave a member its rules do not match, nor miss one they do (the store's rules
 * lock, membership.ts).
 */

async function members(api: TestApi, id: string): Promise<string[]> {
  const ids: string[] = []
  let cursor: string | null = null
  do {
    const res = await api.get(
      `/collections/${id}/products?limit=200${cursor ? `&cursor=${cursor}` : ''}`,
    )
    assert.equal(res.statusCode, 200, res.body)
    ids.push(...res.json().data.map((p: { id: string }) => p.id))
    cursor = res.json().nextCursor
  } while (cursor)
  return ids.sort()
}

describe('collection membership under concurrent writes [postgres]', () => {
  it(
    'leaves no wrong member while products and rules change at once',
    { skip: POSTGRES_URL ? false : 'TEST_POSTGRES_URL is not set' },
    async (t) => {
      const api = await buildTestApi(t, 'postgres')
      const products: string[] = []
      for (let i = 0; i < 30; i++) {
        products.push((await api.createProduct({ name: `P${i}`, price: i % 20 })).id)
      }
      const collection = (
        await api.post('/collections', {
          title: 'Cheap',
          rules: [{ field: 'price', relation: 'less_than', value: 10 }],
        })
      ).json().data
      let stop = false
      const writer = async (seed: number) => {
        let n = seed
        while (!stop) {
          n = (n * 1103515245 + 12345) % 2147483648
          const id = products[n % products.length]!
          const res = await api.patch(`/products/${id}`, { price: n % 20 })
          assert.equal(res.statusCode, 200, res.body)
        }
      }
      const ruler = async () => {
        for (let i = 0; i < 40; i++) {
          const bound = [5, 15][i % 2]
          const res = await api.patch(`/collections/${collection.id}`, {
            rules: [{ field: 'price', relation: 'less_than', value: bound }],
          })
          assert.equal(res.statusCode, 200, res.body)
        }
        stop = true
      }
      // Every committed state must hold the rule: one statement reads one snapshot of both.
      const wrongMembers = async () => {
        const result = await sql<{ wrong: string }>`
          select count(*) as wrong from products p join collections c
            on c.store_id = p.store_id and c.id = ${collection.id}::uuid
          where (p.price_e4 < (c.rules -> 0 ->> 'value')::numeric * 10000) <> exists (
            select 1 from collection_products cp
            where cp.store_id = p.store_id and cp.collection_id = c.id and cp.product_id = p.id)
        `.execute(api.database.kysely)
        return Number(result.rows[0]!.wrong)
      }
      const seen: number[] = []
      const watcher = async () => {
        while (!stop) seen.push(await wrongMembers())
      }
      await Promise.all([...[1, 2, 3, 4, 5, 6].map(writer), ruler(), watcher()])
      assert.ok(seen.length > 0)
      assert.deepEqual(
        seen.filter((wrong) => wrong > 0),
        [],
        'a committed state with members the rules do not select',
      )
      const current = (await api.get(`/collections/${collection.id}`)).json().data
      const bound = current.rules[0].value as number
      const expected: string[] = []
      for (const id of products) {
        const product = (await api.get(`/products/${id}`)).json().data
        if (product.price < bound) expected.push(id)
      }
      assert.deepEqual(await members(api, collection.id), expected.sort())
      assert.equal(current.productsCount, expected.length)
    },
  )

  it(
    'leaves no wrong member while variants and an option rule change at once',
    { skip: POSTGRES_URL ? false : 'TEST_POSTGRES_URL is not set' },
    async (t) => {
      // A variant's PATCH takes the store's rules lock inside its one statement, before the
      // product's row lock, as a rules change takes them: the other order would deadlock.
      const api = await buildTestApi(t, 'postgres')
      const variants: { product: string; variant: string }[] = []
      for (let i = 0; i < 20; i++) {
        const product = (await api.createProduct({ name: `P${i}` })).id
        const color = i % 2 ? 'Red' : 'Blue'
        const variant = (
          await addVariant(api, product, { name: color, sku: `S${i}`, options: { Color: color } })
        ).id
        variants.push({ product, variant })
      }
      const rule = (value: string) => [{ field: 'option.Color', relation: 'equals', value }]
      const collection = (
        await api.post('/collections', { title: 'Red', rules: rule('Red') })
      ).json().data
      let stop = false
      const writer = async (seed: number) => {
        let n = seed
        while (!stop) {
          n = (n * 1103515245 + 12345) % 2147483648
          const { product, variant } = variants[n % variants.length]!
          const res = await api.patch(`/products/${product}/variants/${variant}`, {
            options: { Color: n % 3 ? 'Red' : 'Blue' },
          })
          assert.equal(res.statusCode, 200, res.body)
        }
      }
      const ruler = async () => {
        try {
          for (let i = 0; i < 40; i++) {
            const res = await api.patch(`/collections/${collection.id}`, {
              rules: rule(i % 2 ? 'Red' : 'Blue'),
            })
            assert.equal(res.statusCode, 200, res.body)
          }
        } finally {
          stop = true
        }
      }
      const wrongMembers = async () => {
        const result = await sql<{ wrong: string }>`
          select count(*) as wrong from products p join collections c
            on c.store_id = p.store_id and c.id = ${collection.id}::uuid
          where exists (
            select 1 from variants v where v.store_id = p.store_id and v.product_id = p.id
              and lower(v.options ->> 'Color') = lower(c.rules -> 0 ->> 'value')
          ) <> exists (
            select 1 from collection_products cp
            where cp.store_id = p.store_id and cp.collection_id = c.id and cp.product_id = p.id)
        `.execute(api.database.kysely)
        return Number(result.rows[0]!.wrong)
      }
      const seen: number[] = []
      const watcher = async () => {
        while (!stop) seen.push(await wrongMembers())
      }
      await Promise.all([...[1, 2, 3, 4, 5, 6].map(writer), ruler(), watcher()])
      assert.ok(seen.length > 0)
      assert.deepEqual(
        seen.filter((wrong) => wrong > 0),
        [],
        'a committed state with members the rules do not select',
      )
      assert.equal(await wrongMembers(), 0)
    },
  )

  it(
    'lets no write skip memberships while the store s first collection is being made',
    { skip: POSTGRES_URL ? false : 'TEST_POSTGRES_URL is not set' },
    async (t) => {
      // A write in a store with no collection reads that under the rules lock and skips the
      // memberships; a create that committed while it waited for the lock must be seen.
      const api = await buildTestApi(t, 'postgres')
      const products: string[] = []
      for (let i = 0; i < 12; i++) {
        products.push((await api.createProduct({ name: `P${i}`, price: i % 20 })).id)
      }
      let stop = false
      const writer = async (seed: number) => {
        let n = seed
        while (!stop) {
          n = (n * 1103515245 + 12345) % 2147483648
          const id = products[n % products.length]!
          const res = await api.patch(`/products/${id}`, { price: n % 20 })
          assert.equal(res.statusCode, 200, res.body)
        }
      }
      const wrongMembers = async () => {
        const result = await sql<{ wrong: string }>`
          select count(*) as wrong from products p join collections c on c.store_id = p.store_id
          where (p.price_e4 < 100000) <> exists (
            select 1 from collection_products cp
            where cp.store_id = p.store_id and cp.collection_id = c.id and cp.product_id = p.id)
        `.execute(api.database.kysely)
        return Number(result.rows[0]!.wrong)
      }
      const seen: number[] = []
      const maker = async () => {
        try {
          await makeAndDrop()
        } finally {
          stop = true
        }
      }
      const makeAndDrop = async () => {
        for (let i = 0; i < 25; i++) {
          const made = await api.post('/collections', {
            title: 'Cheap',
            rules: [{ field: 'price', relation: 'less_than', value: 10 }],
          })
          assert.equal(made.statusCode, 200, made.body)
          for (let j = 0; j < 3; j++) seen.push(await wrongMembers())
          const gone = await api.delete(`/collections/${made.json().data.id}`)
          assert.equal(gone.statusCode, 200, gone.body)
        }
      }
      await Promise.all([...[1, 2, 3, 4, 5, 6].map(writer), maker()])
      assert.deepEqual(
        seen.filter((wrong) => wrong > 0),
        [],
        'a committed state where a write skipped the new collection',
      )
    },
  )
})

describe('the store rules lock is one lock, spelled once [postgres]', () => {
  it(
    "holds back every product write of its store while a rules change has it, and only its store's",
    { skip: POSTGRES_URL ? false : 'TEST_POSTGRES_URL is not set' },
    async (t) => {
      const api = await buildTestApi(t, 'postgres')
      const other = await api.newKey({ store: 'store-b' })
      const product = await api.createProduct({ name: 'Held', price: 1 })
      const elsewhere = await api.createProduct({ name: 'Free', price: 1 }, other)
      // A rules change's side of the lock (lockStoreRules, exclusive), held open.
      const change = await api.database.kysely.startTransaction().execute()
      t.after(() =>
        change
          .rollback()
          .execute()
          .catch(() => {}),
      )
      await lockStoreRules(change, 'store-a', 'exclusive')
      // The product write's side of the lock: product_write_state, in its one statement or
      // its transaction path. Both must wait; another store's must not.
      let answered = false
      const patched = api.patch(`/products/${product.id}`, { price: 2 }).then((res) => {
        answered = true
        return res
      })
      const added = api.post(`/products/${product.id}/variants`, { name: 'V', sku: 'HELD-1' })
      const free = await api.patch(`/products/${elsewhere.id}`, { price: 2 }, { key: other })
      assert.equal(free.statusCode, 200, free.body)
      await new Promise((resolve) => setTimeout(resolve, 300))
      assert.equal(answered, false, 'a PATCH of the store ran while its rules lock was held')
      await change.commit().execute()
      assert.equal((await patched).statusCode, 200)
      assert.equal((await added).statusCode, 200)
    },
  )
})
