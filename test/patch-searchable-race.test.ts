import assert from 'node:assert/strict'
import { it } from 'node:test'
import { buildTestApi, defineMetafield, describeEachDialect, type TestApi } from './helpers.js'

/**
 * A product's PATCH racing a switch of a definition's `searchable` (CONTRACT.md part 4): once
 * both have answered, a product is found by a word of its value if and only if the definition
 * is then searchable, and by its new name. On PostgreSQL the switch rebuilds the documents of
 * the products holding a value, under their row locks; a PATCH that waited for such a lock
 * must build its document with the definitions it committed (product_document_extras reads
 * them after the lock), not with those of its statement's snapshot. On SQLite the two run one
 * after the other, often in one group commit: the later must not use definitions the earlier
 * read before the switch.
 */
const ROUNDS = 40
const PRODUCTS_PER_ROUND = 6

async function idsFound(api: TestApi, word: string): Promise<string[]> {
  const res = await api.get(`/products?q=${word}&limit=200`)
  assert.equal(res.statusCode, 200, res.body)
  return res.json().data.map((p: { id: string }) => p.id)
}

const later = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

describeEachDialect('a product PATCH racing a searchable switch', (dialect) => {
  it('search follows the definition as it stands once both answered, and the new name', async (t) => {
    const api = await buildTestApi(t, dialect)
    const material = await defineMetafield(api, {
      key: 'material',
      type: 'single_line_text_field',
      searchable: false,
    })
    let searchable = false
    for (let round = 0; round < ROUNDS; round++) {
      const word = `fibre${round}x`
      const ids: string[] = []
      for (let i = 0; i < PRODUCTS_PER_ROUND; i++) {
        const product = await api.createProduct({
          name: `Item ${round} ${i}`,
          metafields: { 'custom.material': `Spun ${word}` },
        })
        ids.push(product.id)
      }
      searchable = !searchable
      // The PATCHes start 3 ms apart and the switch among them (0 to 12 ms after the first),
      // so some PATCHes run before the switch locks the products (or, on SQLite, before it in
      // one group commit), some wait for its lock, some come after it committed.
      const [switched, ...patched] = await Promise.all([
        later((round % 5) * 3).then(() =>
          api.patch(`/metafield-definitions/${material.id}`, { searchable }),
        ),
        ...ids.map((id, i) =>
          later(i * 3).then(() => api.patch(`/products/${id}`, { name: `Renamed ${round}x${i}y` })),
        ),
      ])
      assert.equal(switched!.statusCode, 200, switched!.body)
      assert.equal(switched!.json().data.searchable, searchable)
      for (const answer of patched) assert.equal(answer.statusCode, 200, answer.body)

      assert.deepEqual(
        (await idsFound(api, word)).sort(),
        searchable ? [...ids].sort() : [],
        `round ${round}: found by "${word}" exactly when the definition is searchable (${searchable})`,
      )
      for (const [i, id] of ids.entries()) {
        assert.deepEqual(await idsFound(api, `${round}x${i}y`), [id], `round ${round}: new name`)
      }
    }
  })
})
