import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { it } from 'node:test'
import {
  addVariant,
  buildTestApi,
  describeEachDialect,
  expectError,
  malformedIds,
  type TestApi,
} from './helpers.js'

type Json = Record<string, any>

function expectNotFound(res: { statusCode: number; body: string }, label: string): void {
  try {
    expectError(res, 404, 'not_found')
  } catch (cause) {
    throw new Error(`${label}: ${(cause as Error).message}`)
  }
}

/** Asserts the delete answer: 200, application/json, exactly {"data": {"id", "deleted": true}}. */
function expectDeleted(res: { statusCode: number; headers: any; body: string }, id: string): void {
  assert.equal(res.statusCode, 200, res.body)
  assert.match(String(res.headers['content-type']), /^application\/json/)
  assert.deepEqual(JSON.parse(res.body), { data: { id, deleted: true } })
}

/** The ids of the variants found by GET /variants?sku=. */
async function findBySku(api: TestApi, sku: string, key?: string): Promise<string[]> {
  const res = await api.get(`/variants?sku=${encodeURIComponent(sku)}`, key)
  assert.equal(res.statusCode, 200, `GET /variants?sku=${sku}: ${res.body}`)
  return res.json().data.map((variant: Json) => variant.id)
}

/** The positions of a product's variants, as GET /products/:id/variants lists them. */
async function positionsOf(api: TestApi, productId: string): Promise<number[]> {
  const res = await api.get(`/products/${productId}/variants`)
  assert.equal(res.statusCode, 200, res.body)
  return res.json().data.map((variant: Json) => variant.position)
}

describeEachDialect('DELETE /products/:id', (dialect) => {
  it('answers 200 with exactly {"data": {"id": id, "deleted": true}}', async (t) => {
    const api = await buildTestApi(t, dialect)
    const product = await api.createProduct({ name: 'T-Shirt', price: 19.99 })
    expectDeleted(await api.delete(`/products/${product.id}`), product.id)
  })

  it('takes a DELETE sent with Content-Type: application/json and no body, as clients do', async (t) => {
    const api = await buildTestApi(t, dialect)
    const product = await api.createProduct({ name: 'T-Shirt' })
    const res = await api.delete(`/products/${product.id}`, {
      headers: { 'content-type': 'application/json' },
    })
    expectDeleted(res, product.id)
  })

  it('removes the product and all its variants from every read', async (t) => {
    const api = await buildTestApi(t, dialect)
    const kept = await api.createProduct({ name: 'Kept' })
    const keptVariant = await addVariant(api, kept.id, { name: 'Kept', sku: 'KEPT-1' })
    const product = await api.createProduct({ name: 'Doomed' })
    const variants = [
      await addVariant(api, product.id, { name: 'Red', sku: 'DOOM-RED', options: { c: 'red' } }),
      await addVariant(api, product.id, { name: 'Blue', sku: 'DOOM-BLUE', options: { c: 'blue' } }),
      await addVariant(api, product.id, { name: 'No sku' }),
    ]
    const keptBefore = (await api.get(`/products/${kept.id}`)).json()

    expectDeleted(await api.delete(`/products/${product.id}`), product.id)

    expectNotFound(await api.get(`/products/${product.id}`), 'GET product')
    expectNotFound(await api.get(`/products/${product.id}/variants`), 'GET its variants')
    for (const variant of variants) {
      expectNotFound(
        await api.get(`/products/${product.id}/variants/${variant.id}`),
        `GET variant ${variant.name}`,
      )
    }
    assert.deepEqual(await findBySku(api, 'DOOM-RED'), [])
    assert.deepEqual(await findBySku(api, 'DOOM-BLUE'), [])
    const list = await api.get('/products')
    assert.deepEqual(
      list.json().data.map((p: Json) => p.id),
      [kept.id],
    )
    // The other product and its variant are untouched.
    assert.deepEqual((await api.get(`/products/${kept.id}`)).json(), keptBefore)
    assert.deepEqual(await findBySku(api, 'KEPT-1'), [keptVariant.id])
  })

  it('answers 404 not_found to a second DELETE, and to writes on the deleted product', async (t) => {
    const api = await buildTestApi(t, dialect)
    const product = await api.createProduct({ name: 'Once' })
    const variant = await addVariant(api, product.id, { name: 'V' })
    expectDeleted(await api.delete(`/products/${product.id}`), product.id)
    expectNotFound(await api.delete(`/products/${product.id}`), 'second DELETE')
    expectNotFound(
      await api.delete(`/products/${product.id}/variants/${variant.id}`),
      'DELETE of its variant',
    )
    expectNotFound(
      await api.post(`/products/${product.id}/variants`, { name: 'Late' }),
      'POST variant',
    )
  })

  it('frees the skus of its variants: another product of the store can take them', async (t) => {
    const api = await buildTestApi(t, dialect)
    const product = await api.createProduct({ name: 'Old' })
    await addVariant(api, product.id, { name: 'A', sku: 'SKU-A' })
    await addVariant(api, product.id, { name: 'B', sku: 'SKU-B' })
    const other = await api.createProduct({ name: 'New' })
    // Taken while the product exists.
    expectError(
      await api.post(`/products/${other.id}/variants`, { name: 'A', sku: 'SKU-A' }),
      409,
      'duplicate_sku',
    )
    expectDeleted(await api.delete(`/products/${product.id}`), product.id)
    const a = await addVariant(api, other.id, { name: 'A', sku: 'SKU-A' })
    const b = await addVariant(api, other.id, { name: 'B', sku: ' SKU-B ' })
    assert.equal(b.sku, 'SKU-B')
    assert.deepEqual(await findBySku(api, 'SKU-A'), [a.id])
    assert.deepEqual(await findBySku(api, 'SKU-B'), [b.id])
  })

  it('needs scope write: a read key gets 403 forbidden and the product stays', async (t) => {
    const api = await buildTestApi(t, dialect)
    const product = await api.createProduct({ name: 'Guarded' })
    await addVariant(api, product.id, { name: 'V', sku: 'GUARD-1' })
    const before = (await api.get(`/products/${product.id}`)).json()
    const reader = await api.newKey({ scopes: ['read'] })
    expectError(await api.delete(`/products/${product.id}`, { key: reader }), 403, 'forbidden')
    // 403 comes before existence: an unknown id is 403 too for a read key.
    expectError(await api.delete(`/products/${randomUUID()}`, { key: reader }), 403, 'forbidden')
    assert.deepEqual((await api.get(`/products/${product.id}`)).json(), before)
    // A key with write only may delete.
    const writer = await api.newKey({ scopes: ['write'] })
    expectDeleted(await api.delete(`/products/${product.id}`, { key: writer }), product.id)
  })

  it("answers 404 not_found for another store's product, and leaves it", async (t) => {
    const api = await buildTestApi(t, dialect)
    const otherStore = await api.newKey({ store: 'store-b' })
    const theirs = await api.createProduct({ name: 'Theirs' }, otherStore)
    await addVariant(api, theirs.id, { name: 'V', sku: 'THEIRS-1' }, otherStore)
    const before = (await api.get(`/products/${theirs.id}`, otherStore)).json()
    expectNotFound(await api.delete(`/products/${theirs.id}`), 'other store')
    expectNotFound(await api.delete(`/products/${theirs.id.toUpperCase()}`), 'other store, upper')
    assert.deepEqual((await api.get(`/products/${theirs.id}`, otherStore)).json(), before)
  })

  it('answers 404 not_found for an unknown or malformed id', async (t) => {
    const api = await buildTestApi(t, dialect)
    const product = await api.createProduct({ name: 'T-Shirt' })
    const ids = [
      randomUUID(),
      'not-a-uuid',
      '123',
      `${product.id}0`,
      product.id.slice(1),
      product.id.replaceAll('-', ''),
      encodeURIComponent(`${product.id}' or '1'='1`),
    ]
    for (const id of ids) expectNotFound(await api.delete(`/products/${id}`), id)
    assert.equal((await api.get(`/products/${product.id}`)).statusCode, 200)
  })

  it('replays a DELETE retried with the same Idempotency-Key: 200 again, not 404', async (t) => {
    const api = await buildTestApi(t, dialect)
    const product = await api.createProduct({ name: 'Retried' })
    const headers = { 'idempotency-key': 'delete-product-1' }
    const first = await api.delete(`/products/${product.id}`, { headers })
    expectDeleted(first, product.id)
    assert.equal(first.headers['idempotent-replayed'], undefined)
    const retry = await api.delete(`/products/${product.id}`, { headers })
    expectDeleted(retry, product.id)
    assert.equal(retry.headers['idempotent-replayed'], 'true')
    assert.equal(retry.body, first.body)
    // Without the key, the product is simply gone.
    expectNotFound(await api.delete(`/products/${product.id}`), 'DELETE without the key')
  })
})

describeEachDialect('DELETE /products/:id/variants/:variantId', (dialect) => {
  it('answers 200 with exactly {"data": {"id": variantId, "deleted": true}}', async (t) => {
    const api = await buildTestApi(t, dialect)
    const product = await api.createProduct({ name: 'T-Shirt' })
    const variant = await addVariant(api, product.id, { name: 'Red', sku: 'TS-RED' })
    expectDeleted(await api.delete(`/products/${product.id}/variants/${variant.id}`), variant.id)
  })

  it('removes the variant from every read, and only it: the product and siblings stay', async (t) => {
    const api = await buildTestApi(t, dialect)
    const product = await api.createProduct({ name: 'T-Shirt' })
    const red = await addVariant(api, product.id, { name: 'Red', sku: 'TS-RED' })
    const blue = await addVariant(api, product.id, { name: 'Blue', sku: 'TS-BLUE' })
    const path = `/products/${product.id}/variants/${red.id}`
    expectDeleted(await api.delete(path), red.id)

    expectNotFound(await api.get(path), 'GET variant')
    const one = await api.get(`/products/${product.id}`)
    assert.equal(one.statusCode, 200, one.body)
    assert.deepEqual(
      one.json().data.variants.map((v: Json) => v.id),
      [blue.id],
    )
    const list = await api.get(`/products/${product.id}/variants`)
    assert.deepEqual(list.json(), { data: [blue] })
    assert.deepEqual(await findBySku(api, 'TS-RED'), [])
    assert.deepEqual(await findBySku(api, 'TS-BLUE'), [blue.id])
  })

  it('answers 404 not_found to a second DELETE', async (t) => {
    const api = await buildTestApi(t, dialect)
    const product = await api.createProduct({ name: 'T-Shirt' })
    const variant = await addVariant(api, product.id, { name: 'Red' })
    const path = `/products/${product.id}/variants/${variant.id}`
    expectDeleted(await api.delete(path), variant.id)
    expectNotFound(await api.delete(path), 'second DELETE')
  })

  it('frees its sku: this product or another of the store can take it', async (t) => {
    const api = await buildTestApi(t, dialect)
    const product = await api.createProduct({ name: 'T-Shirt' })
    const other = await api.createProduct({ name: 'Hoodie' })
    const red = await addVariant(api, product.id, { name: 'Red', sku: 'RED-1' })
    const blue = await addVariant(api, product.id, { name: 'Blue', sku: 'BLUE-1' })
    expectError(
      await api.post(`/products/${other.id}/variants`, { name: 'X', sku: 'RED-1' }),
      409,
      'duplicate_sku',
    )
    expectDeleted(await api.delete(`/products/${product.id}/variants/${red.id}`), red.id)
    const elsewhere = await addVariant(api, other.id, { name: 'Red', sku: 'RED-1' })
    assert.deepEqual(await findBySku(api, 'RED-1'), [elsewhere.id])

    expectDeleted(await api.delete(`/products/${product.id}/variants/${blue.id}`), blue.id)
    const again = await addVariant(api, product.id, { name: 'Blue again', sku: 'BLUE-1' })
    assert.deepEqual(await findBySku(api, 'BLUE-1'), [again.id])
  })

  it('defaults the next position to one more than the highest remaining, or 1', async (t) => {
    const api = await buildTestApi(t, dialect)
    const product = await api.createProduct({ name: 'Socks' })
    const at = async (name: string, position?: number) =>
      addVariant(api, product.id, position === undefined ? { name } : { name, position })
    const del = async (variant: Json) =>
      expectDeleted(await api.delete(`/products/${product.id}/variants/${variant.id}`), variant.id)

    const one = await at('One', 1)
    const five = await at('Five', 5)
    const ten = await at('Ten', 10)
    // Deleting a lower one leaves the next default where it was.
    await del(five)
    const eleven = await at('Eleven')
    assert.equal(eleven.position, 11)
    // Deleting the highest one moves it down to the highest remaining + 1.
    await del(eleven)
    const nextAfterTen = await at('After ten')
    assert.equal(nextAfterTen.position, 11)
    await del(nextAfterTen)
    await del(ten)
    assert.deepEqual(await positionsOf(api, product.id), [1])
    const two = await at('Two')
    assert.equal(two.position, 2)
    // With none left, the next default is 1 again.
    await del(two)
    await del(one)
    assert.deepEqual(await positionsOf(api, product.id), [])
    assert.equal((await at('First again')).position, 1)
  })

  it('defaults the next position to 1 when only a variant at position 0 remains', async (t) => {
    const api = await buildTestApi(t, dialect)
    const product = await api.createProduct({ name: 'Socks' })
    await addVariant(api, product.id, { name: 'Zero', position: 0 })
    const high = await addVariant(api, product.id, { name: 'High', position: 40 })
    expectDeleted(await api.delete(`/products/${product.id}/variants/${high.id}`), high.id)
    assert.equal((await addVariant(api, product.id, { name: 'Next' })).position, 1)
  })

  it('needs scope write: a read key gets 403 forbidden and the variant stays', async (t) => {
    const api = await buildTestApi(t, dialect)
    const product = await api.createProduct({ name: 'T-Shirt' })
    const variant = await addVariant(api, product.id, { name: 'Red', sku: 'TS-RED' })
    const reader = await api.newKey({ scopes: ['read'] })
    const path = `/products/${product.id}/variants/${variant.id}`
    expectError(await api.delete(path, { key: reader }), 403, 'forbidden')
    expectError(
      await api.delete(`/products/${product.id}/variants/${randomUUID()}`, { key: reader }),
      403,
      'forbidden',
    )
    assert.deepEqual((await api.get(`/products/${product.id}/variants`)).json(), {
      data: [variant],
    })
    const writer = await api.newKey({ scopes: ['write'] })
    expectDeleted(await api.delete(path, { key: writer }), variant.id)
  })

  it("answers 404 not_found for another store's variant, and leaves it", async (t) => {
    const api = await buildTestApi(t, dialect)
    const otherStore = await api.newKey({ store: 'store-b' })
    const theirs = await api.createProduct({ name: 'Theirs' }, otherStore)
    const variant = await addVariant(api, theirs.id, { name: 'V', sku: 'THEIRS-1' }, otherStore)
    // A product of my own, so that only the variant's store is wrong in the second path.
    const mine = await api.createProduct({ name: 'Mine' })
    expectNotFound(await api.delete(`/products/${theirs.id}/variants/${variant.id}`), 'other store')
    expectNotFound(
      await api.delete(`/products/${mine.id}/variants/${variant.id}`),
      'their variant under my product',
    )
    assert.deepEqual((await api.get(`/products/${theirs.id}/variants`, otherStore)).json(), {
      data: [variant],
    })
  })

  it('answers 404 not_found for a variant under another product, and leaves it', async (t) => {
    const api = await buildTestApi(t, dialect)
    const product = await api.createProduct({ name: 'T-Shirt' })
    const variant = await addVariant(api, product.id, { name: 'Red', sku: 'TS-RED' })
    const other = await api.createProduct({ name: 'Hoodie' })
    await addVariant(api, other.id, { name: 'Blue' })
    expectNotFound(
      await api.delete(`/products/${other.id}/variants/${variant.id}`),
      'under another product',
    )
    assert.deepEqual((await api.get(`/products/${product.id}/variants`)).json(), {
      data: [variant],
    })
  })

  it('answers 404 not_found for an unknown or malformed variant id or product id', async (t) => {
    const api = await buildTestApi(t, dialect)
    const product = await api.createProduct({ name: 'T-Shirt' })
    const variant = await addVariant(api, product.id, { name: 'Red' })
    for (const id of [randomUUID(), ...malformedIds(variant.id)]) {
      expectNotFound(await api.delete(`/products/${product.id}/variants/${id}`), `variant ${id}`)
    }
    for (const id of [randomUUID(), ...malformedIds(product.id)]) {
      expectNotFound(await api.delete(`/products/${id}/variants/${variant.id}`), `product ${id}`)
    }
    assert.deepEqual((await api.get(`/products/${product.id}/variants`)).json(), {
      data: [variant],
    })
  })

  it('replays a DELETE retried with the same Idempotency-Key: 200 again, not 404', async (t) => {
    const api = await buildTestApi(t, dialect)
    const product = await api.createProduct({ name: 'T-Shirt' })
    const variant = await addVariant(api, product.id, { name: 'Red' })
    const path = `/products/${product.id}/variants/${variant.id}`
    const headers = { 'idempotency-key': 'delete-variant-1' }
    const first = await api.delete(path, { headers })
    expectDeleted(first, variant.id)
    assert.equal(first.headers['idempotent-replayed'], undefined)
    const retry = await api.delete(path, { headers })
    expectDeleted(retry, variant.id)
    assert.equal(retry.headers['idempotent-replayed'], 'true')
    assert.equal(retry.body, first.body)
    expectNotFound(await api.delete(path), 'DELETE without the key')
    assert.deepEqual((await api.get(`/products/${product.id}/variants`)).json(), { data: [] })
  })
})
