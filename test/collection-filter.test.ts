import assert from 'node:assert/strict'
import { it } from 'node:test'
import { buildTestApi, describeEachDialect, expectError, type TestApi } from './helpers.js'

/** `GET /products?collection=<id>` (part 4): with q, the other filters, facets and cursors. */

async function createCollection(api: TestApi, body: Record<string, unknown>, key?: string) {
  const res = await api.post('/collections', body, key)
  assert.equal(res.statusCode, 200, res.body)
  return res.json().data
}

async function page(api: TestApi, query: string) {
  const res = await api.get(`/products?${query}`)
  assert.equal(res.statusCode, 200, res.body)
  return res.json()
}

async function names(api: TestApi, query: string): Promise<string[]> {
  return (await page(api, query)).data.map((p: { name: string }) => p.name)
}

describeEachDialect('the collection filter of the product list', (dialect) => {
  it('keeps the members of a manual or smart collection, with q, filters and facets', async (t) => {
    const api = await buildTestApi(t, dialect)
    const hat = await api.createProduct({ name: 'Red Hat', vendor: 'Acme', tags: ['sale'] })
    const cap = await api.createProduct({ name: 'Blue Cap', vendor: 'Globex', price: 5 })
    await api.createProduct({ name: 'Red Scarf', vendor: 'Acme' })
    const picks = await createCollection(api, { title: 'Picks' })
    const added = await api.post(`/collections/${picks.id}/products`, {
      product_ids: [hat.id, cap.id],
    })
    assert.equal(added.statusCode, 200, added.body)
    const cheap = await createCollection(api, {
      title: 'Cheap',
      rules: [{ field: 'price', relation: 'less_than', value: 1 }],
    })

    assert.deepEqual(await names(api, `collection=${picks.id}`), ['Blue Cap', 'Red Hat'])
    assert.deepEqual(await names(api, `collection=${picks.id.toUpperCase()}`), [
      'Blue Cap',
      'Red Hat',
    ])
    assert.deepEqual(await names(api, `collection=${cheap.id}`), ['Red Scarf', 'Red Hat'])
    // Repeated: any of them; with another filter and q: all must hold.
    assert.deepEqual(await names(api, `collection=${picks.id}&collection=${cheap.id}&sort=name`), [
      'Blue Cap',
      'Red Hat',
      'Red Scarf',
    ])
    assert.deepEqual(await names(api, `collection=${cheap.id}&tag=SALE`), ['Red Hat'])
    assert.deepEqual(await names(api, `collection=${picks.id}&q=red`), ['Red Hat'])
    // Facets count within the collection.
    const faceted = await page(api, `collection=${picks.id}&vendor=Acme&facets=vendor,price`)
    assert.deepEqual(faceted.facets.vendor, [
      { value: 'Acme', count: 1 },
      { value: 'Globex', count: 1 },
    ])
    assert.deepEqual(faceted.facets.price, { min: 0, max: 0 })
    const prices = await page(api, `collection=${picks.id}&facets=price`)
    assert.deepEqual(prices.facets.price, { min: 0, max: 5 })
    // A member that leaves is no longer listed.
    await api.delete(`/collections/${picks.id}/products/${cap.id}`)
    assert.deepEqual(await names(api, `collection=${picks.id}`), ['Red Hat'])
  })

  it('matches nothing for an unknown id or another store s, refuses a malformed one', async (t) => {
    const api = await buildTestApi(t, dialect)
    const product = await api.createProduct({ name: 'Hat' })
    const mine = await createCollection(api, { title: 'Mine' })
    await api.post(`/collections/${mine.id}/products`, { product_ids: [product.id] })
    const otherKey = await api.newKey({ store: 'store-b' })
    const theirs = await createCollection(api, { title: 'Theirs' }, otherKey)
    assert.deepEqual(await names(api, 'collection=00000000-0000-4000-8000-000000000000'), [])
    assert.deepEqual(await names(api, `collection=${theirs.id}`), [])
    assert.deepEqual(await names(api, `collection=${theirs.id}&collection=${mine.id}`), ['Hat'])
    for (const bad of ['nope', `${mine.id}x`, '']) {
      const body = expectError(
        await api.get(`/products?collection=${bad}`),
        400,
        'validation_failed',
      )
      assert.deepEqual(
        body.details!.map((d) => d.field),
        ['collection'],
        bad,
      )
    }
  })

  it('binds a cursor to the collection ids, in any order', async (t) => {
    const api = await buildTestApi(t, dialect)
    const a = await createCollection(api, { title: 'A' })
    const b = await createCollection(api, { title: 'B' })
    const ids = []
    for (const name of ['One', 'Two', 'Three']) ids.push((await api.createProduct({ name })).id)
    await api.post(`/collections/${a.id}/products`, { product_ids: ids })
    const first = await page(api, `collection=${a.id}&collection=${b.id}&limit=2`)
    assert.equal(first.data.length, 2)
    const next = first.nextCursor
    assert.equal(typeof next, 'string')
    const second = await page(api, `collection=${b.id}&collection=${a.id}&limit=2&cursor=${next}`)
    assert.deepEqual(
      second.data.map((p: { name: string }) => p.name),
      ['One'],
    )
    expectError(
      await api.get(`/products?collection=${a.id}&limit=2&cursor=${next}`),
      400,
      'validation_failed',
    )
    expectError(await api.get(`/products?limit=2&cursor=${next}`), 400, 'validation_failed')
  })
})
