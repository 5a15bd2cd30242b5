import assert from 'node:assert/strict'
import { it } from 'node:test'
import { buildTestApi, describeEachDialect, type TestApi } from './helpers.js'

/**
 * A collection's order when it changes: its members move to the new order's index (0055), also
 * those added after the change, by a product write or by hand; and manual moves keep the
 * positions dense (1 to n, no gap, no tie), checked against a list moved in memory.
 */

async function createCollection(api: TestApi, body: Record<string, unknown>) {
  const res = await api.post('/collections', body)
  assert.equal(res.statusCode, 200, res.body)
  return res.json().data
}

async function memberNames(api: TestApi, id: string): Promise<string[]> {
  const names: string[] = []
  let cursor: string | null = null
  do {
    const res = await api.get(
      `/collections/${id}/products?limit=3${cursor ? `&cursor=${cursor}` : ''}`,
    )
    assert.equal(res.statusCode, 200, res.body)
    const body = res.json()
    names.push(...body.data.map((p: { name: string }) => p.name))
    cursor = body.nextCursor
  } while (cursor !== null)
  return names
}

describeEachDialect('collections: order', (dialect) => {
  it('members added after a change of sort order, by a product write or by hand, are in the new order', async (t) => {
    const api = await buildTestApi(t, dialect)
    for (const [name, price] of [
      ['Cherry', 3],
      ['apple', 5],
      ['Banana', 1],
    ] as const) {
      await api.createProduct({ name, price, tags: ['fruit'] })
    }
    const smart = await createCollection(api, {
      title: 'Fruit',
      rules: [{ field: 'tag', relation: 'equals', value: 'fruit' }],
      sort_order: 'price',
    })
    assert.deepEqual(await memberNames(api, smart.id), ['Banana', 'Cherry', 'apple'])
    // A product write that reads (and caches) the store's smart rules before the change.
    await api.createProduct({ name: 'Zucchini', price: 2 })
    assert.equal(
      (await api.patch(`/collections/${smart.id}`, { sort_order: 'name' })).statusCode,
      200,
    )
    assert.deepEqual(await memberNames(api, smart.id), ['apple', 'Banana', 'Cherry'])
    // A product write after the change adds its member in the new order.
    await api.createProduct({ name: 'Date', price: 0.5, tags: ['fruit'] })
    const elder = await api.createProduct({ name: 'elderberry', price: 9 })
    await api.patch(`/products/${elder.id}`, { tags: ['fruit'] })
    assert.deepEqual(await memberNames(api, smart.id), [
      'apple',
      'Banana',
      'Cherry',
      'Date',
      'elderberry',
    ])
    await api.patch(`/collections/${smart.id}`, { sort_order: '-price' })
    assert.deepEqual(await memberNames(api, smart.id), [
      'elderberry',
      'apple',
      'Cherry',
      'Banana',
      'Date',
    ])

    // A manual collection sorted by a field, then by hand again.
    const manual = await createCollection(api, { title: 'Picks', sort_order: '-name' })
    const fig = await api.createProduct({ name: 'Fig' })
    const grape = await api.createProduct({ name: 'grape' })
    const add = await api.post(`/collections/${manual.id}/products`, {
      product_ids: [fig.id, elder.id, grape.id],
    })
    assert.equal(add.statusCode, 200, add.body)
    assert.deepEqual(await memberNames(api, manual.id), ['grape', 'Fig', 'elderberry'])
    await api.patch(`/collections/${manual.id}`, { sort_order: 'manual' })
    assert.deepEqual(await memberNames(api, manual.id), ['Fig', 'elderberry', 'grape'])
    await api.patch(`/collections/${manual.id}`, { sort_order: 'newest' })
    assert.deepEqual(await memberNames(api, manual.id), ['grape', 'Fig', 'elderberry'])
  })

  it('moves to first, last, the middle and past the end keep the positions dense and ordered', async (t) => {
    const api = await buildTestApi(t, dialect)
    const collection = await createCollection(api, { title: 'Shelf' })
    const ids: string[] = []
    const nameOf = new Map<string, string>()
    for (let i = 0; i < 12; i++) {
      const product = await api.createProduct({ name: `P${i}` })
      ids.push(product.id)
      nameOf.set(product.id, product.name)
    }
    const add = await api.post(`/collections/${collection.id}/products`, { product_ids: ids })
    assert.equal(add.statusCode, 200, add.body)
    const model = [...ids]
    const move = async (id: string, position: number) => {
      const res = await api.patch(`/collections/${collection.id}/products/${id}`, { position })
      assert.equal(res.statusCode, 200, res.body)
      model.splice(model.indexOf(id), 1)
      model.splice(Math.min(position, model.length + 1) - 1, 0, id)
      assert.deepEqual(
        await memberNames(api, collection.id),
        model.map((m) => nameOf.get(m)),
        `after moving ${nameOf.get(id)} to ${position}`,
      )
    }
    await move(ids[11]!, 1) // last to first
    await move(ids[0]!, 12) // to last, exactly
    await move(ids[3]!, 6) // down into the middle
    await move(ids[9]!, 2) // up into the middle
    await move(ids[5]!, 500) // past the end: last
    await move(ids[5]!, 5) // and back
    await move(ids[7]!, model.indexOf(ids[7]!) + 1) // onto itself
    // A removal closes its gap: a move to n is then the last place, and 1 the first.
    assert.equal(
      (await api.delete(`/collections/${collection.id}/products/${ids[2]}`)).statusCode,
      200,
    )
    model.splice(model.indexOf(ids[2]!), 1)
    await move(ids[4]!, 11)
    await move(model[10]!, 1)
    assert.deepEqual(
      await memberNames(api, collection.id),
      model.map((m) => nameOf.get(m)),
    )
  })
})
