import assert from 'node:assert/strict'
import { it } from 'node:test'
import { buildTestApi, describeEachDialect, type TestApi } from './helpers.js'
import { csv, importText } from './import-helpers.js'
import { readFeed } from './event-helpers.js'

const HEAD = 'Handle,Title,Option1 Name,Option1 Value,Variant SKU,Variant Price'

async function members(api: TestApi, id: string): Promise<string[]> {
  const res = await api.get(`/collections/${id}/products?limit=200`)
  assert.equal(res.statusCode, 200, res.body)
  return res
    .json()
    .data.map((p: { slug: string }) => p.slug)
    .sort()
}

/** An import's products enter and leave smart collections as the API's writes make them. */
describeEachDialect('collections: imports', (dialect) => {
  it("an import's new and changed products are members exactly when their rules match", async (t) => {
    const api = await buildTestApi(t, dialect)
    const sized = (
      await api.post('/collections', {
        title: 'Size M',
        rules: [{ field: 'option.size', relation: 'equals', value: 'm' }],
      })
    ).json().data
    const cheap = (
      await api.post('/collections', {
        title: 'Cheap',
        rules: [{ field: 'price', relation: 'less_than', value: 10 }],
      })
    ).json().data
    const first = await importText(
      api.database,
      'store-a',
      csv(HEAD, 'mug,Mug,Size,S,MUG-S,9.5', 'mug,,,M,MUG-M,10', 'cap,Cap,,,,12'),
    )
    assert.deepEqual(first.errors, [])
    assert.deepEqual(await members(api, sized.id), ['mug'])
    assert.deepEqual(await members(api, cheap.id), ['mug'])
    const second = await importText(
      api.database,
      'store-a',
      csv(HEAD, 'mug,Mug,Size,S,MUG-S,19.5', 'mug,,,L,MUG-M,10', 'cap,Cap,,,,2'),
    )
    assert.deepEqual(second.errors, [])
    assert.deepEqual(await members(api, sized.id), [])
    assert.deepEqual(await members(api, cheap.id), ['cap'])
    const events = await readFeed(api, { query: 'type=collection.products_changed&limit=100' })
    const replay = new Map<string, Set<string>>()
    for (const e of events) {
      const set = replay.get(e.data.object.collectionId) ?? new Set()
      for (const id of e.data.object.added) set.add(id)
      for (const id of e.data.object.removed) set.delete(id)
      replay.set(e.data.object.collectionId, set)
    }
    assert.equal(replay.get(sized.id)?.size, 0)
    assert.equal(replay.get(cheap.id)?.size, 1)
  })
})
