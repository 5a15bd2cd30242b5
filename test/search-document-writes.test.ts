import assert from 'node:assert/strict'
import { it } from 'node:test'
import { addVariant, buildTestApi, describeEachDialect, type TestApi } from './helpers.js'

type Json = Record<string, any>

async function page(api: TestApi, query: string): Promise<Json> {
  const res = await api.get(`/products?${query}`)
  assert.equal(res.statusCode, 200, `?${query} answered ${res.statusCode}: ${res.body}`)
  return res.json()
}

async function patch(api: TestApi, id: string, body: Json): Promise<Json> {
  const res = await api.patch(`/products/${id}`, body)
  assert.equal(res.statusCode, 200, res.body)
  return res.json().data
}

/**
 * What a write leaves in a product's search document and facet rows (decision 0034: on
 * PostgreSQL read and written in one statement each, deletes and upserts of different rows).
 */
describeEachDialect('search documents after each write', (dialect) => {
  it('replaces a product’s facet values: removed, added, and a value whose case changed', async (t) => {
    const api = await buildTestApi(t, dialect)
    const tee = await api.createProduct({ name: 'Tee', tags: ['red', 'Sale', 'Old'] })
    await api.createProduct({ name: 'Mug', tags: ['Sale'] })
    await patch(api, tee.id, { tags: ['Red', 'sale', 'New'] })
    const facets = (await page(api, 'facets=tag')).facets.tag as Json[]
    const tee2 = (await page(api, 'facets=tag&tag=New')).data.map((p: Json) => p.name)
    assert.deepEqual(tee2, ['Tee'])
    const byValue = Object.fromEntries(facets.map((f) => [f.value, f.count]))
    // Old is gone, New is there; red is shown as now written (Red); Sale keeps both products.
    assert.equal(byValue.Old, undefined)
    assert.equal(byValue.New, 1)
    assert.equal(byValue.Red, 1)
    assert.equal(byValue.red, undefined)
    assert.equal((byValue.Sale ?? 0) + (byValue.sale ?? 0), 2)
    assert.deepEqual((await page(api, 'q=old')).data, [])
  })

  it('keeps a document that a write leaves as it was, and finds the write’s new fields', async (t) => {
    const api = await buildTestApi(t, dialect)
    const tee = await api.createProduct({ name: 'Linen tee', tags: ['Summer'], price: 10 })
    await addVariant(api, tee.id, { name: 'Large', sku: 'LT-L', options: { Size: 'L' } })
    // A PATCH of the price alone: the text is unchanged, the sort and filter keys follow.
    await patch(api, tee.id, { price: 25 })
    const found = await page(api, 'q=linen&price_min=20&facets=tag,option.Size')
    assert.deepEqual(
      found.data.map((p: Json) => [p.name, p.price]),
      [['Linen tee', 25]],
    )
    assert.deepEqual(found.facets.tag, [{ value: 'Summer', count: 1 }])
    assert.deepEqual(found.facets['option.Size'], [{ value: 'L', count: 1 }])
    assert.deepEqual(
      (await page(api, 'q=lt-l')).data.map((p: Json) => p.name),
      ['Linen tee'],
    )
    // A PATCH of the name: found by the new one (the old stays in the slug, which is searched).
    await patch(api, tee.id, { name: 'Wool tee' })
    assert.deepEqual(
      (await page(api, 'q=wool')).data.map((p: Json) => p.name),
      ['Wool tee'],
    )
  })

  it('removes a deleted product’s document and facet values', async (t) => {
    const api = await buildTestApi(t, dialect)
    const tee = await api.createProduct({ name: 'Tee', tags: ['Gone'] })
    await api.createProduct({ name: 'Mug', tags: ['Kept'] })
    const res = await api.delete(`/products/${tee.id}`)
    assert.equal(res.statusCode, 200, res.body)
    const all = await page(api, 'facets=tag')
    assert.deepEqual(all.facets.tag, [{ value: 'Kept', count: 1 }])
    assert.deepEqual((await page(api, 'q=tee')).data, [])
  })
})
