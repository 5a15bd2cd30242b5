import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { sql } from 'kysely'
import { buildTestApi, POSTGRES_URL } from './helpers.js'

/**
 * Manual adds, smart matches and deletes of the same products running at once must never leave
 * a member whose product is gone, nor a member of a deleted collection.
 */
describe('members of deleted products [postgres]', () => {
  it(
    'no member outlives its product while adds, matches and deletes run at once',
    { skip: POSTGRES_URL ? false : 'TEST_POSTGRES_URL is not set' },
    async (t) => {
      const api = await buildTestApi(t, 'postgres')
      const manual = (await api.post('/collections', { title: 'Picks' })).json().data
      const smart = (
        await api.post('/collections', {
          title: 'Tagged',
          rules: [{ field: 'tag', relation: 'equals', value: 'race' }],
        })
      ).json().data
      for (let round = 0; round < 5; round++) {
        const ids: string[] = []
        for (let i = 0; i < 12; i++) {
          ids.push((await api.createProduct({ name: `R${round}-${i}` })).id)
        }
        // The delete of each product starts a little later each time (0 to 22 ms), so some
        // land before the add and the match, some between, some after.
        const later = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
        const answers = await Promise.all(
          ids.flatMap((id, i) => [
            api.post(`/collections/${manual.id}/products`, { product_ids: [id] }),
            api.patch(`/products/${id}`, { tags: ['race'] }),
            later(i * 2).then(() => api.delete(`/products/${id}`)),
          ]),
        )
        for (const answer of answers) {
          // A write that came after the delete finds no product: 400 (add) or 404 (PATCH).
          assert.ok([200, 400, 404].includes(answer.statusCode), answer.body)
        }
      }
      const { rows } = await sql<{ orphans: string }>`
        select count(*) as orphans from collection_products cp
        where not exists (select 1 from products p
          where p.store_id = cp.store_id and p.id = cp.product_id)`.execute(api.database.kysely)
      assert.equal(Number(rows[0]!.orphans), 0)
      for (const id of [manual.id, smart.id]) {
        const read = (await api.get(`/collections/${id}`)).json().data
        assert.equal(read.productsCount, 0, `every product is deleted: ${read.title} is empty`)
      }
      // A collection's delete takes its members with it, products staying.
      const kept = await api.createProduct({ name: 'Kept', tags: ['race'] })
      await api.post(`/collections/${manual.id}/products`, { product_ids: [kept.id] })
      for (const id of [manual.id, smart.id]) {
        assert.equal((await api.get(`/collections/${id}`)).json().data.productsCount, 1)
        assert.equal((await api.delete(`/collections/${id}`)).statusCode, 200)
      }
      const left = await sql<{ count: string }>`
        select count(*) as count from collection_products`.execute(api.database.kysely)
      assert.equal(Number(left.rows[0]!.count), 0, 'no member of a deleted collection is left')
      assert.equal((await api.get(`/products/${kept.id}`)).statusCode, 200)
    },
  )
})
