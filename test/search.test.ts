import assert from 'node:assert/strict'
import { it } from 'node:test'
import {
  addVariant,
  buildTestApi,
  describeEachDialect,
  expectError,
  type TestApi,
} from './helpers.js'

type Json = Record<string, any>

const q = encodeURIComponent

/** The names of one answer's products, in order, asserting 200. */
async function names(api: TestApi, query: string): Promise<string[]> {
  const res = await api.get(`/products?${query}`)
  assert.equal(res.statusCode, 200, `?${query} answered ${res.statusCode}: ${res.body}`)
  return res.json().data.map((product: Json) => product.name)
}

async function body(api: TestApi, query: string): Promise<Json> {
  const res = await api.get(`/products?${query}`)
  assert.equal(res.statusCode, 200, `?${query} answered ${res.statusCode}: ${res.body}`)
  return res.json()
}

describeEachDialect('GET /products?q=', (dialect) => {
  it('finds each word without case or accents, the last also as a prefix', async (t) => {
    const api = await buildTestApi(t, dialect)
    await api.createProduct({ name: 'Crème brûlée', description: 'A dessert' })
    await api.createProduct({ name: 'Café T-shirt', vendor: 'Acme' })
    await api.createProduct({ name: 'Plain mug', tags: ['Kitchen'] })
    assert.deepEqual(await names(api, 'q=creme'), ['Crème brûlée'])
    assert.deepEqual(await names(api, 'q=CAFE'), ['Café T-shirt'])
    assert.deepEqual(await names(api, `q=${q('crème')}`), ['Crème brûlée'])
    assert.deepEqual(await names(api, 'q=t-sh'), ['Café T-shirt'])
    assert.deepEqual(await names(api, 'q=acme%20caf'), ['Café T-shirt'])
    assert.deepEqual(await names(api, 'q=kitchen'), ['Plain mug'])
    assert.deepEqual(await names(api, 'q=dessert%20creme'), ['Crème brûlée'])
    // A word only found as a prefix when it is the last one.
    assert.deepEqual(await names(api, 'q=caf%20acme'), [])
    assert.deepEqual(await names(api, 'q=missing'), [])
  })

  it('finds a variant by its sku, name and option values, and a product by its slug', async (t) => {
    const api = await buildTestApi(t, dialect)
    const tee = await api.createProduct({ name: 'Tee' })
    await api.createProduct({ name: 'Other' })
    await addVariant(api, tee.id, {
      name: 'Large one',
      sku: 'TS-RED-XL',
      options: { Color: 'Crimson' },
    })
    assert.deepEqual(await names(api, 'q=TS-RED-XL'), ['Tee'])
    assert.deepEqual(await names(api, 'q=ts-red-xl'), ['Tee'])
    assert.deepEqual(await names(api, 'q=crimson'), ['Tee'])
    assert.deepEqual(await names(api, 'q=large'), ['Tee'])
    assert.deepEqual(await names(api, 'q=tee'), ['Tee'])
  })

  it('is up to date at commit: a change is found, a deleted product is not', async (t) => {
    const api = await buildTestApi(t, dialect)
    const mug = await api.createProduct({ name: 'Mug', description: 'Porcelain' })
    assert.deepEqual(await names(api, 'q=porcelain'), ['Mug'])
    const patched = await api.patch(`/products/${mug.id}`, { name: 'Beaker', description: 'Glass' })
    assert.equal(patched.statusCode, 200)
    assert.deepEqual(await names(api, 'q=porcelain'), [])
    assert.deepEqual(await names(api, 'q=beaker%20glass'), ['Beaker'])
    // The slug stays as it was: still found by it.
    assert.deepEqual(await names(api, 'q=mug'), ['Beaker'])
    await api.patch(`/products/${mug.id}`, { tags: ['Ceramic'] })
    assert.deepEqual(await names(api, 'q=ceramic'), ['Beaker'])
    const variant = await addVariant(api, mug.id, { name: 'Blue', sku: 'BK-1' })
    assert.deepEqual(await names(api, 'q=bk-1'), ['Beaker'])
    await api.patch(`/products/${mug.id}/variants/${variant.id}`, { sku: 'BK-2' })
    assert.deepEqual(await names(api, 'q=bk-1'), [])
    assert.deepEqual(await names(api, 'q=bk-2'), ['Beaker'])
    await api.delete(`/products/${mug.id}/variants/${variant.id}`)
    assert.deepEqual(await names(api, 'q=bk-2'), [])
    const deleted = await api.delete(`/products/${mug.id}`)
    assert.equal(deleted.statusCode, 200)
    assert.deepEqual(await names(api, 'q=beaker'), [])
  })

  it('refuses a q that is blank, too long or only punctuation, naming q', async (t) => {
    const api = await buildTestApi(t, dialect)
    for (const bad of ['', '   ', '!!!', '-', 'a'.repeat(257), '%00']) {
      const res = await api.get(`/products?q=${bad === '%00' ? bad : q(bad)}`)
      const error = expectError(res, 400, 'validation_failed')
      assert.equal(error.details?.[0]?.field, 'q', bad)
    }
    assert.equal((await api.get(`/products?q=${q(` ${'a'.repeat(256)} `)}`)).statusCode, 200)
  })

  it('searches engine syntax as plain words', async (t) => {
    const api = await buildTestApi(t, dialect)
    await api.createProduct({ name: 'Near or not' })
    for (const text of [
      '"',
      '*',
      'NEAR',
      'OR',
      'near(',
      '-or',
      'a:b',
      '(x)',
      "'",
      'not*',
      'a & b | !c',
      'near/2',
    ]) {
      const res = await api.get(`/products?q=${q(text)}`)
      assert.ok([200, 400].includes(res.statusCode), `${text}: ${res.statusCode} ${res.body}`)
    }
    assert.deepEqual(await names(api, `q=${q('NEAR OR')}`), ['Near or not'])
    assert.deepEqual(await names(api, `q=${q('"near" -or')}`), ['Near or not'])
  })
})

describeEachDialect('GET /products filters and facets', (dialect) => {
  async function catalogue(api: TestApi) {
    const a = await api.createProduct({
      name: 'Alpha',
      vendor: 'Acme',
      price: 10,
      tags: ['Sale'],
      status: 'active',
    })
    const b = await api.createProduct({
      name: 'Beta',
      vendor: 'Globex',
      price: 20,
      tags: ['sale', 'New'],
    })
    const c = await api.createProduct({
      name: 'Gamma',
      vendor: 'Acme',
      price: 30,
      product_type: 'Shirt',
    })
    await addVariant(api, a.id, { name: 'A1', options: { Color: 'Blue', Size: 'S' } })
    await addVariant(api, a.id, { name: 'A2', options: { Color: 'Red', Size: 'M' } })
    await addVariant(api, b.id, { name: 'B1', options: { color: 'blue', size: 'M' } })
    await addVariant(api, c.id, { name: 'C1', options: { Color: 'Green', Size: 'M' } })
    return { a, b, c }
  }

  it('combines filters: repeated means any, different all, options each on its own', async (t) => {
    const api = await buildTestApi(t, dialect)
    await catalogue(api)
    assert.deepEqual(await names(api, 'vendor=Acme&vendor=Globex'), ['Gamma', 'Beta', 'Alpha'])
    assert.deepEqual(await names(api, 'vendor=Acme&tag=SALE'), ['Alpha'])
    assert.deepEqual(await names(api, 'option.color=BLUE'), ['Beta', 'Alpha'])
    assert.deepEqual(await names(api, 'option.Color=Blue&option.Size=M'), ['Beta', 'Alpha'])
    assert.deepEqual(await names(api, 'option.Color=Red&option.Color=Green'), ['Gamma', 'Alpha'])
    assert.deepEqual(await names(api, 'price_min=15&price_max=30'), ['Gamma', 'Beta'])
    assert.deepEqual(await names(api, 'price_min=10&price_max=10'), ['Alpha'])
    assert.deepEqual(await names(api, 'status=active&status=archived&q=a'), ['Alpha'])
    assert.deepEqual(await names(api, 'status=active&status=draft&product_type=Shirt'), ['Gamma'])
  })

  it('counts facets exactly, each without its own filter', async (t) => {
    const api = await buildTestApi(t, dialect)
    await catalogue(api)
    const page = await body(
      api,
      'vendor=Acme&facets=vendor,tag,option.COLOR,price,status,product_type',
    )
    assert.deepEqual(
      page.data.map((p: Json) => p.name),
      ['Gamma', 'Alpha'],
    )
    assert.deepEqual(page.facets.vendor, [
      { value: 'Acme', count: 2 },
      { value: 'Globex', count: 1 },
    ])
    assert.deepEqual(page.facets.tag, [{ value: 'Sale', count: 1 }])
    assert.deepEqual(page.facets['option.COLOR'], [
      { value: 'Blue', count: 1 },
      { value: 'Green', count: 1 },
      { value: 'Red', count: 1 },
    ])
    assert.deepEqual(page.facets.price, { min: 10, max: 30 })
    assert.deepEqual(
      page.facets.status,
      [
        { value: 'draft', count: 1 },
        { value: 'active', count: 1 },
      ].sort((x, y) => x.value.localeCompare(y.value)),
    )
    assert.deepEqual(page.facets.product_type, [{ value: 'Shirt', count: 1 }])
    // Value facets counted in one read of the matches' rows: each its own, a name given twice
    // in two cases answered twice.
    const twice = await body(api, 'vendor=Acme&facets=option.COLOR,tag,option.color,price')
    assert.deepEqual(twice.facets['option.color'], page.facets['option.COLOR'])
    assert.deepEqual(twice.facets['option.COLOR'], page.facets['option.COLOR'])
    assert.deepEqual(twice.facets.tag, page.facets.tag)
    const priced = await body(api, 'price_min=15&facets=price,vendor&facet_limit=1')
    assert.deepEqual(priced.facets.price, { min: 10, max: 30 })
    assert.deepEqual(priced.facets.vendor, [{ value: 'Acme', count: 1 }])
    const none = await body(api, 'q=nothing&facets=price,option.Material')
    assert.deepEqual(none.facets, { price: { min: null, max: null }, 'option.Material': [] })
    const tags = await body(api, 'facets=tag')
    assert.equal(tags.facets.tag[0].count, 2)
    assert.ok(['Sale', 'sale'].includes(tags.facets.tag[0].value))
  })

  it('refuses bad parameters by name', async (t) => {
    const api = await buildTestApi(t, dialect)
    const cases: [string, string][] = [
      ['sort=relevance', 'sort'],
      ['sort=cheapest', 'sort'],
      ['q=a&q=b', 'q'],
      ['sort=name&sort=price', 'sort'],
      ['limit=1&limit=2', 'limit'],
      ['price_min=1&price_min=2', 'price_min'],
      ['price_max=abc', 'price_max'],
      ['facets=vendor&facets=tag', 'facets'],
      ['facets=colour', 'facets'],
      ['facets=a,b,c,d,e,f,g,h,i,j,k', 'facets'],
      ['facet_limit=0', 'facet_limit'],
      ['facet_limit=101', 'facet_limit'],
      ['status=gone', 'status'],
      ['cursor=abc', 'cursor'],
    ]
    for (const [query, field] of cases) {
      const error = expectError(await api.get(`/products?${query}`), 400, 'validation_failed')
      assert.ok(
        error.details?.some((detail) => detail.field === field),
        `${query}: ${JSON.stringify(error.details)}`,
      )
    }
  })
})

describeEachDialect('GET /products sorts and paging', (dialect) => {
  it('pages every sort without gaps or repeats, and binds the cursor', async (t) => {
    const api = await buildTestApi(t, dialect)
    const prices = [5, 3, 5, 9, 1, 3, 7]
    const words = ['zeta', 'Alpha', 'beta', 'alpha', 'Éclair', 'delta', 'beta']
    for (const [i, price] of prices.entries()) {
      await api.createProduct({ name: `${words[i]} item`, price, tags: ['all'] })
    }
    for (const sort of [
      'newest',
      'oldest',
      'updated',
      'name',
      '-name',
      'price',
      '-price',
      'relevance',
    ]) {
      const query = `sort=${sort}&q=item&tag=all`
      const full = (await body(api, `${query}&limit=200`)).data.map((p: Json) => p.id)
      assert.equal(full.length, 7, sort)
      for (const limit of [1, 2, 3]) {
        const seen: string[] = []
        let cursor: string | null = null
        do {
          const page: Json = await body(
            api,
            `${query}&limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`,
          )
          seen.push(...page.data.map((p: Json) => p.id))
          cursor = page.nextCursor
        } while (cursor)
        assert.deepEqual(seen, full, `${sort} by ${limit}`)
      }
    }
    const byPrice = await body(api, 'sort=price&limit=200')
    const sorted = byPrice.data.map((p: Json) => p.price)
    assert.deepEqual(
      sorted,
      [...sorted].sort((a, b) => a - b),
    )
    const byName = (await body(api, 'sort=name&limit=200')).data.map((p: Json) =>
      p.name.toLowerCase(),
    )
    assert.deepEqual(byName, [...byName].sort())

    const first = await body(api, 'q=item&tag=all&limit=2')
    const next = first.nextCursor
    assert.equal(
      (await api.get(`/products?tag=all&q=item&limit=2&cursor=${next}&sort=relevance`)).statusCode,
      200,
    )
    for (const other of [
      'q=items&tag=all',
      'q=item',
      'q=item&tag=all&sort=newest',
      'q=item&tag=all&tag=x',
    ]) {
      expectError(await api.get(`/products?${other}&cursor=${next}`), 400, 'validation_failed')
    }
    const plain = await body(api, 'limit=2')
    expectError(
      await api.get(`/products?limit=2&tag=all&cursor=${plain.nextCursor}`),
      400,
      'validation_failed',
    )
    assert.equal(
      (await api.get(`/products?limit=2&sort=newest&cursor=${plain.nextCursor}`)).statusCode,
      200,
    )
  })

  it('ranks a sku match first, then names holding every word', async (t) => {
    const api = await buildTestApi(t, dialect)
    const coded = await api.createProduct({
      name: 'Something',
      description: 'blue mug',
      sku: 'BLUE-MUG',
    })
    await api.createProduct({ name: 'Blue mug' })
    await api.createProduct({ name: 'Cup', description: 'a blue mug' })
    assert.deepEqual(await names(api, 'q=blue-mug'), ['Something', 'Blue mug', 'Cup'])
    assert.equal(coded.sku, 'BLUE-MUG')
    assert.equal((await names(api, 'q=blue%20mug'))[0], 'Blue mug')
  })
})

describeEachDialect('GET /products?q= in any script', (dialect) => {
  it('a q whose letters have no ASCII spelling matches nothing, in every sort and with facets', async (t) => {
    const api = await buildTestApi(t, dialect)
    await api.createProduct({ name: 'Tablet' })
    for (const query of [
      'q=%F0%92%80%80',
      'q=%F0%92%80%80&sort=name',
      'q=%F0%92%80%80&facets=vendor,price',
    ]) {
      const page = await body(api, query)
      assert.deepEqual(page.data, [], query)
    }
  })
})

describeEachDialect('search documents under concurrent writes', (dialect) => {
  it('of writes to one product at once, the document holds every change', async (t) => {
    const api = await buildTestApi(t, dialect)
    const product = await api.createProduct({ name: 'Shared' })
    const variants: Json[] = []
    for (let i = 0; i < 6; i++) {
      variants.push(await addVariant(api, product.id, { name: `v${i}`, options: { n: String(i) } }))
    }
    const answers = await Promise.all([
      ...variants.map((variant, i) =>
        api.patch(`/products/${product.id}/variants/${variant.id}`, { sku: `CONC-${i}` }),
      ),
      api.patch(`/products/${product.id}`, { description: 'concurrently' }),
      addVariant(api, product.id, { name: 'late', sku: 'CONC-LATE', options: { n: 'late' } }),
    ])
    for (const answer of answers.slice(0, 7)) {
      assert.equal((answer as { statusCode: number }).statusCode, 200)
    }
    for (const text of ['CONC-0', 'CONC-3', 'CONC-5', 'concurrently', 'CONC-LATE']) {
      assert.deepEqual(await names(api, `q=${q(text)}`), ['Shared'], text)
    }
  })
})
