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
  walkPages,
} from './helpers.js'

type Json = Record<string, any>

/** Creates products one after another (so their order is known), oldest first. */
async function createProducts(
  api: TestApi,
  count: number,
  body: (i: number) => Record<string, unknown>,
  key?: string,
): Promise<Json[]> {
  const products: Json[] = []
  for (let i = 0; i < count; i++) products.push(await api.createProduct(body(i), key))
  return products
}

/** The ids of one unpaged list answer (limit 200), asserting nextCursor null. */
async function listIds(api: TestApi, query: string, key?: string): Promise<string[]> {
  const res = await api.get(`/products?${query}&limit=200`, key)
  assert.equal(res.statusCode, 200, `?${query} answered ${res.statusCode}: ${res.body}`)
  const body = res.json()
  assert.equal(body.nextCursor, null, `?${query}: nextCursor`)
  return body.data.map((product: Json) => product.id)
}

function newestFirstIds(products: Json[]): string[] {
  return products.map((product) => product.id).reverse()
}

function expectNotFound(res: { statusCode: number; body: string }, label: string): void {
  try {
    expectError(res, 404, 'not_found')
  } catch (cause) {
    throw new Error(`${label}: ${(cause as Error).message}`)
  }
}

const q = encodeURIComponent

describeEachDialect('GET /products/:id/variants/:variantId', (dialect) => {
  it('answers 200 with exactly {"data": variant}, the record as created', async (t) => {
    const api = await buildTestApi(t, dialect)
    const product = await api.createProduct({ name: 'T-Shirt', price: 20 })
    const red = await addVariant(api, product.id, {
      name: 'Red / M',
      sku: 'TS-RED-M',
      options: { color: 'Red', size: 'M' },
      weight_grams: 180,
    })
    const blue = await addVariant(api, product.id, { name: 'Blue / M', sku: 'TS-BLUE-M' })
    for (const variant of [red, blue]) {
      const res = await api.get(`/products/${product.id}/variants/${variant.id}`)
      assert.equal(res.statusCode, 200, res.body)
      assert.match(String(res.headers['content-type']), /^application\/json/)
      assert.deepEqual(res.json(), { data: variant })
    }
  })

  it('answers 404 not_found for a variant under another product of the store', async (t) => {
    const api = await buildTestApi(t, dialect)
    const product = await api.createProduct({ name: 'T-Shirt' })
    const variant = await addVariant(api, product.id, { name: 'Red' })
    const other = await api.createProduct({ name: 'Hoodie' })
    await addVariant(api, other.id, { name: 'Blue' })
    expectNotFound(await api.get(`/products/${other.id}/variants/${variant.id}`), 'other product')
  })

  it("answers 404 not_found, never 403, for another store's variant", async (t) => {
    const api = await buildTestApi(t, dialect)
    const otherStore = await api.newKey({ store: 'store-b' })
    const otherReader = await api.newKey({ store: 'store-b', scopes: ['read'] })
    const product = await api.createProduct({ name: 'T-Shirt' })
    const variant = await addVariant(api, product.id, { name: 'Red' })
    const theirs = await api.createProduct({ name: 'Theirs' }, otherStore)
    const path = `/products/${product.id}/variants/${variant.id}`
    for (const key of [otherStore, otherReader]) {
      expectNotFound(await api.get(path, key), 'other store')
      expectNotFound(
        await api.get(`/products/${theirs.id}/variants/${variant.id}`, key),
        'my variant under their product',
      )
    }
  })

  it('answers 404 not_found for an unknown or malformed variant or product id', async (t) => {
    const api = await buildTestApi(t, dialect)
    const product = await api.createProduct({ name: 'T-Shirt' })
    const variant = await addVariant(api, product.id, { name: 'Red' })
    for (const id of [randomUUID(), ...malformedIds(variant.id)]) {
      expectNotFound(await api.get(`/products/${product.id}/variants/${id}`), `variant ${id}`)
    }
    for (const id of [randomUUID(), ...malformedIds(product.id)]) {
      expectNotFound(await api.get(`/products/${id}/variants/${variant.id}`), `product ${id}`)
    }
  })

  it('lets a key with only read, or only write, read a variant', async (t) => {
    const api = await buildTestApi(t, dialect)
    const product = await api.createProduct({ name: 'T-Shirt' })
    const variant = await addVariant(api, product.id, { name: 'Red' })
    for (const scopes of [['read'], ['write']] as const) {
      const key = await api.newKey({ scopes: [...scopes] })
      const res = await api.get(`/products/${product.id}/variants/${variant.id}`, key)
      assert.equal(res.statusCode, 200, `${scopes}: ${res.body}`)
      assert.deepEqual(res.json(), { data: variant })
    }
  })
})

describeEachDialect('GET /products filtered by slug, vendor, product_type and tag', (dialect) => {
  it('filters by slug exactly: one product, never a prefix or a neighbour', async (t) => {
    const api = await buildTestApi(t, dialect)
    const [shirt, shirt2, dress] = await createProducts(api, 3, (i) => ({
      name: ['T-Shirt', 'T-Shirt', 'T-Shirt Dress'][i],
    }))
    assert.deepEqual(
      [shirt!.slug, shirt2!.slug, dress!.slug],
      ['t-shirt', 't-shirt-2', 't-shirt-dress'],
    )
    for (const product of [shirt!, shirt2!, dress!]) {
      const res = await api.get(`/products?slug=${product.slug}`)
      assert.equal(res.statusCode, 200, res.body)
      assert.deepEqual(res.json(), { data: [product], nextCursor: null }, product.slug)
    }
    assert.deepEqual(await listIds(api, 'slug=t-shirt-3'), [])
    assert.deepEqual(await listIds(api, 'slug=t-shir'), [])
    assert.deepEqual(await listIds(api, 'slug=shirt'), [])
    // A page of one that holds the only match has no next page.
    const one = await api.get(`/products?slug=t-shirt&limit=1`)
    assert.deepEqual(one.json(), { data: [shirt], nextCursor: null })
  })

  it('filters by vendor exactly', async (t) => {
    const api = await buildTestApi(t, dialect)
    const vendors = ['Acme', 'Acme Corp', 'acme', 'Globex', 'Acme', undefined]
    const products = await createProducts(api, vendors.length, (i) => ({
      name: `Product ${i}`,
      ...(vendors[i] !== undefined && { vendor: vendors[i] }),
    }))
    for (const vendor of ['Acme', 'Acme Corp', 'acme', 'Globex']) {
      const expected = products.filter((p) => p.vendor === vendor)
      assert.deepEqual(await listIds(api, `vendor=${q(vendor)}`), newestFirstIds(expected), vendor)
    }
    const acme = await api.get('/products?vendor=Acme')
    assert.deepEqual(acme.json(), { data: [products[4], products[0]], nextCursor: null })
    assert.deepEqual(await listIds(api, 'vendor=Acm'), [])
  })

  it('filters by product_type exactly', async (t) => {
    const api = await buildTestApi(t, dialect)
    const types = ['Shirt', 'T-Shirt', 'shirt', 'Shirt', 'Mug', undefined]
    const products = await createProducts(api, types.length, (i) => ({
      name: `Product ${i}`,
      ...(types[i] !== undefined && { product_type: types[i] }),
    }))
    for (const type of ['Shirt', 'T-Shirt', 'shirt', 'Mug']) {
      const expected = products.filter((p) => p.productType === type)
      assert.deepEqual(
        await listIds(api, `product_type=${q(type)}`),
        newestFirstIds(expected),
        type,
      )
    }
    assert.deepEqual(await listIds(api, 'product_type=Shir'), [])
  })

  it('filters by tag case-insensitively: tag=SUMMER finds a product tagged Summer', async (t) => {
    const api = await buildTestApi(t, dialect)
    const tags = [['Summer', 'Sale'], ['summer-2026'], ['WINTER', 'sale'], [], ['Summer Sale']]
    const products = await createProducts(api, tags.length, (i) => ({
      name: `Product ${i}`,
      tags: tags[i],
    }))
    const [summer, summer2026, winter, , summerSale] = products
    assert.deepEqual(await listIds(api, 'tag=SUMMER'), [summer!.id])
    assert.deepEqual(await listIds(api, 'tag=summer'), [summer!.id])
    assert.deepEqual(await listIds(api, 'tag=Summer'), [summer!.id])
    assert.deepEqual(await listIds(api, 'tag=sAlE'), [winter!.id, summer!.id])
    assert.deepEqual(await listIds(api, 'tag=winter'), [winter!.id])
    assert.deepEqual(await listIds(api, 'tag=Summer-2026'), [summer2026!.id])
    assert.deepEqual(await listIds(api, `tag=${q('SUMMER SALE')}`), [summerSale!.id])
    // Whole tags only: no prefix, no word inside a tag.
    assert.deepEqual(await listIds(api, 'tag=summ'), [])
    assert.deepEqual(await listIds(api, 'tag=2026'), [])
    const page = await api.get('/products?tag=SUMMER')
    assert.deepEqual(page.json(), { data: [summer], nextCursor: null })
  })

  it('combines the filters with each other and with status', async (t) => {
    const api = await buildTestApi(t, dialect)
    const vendors = ['Acme', 'Globex', 'Acme']
    const types = ['Shirt', 'Mug']
    const tagSets = [['Summer', 'Sale'], ['summer'], ['Winter'], []]
    const statuses = ['active', 'draft', 'archived']
    const products = await createProducts(api, 24, (i) => ({
      name: `Product ${i}`,
      vendor: vendors[i % 3],
      product_type: types[(i % 5) % 2],
      tags: tagSets[i % 4],
      status: statuses[Math.floor(i / 4) % 3],
    }))
    const hasTag = (p: Json, tag: string) =>
      p.tags.some((t: string) => t.toLowerCase() === tag.toLowerCase())
    const pick = products[13]!
    const cases: [string, (p: Json) => boolean][] = [
      ['vendor=Acme&status=active', (p) => p.vendor === 'Acme' && p.status === 'active'],
      ['product_type=Mug&tag=sale', (p) => p.productType === 'Mug' && hasTag(p, 'sale')],
      ['tag=SUMMER&status=draft', (p) => hasTag(p, 'summer') && p.status === 'draft'],
      [
        'vendor=Globex&product_type=Shirt&tag=summer',
        (p) => p.vendor === 'Globex' && p.productType === 'Shirt' && hasTag(p, 'summer'),
      ],
      [
        'vendor=Acme&product_type=Shirt&tag=Summer&status=archived',
        (p) =>
          p.vendor === 'Acme' &&
          p.productType === 'Shirt' &&
          hasTag(p, 'summer') &&
          p.status === 'archived',
      ],
      ['vendor=Acme&product_type=Mug', (p) => p.vendor === 'Acme' && p.productType === 'Mug'],
      [`slug=${pick.slug}&vendor=${q(pick.vendor)}`, (p) => p.id === pick.id],
      [`slug=${pick.slug}&status=${pick.status}`, (p) => p.id === pick.id],
      [`slug=${pick.slug}&vendor=Nobody`, () => false],
      [`slug=${pick.slug}&status=${pick.status === 'active' ? 'draft' : 'active'}`, () => false],
      [
        `slug=${pick.slug}&vendor=${q(pick.vendor)}&product_type=${pick.productType}&tag=${pick.tags[0] ?? 'x'}&status=${pick.status}`,
        (p) => p.id === pick.id,
      ],
    ]
    for (const [query, predicate] of cases) {
      const expected = newestFirstIds(products.filter(predicate))
      assert.deepEqual(await listIds(api, query), expected, query)
    }
    // Each case matches something and leaves something out, so each filter was applied.
    for (const [query, predicate] of cases.slice(0, 6)) {
      const matches = products.filter(predicate).length
      assert.ok(matches > 0 && matches < products.length, `${query} matches ${matches}`)
    }
  })

  it('pages through filtered results with the cursor: every match once, newest first', async (t) => {
    const api = await buildTestApi(t, dialect)
    // 7 matches (i % 3 === 1) among 21 products, with non-matching ones older and newer.
    const products = await createProducts(api, 21, (i) =>
      i % 3 === 1
        ? { name: `Match ${i}`, vendor: 'Acme', product_type: 'Poster', tags: ['Summer'] }
        : {
            name: `Other ${i}`,
            vendor: i % 2 ? 'acme' : 'Acme Corp',
            product_type: i % 2 ? 'poster' : 'Posters',
            tags: ['Summer Sale', 'Winter'],
          },
    )
    const expected = newestFirstIds(products.filter((_, i) => i % 3 === 1))
    assert.equal(expected.length, 7)
    const queries = [
      'vendor=Acme',
      'product_type=Poster',
      'tag=SUMMER',
      'vendor=Acme&product_type=Poster&tag=summer',
      'vendor=Acme&status=draft',
    ]
    for (const query of queries) {
      const pages = await walkPages(api, `${query}&limit=3`)
      assert.deepEqual(
        pages.map((page) => page.data.length),
        [3, 3, 1],
        `${query}: page sizes`,
      )
      assert.deepEqual(
        pages.flatMap((page) => page.data.map((p) => p.id)),
        expected,
        `${query}: walk`,
      )
      // A page that holds exactly the remaining matches ends the walk, though older
      // products that do not match follow.
      const full = await api.get(`/products?${query}&limit=7`)
      assert.equal(full.statusCode, 200, full.body)
      assert.equal(full.json().nextCursor, null, `${query}&limit=7: nextCursor`)
      assert.deepEqual(
        full.json().data.map((p: Json) => p.id),
        expected,
      )
    }
  })

  it("never matches another store's products", async (t) => {
    const api = await buildTestApi(t, dialect)
    const otherStore = await api.newKey({ store: 'store-b' })
    const body = {
      name: 'T-Shirt',
      vendor: 'Acme',
      product_type: 'Shirt',
      tags: ['Summer'],
      status: 'active',
    }
    const theirs = await createProducts(api, 2, () => body, otherStore)
    const mine = await createProducts(api, 2, () => body)
    assert.equal(theirs[0]!.slug, mine[0]!.slug)
    const queries = [
      'slug=t-shirt',
      'slug=t-shirt-2',
      'vendor=Acme',
      'product_type=Shirt',
      'tag=summer',
      'vendor=Acme&product_type=Shirt&tag=SUMMER&status=active',
    ]
    for (const query of queries) {
      const own = (products: Json[]) =>
        newestFirstIds(
          products.filter((p) => !query.startsWith('slug=') || query === `slug=${p.slug}`),
        )
      assert.deepEqual(await listIds(api, query), own(mine), `mine: ${query}`)
      assert.deepEqual(await listIds(api, query, otherStore), own(theirs), `theirs: ${query}`)
      const pages = await walkPages(api, `${query}&limit=1`)
      assert.deepEqual(
        pages.flatMap((page) => page.data.map((p) => p.id)),
        own(mine),
        `mine, paged: ${query}`,
      )
    }
    // A store with none of them finds nothing.
    const empty = await api.newKey({ store: 'store-c' })
    for (const query of queries) assert.deepEqual(await listIds(api, query, empty), [], query)
  })

  it('answers an empty page with nextCursor null for a value nothing has', async (t) => {
    const api = await buildTestApi(t, dialect)
    await createProducts(api, 3, (i) => ({
      name: `Product ${i}`,
      vendor: 'Acme',
      product_type: 'Shirt',
      tags: ['Summer'],
    }))
    for (const query of [
      'slug=no-such-product',
      'vendor=Nobody',
      'product_type=Nothing',
      'tag=nothing',
      'vendor=Acme&tag=nothing',
      'tag=summer&status=active',
    ]) {
      for (const limit of ['', '&limit=1']) {
        const res = await api.get(`/products?${query}${limit}`)
        assert.equal(res.statusCode, 200, `${query}: ${res.body}`)
        assert.deepEqual(res.json(), { data: [], nextCursor: null }, query)
      }
    }
  })

  it('follows a PATCH: the new slug, vendor, product_type and tags find it, the old ones not', async (t) => {
    const api = await buildTestApi(t, dialect)
    const [, product] = await createProducts(api, 2, (i) => ({
      name: `Product ${i}`,
      vendor: 'Acme',
      product_type: 'Shirt',
      // The other product shares the vendor, product type and first tag, not Sale.
      tags: i === 1 ? ['Summer', 'Sale'] : ['Summer'],
    }))
    const res = await api.patch(`/products/${product!.id}`, {
      slug: 'renamed-product',
      vendor: 'Globex',
      product_type: 'Mug',
      tags: ['Winter', 'sale'],
    })
    assert.equal(res.statusCode, 200, res.body)
    const gone = [
      `slug=${product!.slug}`,
      'vendor=Globex&tag=summer',
      'product_type=Shirt&vendor=Globex',
    ]
    for (const query of gone) {
      assert.ok(!(await listIds(api, query)).includes(product!.id), `still found by ${query}`)
    }
    for (const query of [
      'slug=renamed-product',
      'vendor=Globex',
      'product_type=Mug',
      'tag=WINTER',
      'tag=Sale',
      'vendor=Globex&product_type=Mug&tag=winter&slug=renamed-product',
    ]) {
      assert.deepEqual(await listIds(api, query), [product!.id], query)
    }
    // Emptied by null: no tag, vendor or product_type finds it any more.
    const cleared = await api.patch(`/products/${product!.id}`, {
      vendor: null,
      product_type: null,
      tags: null,
    })
    assert.equal(cleared.statusCode, 200, cleared.body)
    for (const query of ['vendor=Globex', 'product_type=Mug', 'tag=winter', 'tag=sale']) {
      assert.deepEqual(await listIds(api, query), [], query)
    }
  })

  it('follows a status change: tag, vendor and product_type with status find it under the new one', async (t) => {
    const api = await buildTestApi(t, dialect)
    const [, product] = await createProducts(api, 2, (i) => ({
      name: `Product ${i}`,
      vendor: 'Acme',
      product_type: 'Shirt',
      tags: ['Summer'],
      status: 'draft',
    }))
    const filters = ['tag=summer', 'vendor=Acme', 'product_type=Shirt']
    const expectUnder = async (status: string, others: string[]) => {
      for (const filter of filters) {
        assert.ok((await listIds(api, `${filter}&status=${status}`)).includes(product!.id), filter)
        for (const other of others) {
          const found = await listIds(api, `${filter}&status=${other}`)
          assert.ok(!found.includes(product!.id), `${filter}&status=${other}`)
        }
        // Without status, every status: both products, newest first.
        assert.equal((await listIds(api, filter))[0], product!.id, filter)
      }
    }
    await expectUnder('draft', ['active', 'archived'])
    // The status alone (PostgreSQL's one-statement PATCH), then with the tags (the
    // transaction's), then back with nothing else.
    for (const [patch, status, others] of [
      [{ status: 'active' }, 'active', ['draft', 'archived']],
      [{ status: 'archived', tags: ['summer', 'Sale'] }, 'archived', ['draft', 'active']],
      [{ status: 'draft' }, 'draft', ['active', 'archived']],
    ] as const) {
      const res = await api.patch(`/products/${product!.id}`, patch)
      assert.equal(res.statusCode, 200, res.body)
      await expectUnder(status, [...others])
    }
    assert.deepEqual(await listIds(api, 'tag=sale&status=draft'), [product!.id])
  })

  it('pages through a filter without status across products of every status, newest first', async (t) => {
    const api = await buildTestApi(t, dialect)
    const statuses = ['active', 'draft', 'archived']
    const products = await createProducts(api, 14, (i) => ({
      name: `Product ${i}`,
      vendor: 'Acme',
      product_type: 'Poster',
      tags: ['Summer'],
      status: statuses[(i * 7) % 3],
    }))
    const expected = newestFirstIds(products)
    for (const query of ['tag=summer', 'vendor=Acme', 'product_type=Poster']) {
      const pages = await walkPages(api, `${query}&limit=4`)
      assert.deepEqual(
        pages.map((page) => page.data.length),
        [4, 4, 4, 2],
        query,
      )
      assert.deepEqual(
        pages.flatMap((page) => page.data.map((p) => p.id)),
        expected,
        query,
      )
    }
  })

  it('finds no deleted product under any filter', async (t) => {
    const api = await buildTestApi(t, dialect)
    const body = { name: 'T-Shirt', vendor: 'Acme', product_type: 'Shirt', tags: ['Summer'] }
    const [kept, deleted] = await createProducts(api, 2, () => body)
    const res = await api.delete(`/products/${deleted!.id}`)
    assert.equal(res.statusCode, 200, res.body)
    for (const query of ['vendor=Acme', 'product_type=Shirt', 'tag=summer', 'status=draft']) {
      assert.deepEqual(await listIds(api, query), [kept!.id], query)
    }
    assert.deepEqual(await listIds(api, `slug=${deleted!.slug}`), [])
  })

  it('lets a key with only read filter the list', async (t) => {
    const api = await buildTestApi(t, dialect)
    const reader = await api.newKey({ scopes: ['read'] })
    const [, acme] = await createProducts(api, 2, (i) => ({
      name: `Product ${i}`,
      vendor: ['Globex', 'Acme'][i],
      tags: ['Summer'],
    }))
    const res = await api.get(`/products?vendor=Acme&tag=SUMMER&slug=${acme!.slug}`, reader)
    assert.equal(res.statusCode, 200, res.body)
    assert.deepEqual(res.json(), { data: [acme], nextCursor: null })
  })
})

describeEachDialect('GET /variants?sku=', (dialect) => {
  it('answers {"data": [variant]} with the one variant of the store that has the sku', async (t) => {
    const api = await buildTestApi(t, dialect)
    const product = await api.createProduct({ name: 'T-Shirt' })
    const red = await addVariant(api, product.id, { name: 'Red', sku: 'TS-RED' })
    const redM = await addVariant(api, product.id, { name: 'Red / M', sku: 'TS-RED-M' })
    const other = await api.createProduct({ name: 'Mug' })
    const mug = await addVariant(api, other.id, { name: 'Plain', sku: 'MUG-1' })
    for (const variant of [red, redM, mug]) {
      const res = await api.get(`/variants?sku=${q(variant.sku)}`)
      assert.equal(res.statusCode, 200, res.body)
      assert.match(String(res.headers['content-type']), /^application\/json/)
      assert.deepEqual(res.json(), { data: [variant] }, variant.sku)
    }
  })

  it('answers {"data": []} for a sku no variant has', async (t) => {
    const api = await buildTestApi(t, dialect)
    const product = await api.createProduct({ name: 'T-Shirt', sku: 'PRODUCT-SKU' })
    await addVariant(api, product.id, { name: 'Red', sku: 'TS-RED-M' })
    await addVariant(api, product.id, { name: 'No sku' })
    // Not a prefix, not a part, and a product's own sku is not a variant's.
    for (const sku of ['UNKNOWN', 'TS-RED', 'RED-M', 'TS-RED-M-L', 'PRODUCT-SKU', 'null']) {
      const res = await api.get(`/variants?sku=${q(sku)}`)
      assert.equal(res.statusCode, 200, `${sku}: ${res.body}`)
      assert.deepEqual(res.json(), { data: [] }, sku)
    }
  })

  it('compares the sku after trimming: sku=%20ABC%20 finds ABC', async (t) => {
    const api = await buildTestApi(t, dialect)
    const product = await api.createProduct({ name: 'T-Shirt' })
    const abc = await addVariant(api, product.id, { name: 'ABC', sku: 'ABC' })
    const padded = await addVariant(api, product.id, { name: 'Padded', sku: '  XYZ\t' })
    assert.equal(padded.sku, 'XYZ')
    for (const [query, variant] of [
      ['%20ABC%20', abc],
      ['ABC%20', abc],
      ['%09ABC', abc],
      ['XYZ', padded],
      ['%20%20XYZ%20', padded],
    ] as const) {
      const res = await api.get(`/variants?sku=${query}`)
      assert.equal(res.statusCode, 200, `${query}: ${res.body}`)
      assert.deepEqual(res.json(), { data: [variant] }, query)
    }
  })

  it("never finds another store's variant; each store finds its own with the same sku", async (t) => {
    const api = await buildTestApi(t, dialect)
    const otherStore = await api.newKey({ store: 'store-b' })
    const theirProduct = await api.createProduct({ name: 'Theirs' }, otherStore)
    const theirs = await addVariant(api, theirProduct.id, { name: 'V', sku: 'SHARED' }, otherStore)
    await addVariant(api, theirProduct.id, { name: 'W', sku: 'THEIRS-ONLY' }, otherStore)
    assert.deepEqual((await api.get('/variants?sku=THEIRS-ONLY')).json(), { data: [] })
    assert.deepEqual((await api.get('/variants?sku=SHARED')).json(), { data: [] })
    const product = await api.createProduct({ name: 'Mine' })
    const mine = await addVariant(api, product.id, { name: 'V', sku: 'SHARED' })
    assert.deepEqual((await api.get('/variants?sku=SHARED')).json(), { data: [mine] })
    assert.deepEqual((await api.get('/variants?sku=SHARED', otherStore)).json(), { data: [theirs] })
  })

  it('refuses a request without sku, or with a blank one, with 400 validation_failed naming sku', async (t) => {
    const api = await buildTestApi(t, dialect)
    const product = await api.createProduct({ name: 'T-Shirt' })
    await addVariant(api, product.id, { name: 'Red', sku: 'TS-RED' })
    for (const path of [
      '/variants',
      '/variants?',
      '/variants?name=TS-RED',
      '/variants?SKU=TS-RED',
      '/variants?sku=',
      '/variants?sku=%20%20%20',
      '/variants?sku=%09',
    ]) {
      const error = expectError(await api.get(path), 400, 'validation_failed')
      const fields = (error.details ?? []).map((detail) => detail.field)
      assert.ok(fields.includes('sku'), `${path}: details ${JSON.stringify(fields)}`)
    }
  })

  it('lets a key with only read, or only write, look a sku up', async (t) => {
    const api = await buildTestApi(t, dialect)
    const product = await api.createProduct({ name: 'T-Shirt' })
    const variant = await addVariant(api, product.id, { name: 'Red', sku: 'TS-RED' })
    for (const scopes of [['read'], ['write']] as const) {
      const key = await api.newKey({ scopes: [...scopes] })
      const res = await api.get('/variants?sku=TS-RED', key)
      assert.equal(res.statusCode, 200, `${scopes}: ${res.body}`)
      assert.deepEqual(res.json(), { data: [variant] })
    }
  })
})
