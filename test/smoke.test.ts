import assert from 'node:assert/strict'
import { it } from 'node:test'
import { buildTestApi, describeEachDialect } from './helpers.js'

describeEachDialect('smoke', (dialect) => {
  it('creates a product', async (t) => {
    const api = await buildTestApi(t, dialect)
    const product = await api.createProduct({ name: 'Crème Brûlée', price: 19.99 })
    assert.equal(product.slug, 'creme-brulee')
    assert.equal(product.price, 19.99)
    const again = await api.createProduct({ name: 'Crème Brûlée 2' })
    const third = await api.createProduct({ name: 'Crème Brûlée' })
    assert.deepEqual([again.slug, third.slug], ['creme-brulee-2', 'creme-brulee-3'])
    const res = await api.get('/products?limit=1')
    assert.equal(res.statusCode, 200)
    const next = res.json().nextCursor
    const res2 = await api.get(`/products?limit=5&cursor=${next}`)
    assert.equal(res2.json().data.length, 2)
  })
})
