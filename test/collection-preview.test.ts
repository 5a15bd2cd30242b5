import assert from 'node:assert/strict'
import { it } from 'node:test'
import {
  addVariant,
  buildTestApi,
  describeEachDialect,
  expectError,
  type TestApi,
} from './helpers.js'
import { readFeed } from './event-helpers.js'

/**
 * POST /collections/preview (decision 0053): the count of products that unsaved smart rules
 * match, checked and matched as a smart collection's create would, writing nothing.
 */

async function preview(api: TestApi, body: unknown, key?: string) {
  const res = await api.post('/collections/preview', body, key)
  assert.equal(res.statusCode, 200, res.body)
  return res.json().data as { rules: unknown[]; disjunctive: boolean; productsCount: number }
}

/** A small catalogue whose products each rule kind tells apart. */
async function seed(api: TestApi) {
  const definition = await api.post('/metafield-definitions', {
    owner: 'product',
    namespace: 'custom',
    key: 'fabric',
    type: 'single_line_text_field',
    name: 'Fabric',
    filterable: true,
  })
  assert.equal(definition.statusCode, 200, definition.body)
  const shirt = await api.createProduct({
    name: 'Linen Shirt',
    price: 45,
    vendor: 'Acme',
    tags: ['Summer'],
    status: 'active',
    metafields: { 'custom.fabric': 'Linen' },
  })
  await addVariant(api, shirt.id, { name: 'Blue M', options: { Color: 'Blue', Size: 'M' } })
  await api.createProduct({ name: 'Wool Scarf', price: 19.5, vendor: 'Globex', tags: ['winter'] })
  await api.createProduct({ name: 'Straw hat', price: 12, product_type: 'Hats', status: 'active' })
  await api.createProduct({ name: 'Sun cream', price: 8 })
}

const RULE_SETS: { rules: Record<string, unknown>[]; disjunctive?: boolean; count: number }[] = [
  { rules: [{ field: 'price', relation: 'less_than', value: 20 }], count: 3 },
  { rules: [{ field: 'price', relation: 'greater_than', value: 19.5 }], count: 1 },
  { rules: [{ field: 'tag', relation: 'equals', value: 'summer' }], count: 1 },
  { rules: [{ field: 'tag', relation: 'not_equals', value: 'SUMMER' }], count: 3 },
  { rules: [{ field: 'name', relation: 'contains', value: ' S ' }], count: 4 },
  { rules: [{ field: 'name', relation: 'starts_with', value: 'su' }], count: 1 },
  { rules: [{ field: 'vendor', relation: 'not_contains', value: 'acm' }], count: 3 },
  { rules: [{ field: 'product_type', relation: 'ends_with', value: 'ATS' }], count: 1 },
  { rules: [{ field: 'status', relation: 'equals', value: 'active' }], count: 2 },
  { rules: [{ field: 'option.color', relation: 'equals', value: 'blue' }], count: 1 },
  { rules: [{ field: 'metafield.custom.fabric', relation: 'equals', value: 'LINEN' }], count: 1 },
  {
    rules: [
      { field: 'status', relation: 'equals', value: 'active' },
      { field: 'price', relation: 'less_than', value: 20 },
    ],
    count: 1,
  },
  {
    rules: [
      { field: 'status', relation: 'equals', value: 'active' },
      { field: 'price', relation: 'less_than', value: 20 },
    ],
    disjunctive: true,
    count: 4,
  },
]

describeEachDialect('collection rules preview', (dialect) => {
  it('counts what a smart collection with the same rules holds once created', async (t) => {
    const api = await buildTestApi(t, dialect)
    await seed(api)
    for (const { rules, disjunctive, count } of RULE_SETS) {
      const body = { rules, ...(disjunctive !== undefined && { disjunctive }) }
      const answer = await preview(api, body)
      assert.equal(answer.productsCount, count, JSON.stringify(body))
      const created = await api.post('/collections', { title: 'Check', ...body })
      assert.equal(created.statusCode, 200, created.body)
      const collection = created.json().data
      assert.equal(collection.productsCount, count, JSON.stringify(body))
      assert.deepEqual(answer.rules, collection.rules)
      assert.equal(answer.disjunctive, collection.disjunctive)
    }
  })

  it('answers the rules as a collection stores them: values and option names trimmed', async (t) => {
    const api = await buildTestApi(t, dialect)
    const answer = await preview(api, {
      rules: [{ field: 'option. Color ', relation: 'equals', value: ' Blue ' }],
      disjunctive: null,
    })
    assert.deepEqual(answer, {
      rules: [{ field: 'option.Color', relation: 'equals', value: 'Blue' }],
      disjunctive: false,
      productsCount: 0,
    })
  })

  it('refuses the rules a create refuses, with the same details', async (t) => {
    const api = await buildTestApi(t, dialect)
    await api.post('/metafield-definitions', {
      owner: 'product',
      namespace: 'custom',
      key: 'hidden',
      type: 'single_line_text_field',
      name: 'Hidden',
    })
    const tooMany = Array.from({ length: 61 }, () => ({
      field: 'price',
      relation: 'less_than',
      value: 1,
    }))
    const refused: unknown[] = [
      [],
      tooMany,
      [{ field: 'colour', relation: 'equals', value: 'x' }],
      [{ field: 'tag', relation: 'contains', value: 'x' }],
      [{ field: 'price', relation: 'less_than', value: '20' }],
      [{ field: 'status', relation: 'equals', value: 'gone' }],
      [{ field: 'metafield.custom.hidden', relation: 'equals', value: 'x' }],
      [{ field: 'name', relation: 'equals', value: '   ' }, 'not a rule'],
    ]
    for (const rules of refused) {
      const create = expectError(
        await api.post('/collections', { title: 'X', rules }),
        400,
        'validation_failed',
      )
      const previewed = expectError(
        await api.post('/collections/preview', { rules }),
        400,
        'validation_failed',
      )
      assert.deepEqual(previewed.details, create.details, JSON.stringify(rules))
    }
    expectError(await api.post('/collections/preview', {}), 400, 'validation_failed')
    expectError(await api.post('/collections/preview', { rules: null }), 400, 'validation_failed')
    const list = await api.get('/collections')
    assert.deepEqual(list.json().data, [])
  })

  it('writes nothing and appends no event', async (t) => {
    const api = await buildTestApi(t, dialect)
    await seed(api)
    const manual = await api.post('/collections', { title: 'Picks' })
    assert.equal(manual.statusCode, 200)
    const before = await readFeed(api, { atLeast: 6 })
    for (const { rules, disjunctive } of RULE_SETS) {
      await preview(api, { rules, disjunctive: disjunctive ?? false })
    }
    // A write after the previews: the feed then holds its event, and nothing between.
    const marker = await api.createProduct({ name: 'Marker' })
    const after = await readFeed(api, { atLeast: before.length + 1 })
    assert.deepEqual(
      after.slice(before.length).map((event) => [event.type, event.data.object.id]),
      [['product.created', marker.id]],
    )
    const collections = (await api.get('/collections')).json().data
    assert.deepEqual(
      collections.map((c: { title: string }) => c.title),
      ['Picks'],
    )
    // The handle counter was not touched either: the next smart create takes the plain handle.
    const smart = await api.post('/collections', {
      title: 'Under 20',
      rules: [{ field: 'price', relation: 'less_than', value: 20 }],
    })
    assert.equal(smart.json().data.handle, 'under-20')
  })

  it('is exact for the moment it answers, and sees only the key’s store', async (t) => {
    const api = await buildTestApi(t, dialect)
    const rules = [{ field: 'vendor', relation: 'equals', value: 'acme' }]
    assert.equal((await preview(api, { rules })).productsCount, 0)
    const product = await api.createProduct({ name: 'Anvil', vendor: 'Acme' })
    assert.equal((await preview(api, { rules })).productsCount, 1)
    const other = await api.newKey({ store: 'store-b' })
    await api.createProduct({ name: 'Rocket', vendor: 'ACME' }, other)
    assert.equal((await preview(api, { rules }, other)).productsCount, 1)
    assert.equal((await preview(api, { rules })).productsCount, 1)
    const changed = await api.patch(`/products/${product.id}`, { vendor: 'Globex' })
    assert.equal(changed.statusCode, 200, changed.body)
    assert.equal((await preview(api, { rules })).productsCount, 0)
  })

  it('takes a read key, as it writes nothing', async (t) => {
    const api = await buildTestApi(t, dialect)
    await api.createProduct({ name: 'Anvil', price: 5 })
    const read = await api.newKey({ scopes: ['read'] })
    const answer = await preview(
      api,
      { rules: [{ field: 'price', relation: 'equals', value: 5 }] },
      read,
    )
    assert.equal(answer.productsCount, 1)
    const anonymous = await api.request('POST', '/collections/preview', {
      key: 'nope',
      body: { rules: [{ field: 'price', relation: 'equals', value: 5 }] },
    })
    assert.equal(anonymous.statusCode, 401)
  })
})
