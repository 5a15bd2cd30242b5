import assert from 'node:assert/strict'
import { it, type TestContext } from 'node:test'
import { addVariant, buildTestApi, describeEachDialect, type TestApi } from './helpers.js'

type Json = Record<string, any>

/** Stops the clock: every write of the test reads the same millisecond. */
function freezeClock(t: TestContext): void {
  t.mock.timers.enable({ apis: ['Date'], now: Date.now() })
}

async function read(api: TestApi, path: string): Promise<Json> {
  const res = await api.get(path)
  assert.equal(res.statusCode, 200, `GET ${path}: ${res.body}`)
  return res.json().data
}

function expectMoved(before: Json, after: Json, label: string): void {
  assert.equal(after.version, before.version + 1, `${label}: version`)
  assert.ok(after.updatedAt > before.updatedAt, `${label}: updatedAt ${after.updatedAt}`)
}

describeEachDialect('Part 2: updatedAt moves with every change', (dialect) => {
  it("moves a product's updatedAt with a PATCH in the same millisecond as its creation", async (t) => {
    const api = await buildTestApi(t, dialect)
    freezeClock(t)
    const product = await api.createProduct({ name: 'Mug', price: 5 })
    const res = await api.patch(`/products/${product.id}`, { price: 6 })
    assert.equal(res.statusCode, 200, res.body)
    expectMoved(product, res.json().data, 'PATCH')
    expectMoved(product, await read(api, `/products/${product.id}`), 'GET after PATCH')
    const again = await api.patch(`/products/${product.id}`, { tags: ['blue'], slug: 'blue-mug' })
    expectMoved(res.json().data, again.json().data, 'second PATCH (transaction path)')
  })

  it("moves a product's and a variant's updatedAt with each variant change in one millisecond", async (t) => {
    const api = await buildTestApi(t, dialect)
    freezeClock(t)
    const path = (id: string) => `/products/${id}`
    const product = await api.createProduct({ name: 'Mug' })
    const variant = await addVariant(api, product.id, { name: 'Red' })
    const added = await read(api, path(product.id))
    expectMoved(product, added, 'product after a variant is added')

    const patched = await api.patch(`${path(product.id)}/variants/${variant.id}`, { price: 2 })
    assert.equal(patched.statusCode, 200, patched.body)
    expectMoved(variant, patched.json().data, 'variant after its PATCH')
    const afterPatch = await read(api, path(product.id))
    expectMoved(added, afterPatch, 'product after a variant PATCH')

    const moved = await api.patch(`${path(product.id)}/variants/${variant.id}`, { position: 7 })
    expectMoved(patched.json().data, moved.json().data, 'variant after a position PATCH')
    const afterMove = await read(api, path(product.id))
    expectMoved(afterPatch, afterMove, 'product after a position PATCH')

    const deleted = await api.delete(`${path(product.id)}/variants/${variant.id}`)
    assert.equal(deleted.statusCode, 200, deleted.body)
    expectMoved(afterMove, await read(api, path(product.id)), 'product after a variant DELETE')
  })

  it('keeps updatedAt on a no-op patch, also with the clock stopped', async (t) => {
    const api = await buildTestApi(t, dialect)
    freezeClock(t)
    const product = await api.createProduct({ name: 'Mug', price: 5 })
    const res = await api.patch(`/products/${product.id}`, { price: 5, name: 'Mug' })
    assert.equal(res.json().data.updatedAt, product.updatedAt)
    assert.equal(res.json().data.version, 1)
  })
})
