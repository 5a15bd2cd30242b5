import assert from 'node:assert/strict'
import { it } from 'node:test'
import {
  addVariant,
  buildTestApi,
  describeEachDialect,
  expectError,
  type TestApi,
  defineMetafield,
} from './helpers.js'

/** Custom attributes in the list's search, filters and facets, and in smart collection rules. */
const define = (api: TestApi, body: Record<string, unknown>) =>
  defineMetafield(api, { filterable: true, ...body })

async function names(api: TestApi, query: string): Promise<string[]> {
  const res = await api.get(`/products?${query}`)
  assert.equal(res.statusCode, 200, res.body)
  return res.json().data.map((p: { name: string }) => p.name)
}

function namesField(api: TestApi, query: string, field: string) {
  return api.get(`/products?${query}`).then((res) => {
    const body = expectError(res, 400, 'validation_failed')
    assert.ok(
      body.details?.some((d) => d.field === field),
      `expected a detail naming ${field}: ${res.body}`,
    )
  })
}

describeEachDialect('metafields in the product list', (dialect) => {
  it('filters by a filterable attribute: list items, variant values, typed values, any of, with q', async (t) => {
    const api = await buildTestApi(t, dialect)
    await define(api, { key: 'color', type: 'list.single_line_text_field' })
    await define(api, { key: 'seats', type: 'number_integer' })
    await define(api, { key: 'fit', owner: 'variant', type: 'single_line_text_field' })
    await define(api, { key: 'note', type: 'single_line_text_field', filterable: false })
    await api.createProduct({
      name: 'Sofa Alpha',
      metafields: { 'custom.color': ['red', 'blue'], 'custom.seats': 2 },
    })
    await api.createProduct({ name: 'Chair Beta', metafields: { 'custom.color': ['red'] } })
    const c = await api.createProduct({ name: 'Sofa Gamma', metafields: { 'custom.seats': 4 } })
    await addVariant(api, c.id, { name: 'Slim', metafields: { 'custom.fit': 'slim' } })

    assert.deepEqual(await names(api, 'metafield.custom.color=red'), ['Chair Beta', 'Sofa Alpha'])
    assert.deepEqual(await names(api, 'metafield.custom.color=blue'), ['Sofa Alpha'])
    assert.deepEqual(await names(api, 'metafield.custom.color=blue&metafield.custom.color=green'), [
      'Sofa Alpha',
    ])
    assert.deepEqual(await names(api, 'metafield.custom.seats=4'), ['Sofa Gamma'])
    assert.deepEqual(await names(api, 'metafield.custom.fit=slim'), ['Sofa Gamma'])
    assert.deepEqual(
      await names(api, 'metafield.custom.seats=2&metafield.custom.seats=4&q=sofa&sort=name'),
      ['Sofa Alpha', 'Sofa Gamma'],
    )
    assert.deepEqual(await names(api, 'metafield.custom.color=red&q=sofa'), ['Sofa Alpha'])
    assert.deepEqual(await names(api, 'metafield.custom.color=red&metafield.custom.seats=2'), [
      'Sofa Alpha',
    ])

    await namesField(api, 'metafield.custom.note=x', 'metafield.custom.note')
    await namesField(api, 'metafield.custom.nothing=x', 'metafield.custom.nothing')
    await namesField(api, 'metafield.custom.seats=two', 'metafield.custom.seats')
    await namesField(api, 'metafield.custom.seats=4.5', 'metafield.custom.seats')
    await namesField(api, 'facets=metafield.custom.note', 'facets')
  })

  it('binds the cursor to metafield filter values', async (t) => {
    const api = await buildTestApi(t, dialect)
    await define(api, { key: 'size', type: 'single_line_text_field' })
    for (const name of ['A', 'B', 'C']) {
      await api.createProduct({ name, metafields: { 'custom.size': 'm' } })
    }
    await api.createProduct({ name: 'D', metafields: { 'custom.size': 'l' } })
    const first = await api.get('/products?metafield.custom.size=m&limit=2')
    assert.equal(first.statusCode, 200, first.body)
    const cursor = first.json().nextCursor
    assert.equal(typeof cursor, 'string')
    const next = await api.get(`/products?metafield.custom.size=m&limit=2&cursor=${cursor}`)
    assert.deepEqual(
      [...first.json().data, ...next.json().data].map((p: { name: string }) => p.name),
      ['C', 'B', 'A'],
    )
    assert.equal(next.json().nextCursor, null)
    await namesField(api, `metafield.custom.size=l&limit=2&cursor=${cursor}`, 'cursor')
    await namesField(api, `limit=2&cursor=${cursor}`, 'cursor')
  })

  it('facets a filterable attribute: JSON values, exact disjunctive counts, ordered', async (t) => {
    const api = await buildTestApi(t, dialect)
    await define(api, { key: 'color', type: 'list.single_line_text_field' })
    await define(api, { key: 'seats', type: 'number_integer' })
    await define(api, { key: 'fit', owner: 'variant', type: 'single_line_text_field' })
    await api.createProduct({
      name: 'A',
      vendor: 'Acme',
      metafields: { 'custom.color': ['Red', 'blue'], 'custom.seats': 10 },
    })
    await api.createProduct({
      name: 'B',
      vendor: 'Acme',
      metafields: { 'custom.color': ['red'], 'custom.seats': 9 },
    })
    const c = await api.createProduct({
      name: 'C',
      vendor: 'Globex',
      metafields: { 'custom.seats': 10 },
    })
    await addVariant(api, c.id, { name: 'S1', metafields: { 'custom.fit': 'slim' } })
    await addVariant(api, c.id, { name: 'S2', sku: 'S2', metafields: { 'custom.fit': 'slim' } })

    const res = await api.get(
      '/products?facets=metafield.custom.color,metafield.custom.seats,metafield.custom.fit,vendor&metafield.custom.seats=10',
    )
    assert.equal(res.statusCode, 200, res.body)
    const facets = res.json().facets
    assert.deepEqual(facets['metafield.custom.color'], [
      { value: 'blue', count: 1 },
      { value: 'Red', count: 1 },
    ])
    // Its own filter is left out: both seat counts are shown.
    assert.deepEqual(facets['metafield.custom.seats'], [
      { value: 10, count: 2 },
      { value: 9, count: 1 },
    ])
    assert.deepEqual(facets['metafield.custom.fit'], [{ value: 'slim', count: 1 }])
    assert.deepEqual(facets.vendor, [
      { value: 'Acme', count: 1 },
      { value: 'Globex', count: 1 },
    ])
    // Ties by value, numbers from lowest (9 before 10, not as text).
    const limited = await api.get('/products?facets=metafield.custom.seats&facet_limit=1&q=acme')
    assert.deepEqual(limited.json().facets['metafield.custom.seats'], [{ value: 9, count: 1 }])
    const ties = await api.get('/products?facets=metafield.custom.seats')
    assert.deepEqual(ties.json().facets['metafield.custom.seats'], [
      { value: 10, count: 2 },
      { value: 9, count: 1 },
    ])
    // Without q the facets read every match from the filtered values' rows: a product is
    // counted once however many of its rows hold them (two variants; two items of a list).
    const byVariant = await api.get(
      '/products?metafield.custom.fit=slim&facets=vendor,tag,price,metafield.custom.seats',
    )
    assert.deepEqual(byVariant.json().facets.vendor, [{ value: 'Globex', count: 1 }])
    assert.deepEqual(byVariant.json().facets['metafield.custom.seats'], [{ value: 10, count: 1 }])
    const bothItems = await api.get(
      '/products?metafield.custom.color=Red&metafield.custom.color=blue&metafield.custom.color=red&facets=vendor,metafield.custom.seats',
    )
    assert.deepEqual(bothItems.json().facets.vendor, [{ value: 'Acme', count: 2 }])
    assert.deepEqual(bothItems.json().facets['metafield.custom.seats'], [
      { value: 9, count: 1 },
      { value: 10, count: 1 },
    ])
    // A facet with a filter of its own, beside an attribute's filter: its own left out.
    const ownFilter = await api.get(
      '/products?vendor=Acme&metafield.custom.seats=10&facets=vendor,metafield.custom.color',
    )
    assert.deepEqual(ownFilter.json().facets.vendor, [
      { value: 'Acme', count: 1 },
      { value: 'Globex', count: 1 },
    ])
    assert.deepEqual(ownFilter.json().facets['metafield.custom.color'], [
      { value: 'blue', count: 1 },
      { value: 'Red', count: 1 },
    ])
  })

  it('finds searchable text values with q, kept on writes, definition changes and deletes', async (t) => {
    const api = await buildTestApi(t, dialect)
    const material = await define(api, {
      key: 'material',
      type: 'single_line_text_field',
      filterable: false,
      searchable: true,
    })
    const care = await define(api, {
      key: 'care',
      type: 'list.single_line_text_field',
      filterable: false,
    })
    const lining = await define(api, {
      key: 'lining',
      owner: 'variant',
      type: 'single_line_text_field',
      searchable: true,
    })
    const a = await api.createProduct({
      name: 'Coat',
      metafields: { 'custom.material': 'Crème Merino', 'custom.care': ['handwash'] },
    })
    const b = await api.createProduct({ name: 'Jacket' })
    await addVariant(api, b.id, { name: 'Tall', metafields: { 'custom.lining': 'Taffeta' } })

    assert.deepEqual(await names(api, 'q=creme%20merino'), ['Coat'])
    assert.deepEqual(await names(api, 'q=meri'), ['Coat'])
    assert.deepEqual(await names(api, 'q=handwash'), [])
    assert.deepEqual(await names(api, 'q=taffeta'), ['Jacket'])

    // A write of the values rebuilds the document.
    const patched = await api.patch(`/products/${a.id}`, {
      metafields: { 'custom.material': 'Alpaca' },
    })
    assert.equal(patched.statusCode, 200, patched.body)
    assert.deepEqual(await names(api, 'q=merino'), [])
    assert.deepEqual(await names(api, 'q=alpaca'), ['Coat'])

    // Turning searchable on and off rebuilds the documents holding the key.
    const on = await api.patch(`/metafield-definitions/${care.id}`, { searchable: true })
    assert.equal(on.statusCode, 200, on.body)
    assert.deepEqual(await names(api, 'q=handwash'), ['Coat'])
    const off = await api.patch(`/metafield-definitions/${material.id}`, { searchable: false })
    assert.equal(off.statusCode, 200, off.body)
    assert.deepEqual(await names(api, 'q=alpaca'), [])

    // Deleting a searchable definition removes its text.
    const gone = await api.delete(`/metafield-definitions/${lining.id}`)
    assert.equal(gone.statusCode, 200, gone.body)
    assert.deepEqual(await names(api, 'q=taffeta'), [])
    assert.deepEqual(await names(api, 'q=jacket'), ['Jacket'])
  })

  it('smart collection rules on filterable product attributes: validated, exact at commit, same in SQL', async (t) => {
    const api = await buildTestApi(t, dialect)
    await define(api, { key: 'seats', type: 'number_integer' })
    await define(api, { key: 'color', type: 'list.single_line_text_field' })
    await define(api, { key: 'note', type: 'single_line_text_field', filterable: false })
    await define(api, { key: 'fit', owner: 'variant', type: 'single_line_text_field' })
    const a = await api.createProduct({
      name: 'A',
      metafields: { 'custom.seats': 2, 'custom.color': ['Red', 'blue'] },
    })
    const b = await api.createProduct({ name: 'B', metafields: { 'custom.seats': 5 } })
    await api.createProduct({ name: 'C' })

    const create = (rules: unknown[], disjunctive = false) =>
      api.post('/collections', { title: 'T', rules, disjunctive })
    const refused = async (rule: Record<string, unknown>, field: string) => {
      const body = expectError(await create([rule]), 400, 'validation_failed')
      assert.ok(
        body.details?.some((d) => d.field === field),
        JSON.stringify(body),
      )
    }
    await refused(
      { field: 'metafield.custom.note', relation: 'equals', value: 'x' },
      'rules[0].field',
    )
    await refused(
      { field: 'metafield.custom.fit', relation: 'equals', value: 'x' },
      'rules[0].field',
    )
    await refused(
      { field: 'metafield.custom.nope', relation: 'equals', value: 'x' },
      'rules[0].field',
    )
    await refused(
      { field: 'metafield.custom.seats', relation: 'equals', value: '2' },
      'rules[0].value',
    )
    await refused(
      { field: 'metafield.custom.seats', relation: 'equals', value: 2.5 },
      'rules[0].value',
    )
    await refused(
      { field: 'metafield.custom.color', relation: 'greater_than', value: 'a' },
      'rules[0].relation',
    )
    await refused(
      { field: 'metafield.custom.color', relation: 'equals', value: 3 },
      'rules[0].value',
    )

    const members = async (id: string) => {
      const res = await api.get(`/collections/${id}/products?limit=100`)
      assert.equal(res.statusCode, 200, res.body)
      return res
        .json()
        .data.map((p: { name: string }) => p.name)
        .sort()
    }
    // Computed in SQL when created.
    const big = await create([
      { field: 'metafield.custom.seats', relation: 'greater_than', value: 2 },
    ])
    assert.equal(big.statusCode, 200, big.body)
    const red = await create([
      { field: 'metafield.custom.color', relation: 'equals', value: 'RED' },
    ])
    const two = await create([{ field: 'metafield.custom.seats', relation: 'equals', value: 2 }])
    const few = await create([{ field: 'metafield.custom.seats', relation: 'less_than', value: 5 }])
    const ids = [big, red, two, few].map((res) => res.json().data.id as string)
    const sqlMembers = await Promise.all(ids.map(members))
    assert.deepEqual(sqlMembers, [['B'], ['A'], ['A'], ['A']])

    // Kept in memory by product writes: the same answers as SQL after each change.
    await api.patch(`/products/${a.id}`, {
      metafields: { 'custom.seats': 9, 'custom.color': null },
    })
    await api.patch(`/products/${b.id}`, { metafields: { 'custom.color': ['red'] } })
    const d = await api.createProduct({ name: 'D', metafields: { 'custom.seats': 1 } })
    assert.ok(d.id)
    const memory = await Promise.all(ids.map(members))
    assert.deepEqual(memory, [['A', 'B'], ['B'], [], ['D']])
    // Recomputing the same rules in SQL (a rules change) agrees.
    for (const id of ids) {
      const current = (await api.get(`/collections/${id}`)).json().data
      const res = await api.patch(`/collections/${id}`, {
        rules: [...current.rules, { field: 'status', relation: 'not_equals', value: 'archived' }],
      })
      assert.equal(res.statusCode, 200, res.body)
    }
    assert.deepEqual(await Promise.all(ids.map(members)), memory)
  })
})
