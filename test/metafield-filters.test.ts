import assert from 'node:assert/strict'
import { it } from 'node:test'
import { sql } from 'kysely'
import {
  metafieldCondition,
  metafieldFacet,
  metafieldFilters,
} from '../src/attributes/metafield-filters.js'
import { searchableTextOf } from '../src/attributes/values/metafield-values.js'
import {
  addVariant,
  buildTestApi,
  describeEachDialect,
  type TestApi,
  defineMetafield,
} from './helpers.js'

/** The search's side, before it lands: filters and facets over the filter index. */
const define = (api: TestApi, body: Record<string, unknown>) =>
  defineMetafield(api, { filterable: true, ...body })

describeEachDialect('metafield filters and facets over the index', (dialect) => {
  it('a filter matches products holding a value (a list item, a variant value), facets count them', async (t) => {
    const api = await buildTestApi(t, dialect)
    await define(api, { key: 'color', type: 'list.single_line_text_field' })
    await define(api, { key: 'seats', type: 'number_integer' })
    await define(api, { key: 'fit', owner: 'variant', type: 'single_line_text_field' })
    await define(api, { key: 'note', type: 'single_line_text_field', filterable: false })
    const a = await api.createProduct({
      name: 'A',
      metafields: { 'custom.color': ['red', 'blue'], 'custom.seats': 2 },
    })
    const b = await api.createProduct({ name: 'B', metafields: { 'custom.color': ['red'] } })
    const c = await api.createProduct({ name: 'C', metafields: { 'custom.seats': 4 } })
    await addVariant(api, c.id, { name: 'Slim', metafields: { 'custom.fit': 'slim' } })
    await addVariant(api, c.id, { name: 'Slim 2', sku: 'S2', metafields: { 'custom.fit': 'slim' } })
    const db = api.database.kysely
    const matching = async (parameters: Record<string, string[]>) => {
      const filters = await metafieldFilters(db, 'store-a', parameters)
      const { rows } = await sql<{ id: string }>`select p.id from products p
        where p.store_id = ${'store-a'}
        ${sql.join(
          filters.map((f) => sql`and ${metafieldCondition('store-a', 'p.id', f)}`),
          sql` `,
        )}
        order by p.name`.execute(db)
      return rows.map((row) => row.id)
    }
    assert.deepEqual(await matching({ 'metafield.custom.color': ['red'] }), [a.id, b.id])
    assert.deepEqual(await matching({ 'metafield.custom.color': ['blue', 'green'] }), [a.id])
    assert.deepEqual(await matching({ 'metafield.custom.seats': ['4'] }), [c.id])
    assert.deepEqual(await matching({ 'metafield.custom.fit': ['slim'] }), [c.id])
    assert.deepEqual(
      await matching({ 'metafield.custom.color': ['red'], 'metafield.custom.seats': ['2'] }),
      [a.id],
    )
    await assert.rejects(matching({ 'metafield.custom.note': ['x'] }), /invalid fields/)
    await assert.rejects(matching({ 'metafield.custom.seats': ['two'] }), /invalid fields/)

    const all = sql`select id from products where store_id = ${'store-a'}`
    const filters = await metafieldFilters(db, 'store-a', { 'metafield.custom.color': ['x'] })
    assert.deepEqual(
      await metafieldFacet(db, 'store-a', filters[0]!.definitionId, all, 20, 'product'),
      [
        { value: 'red', count: 2 },
        { value: 'blue', count: 1 },
      ],
    )
    // Every product of the store: the definition's rows alone, the same counts.
    assert.deepEqual(
      await metafieldFacet(db, 'store-a', filters[0]!.definitionId, undefined, 20, 'product'),
      [
        { value: 'red', count: 2 },
        { value: 'blue', count: 1 },
      ],
    )
    const one = sql`select id from products where store_id = ${'store-a'} and id = ${b.id}`
    assert.deepEqual(
      await metafieldFacet(db, 'store-a', filters[0]!.definitionId, one, 20, 'product'),
      [{ value: 'red', count: 1 }],
    )
    const seats = await metafieldFilters(db, 'store-a', { 'metafield.custom.seats': ['1'] })
    assert.deepEqual(
      await metafieldFacet(db, 'store-a', seats[0]!.definitionId, all, 1, 'product'),
      [{ value: 2, count: 1 }],
    )
    const fit = await metafieldFilters(db, 'store-a', { 'metafield.custom.fit': ['x'] })
    assert.deepEqual(
      await metafieldFacet(db, 'store-a', fit[0]!.definitionId, all, 20, 'variant'),
      [{ value: 'slim', count: 1 }],
    )
    // Two variants of one product hold it: one product.
    assert.deepEqual(
      await metafieldFacet(db, 'store-a', fit[0]!.definitionId, undefined, 20, 'variant'),
      [{ value: 'slim', count: 1 }],
    )
  })

  it('gives the searchable text of a record: the text values of its searchable definitions', async (t) => {
    const api = await buildTestApi(t, dialect)
    await define(api, { key: 'care', type: 'multi_line_text_field', searchable: true })
    await define(api, { key: 'tags', type: 'list.single_line_text_field', searchable: true })
    await define(api, { key: 'secret', type: 'single_line_text_field' })
    const text = await searchableTextOf(api.database.kysely, 'store-a', 'product', {
      'custom.care': 'Wash cold',
      'custom.tags': ['linen', 'summer'],
      'custom.secret': 'hidden',
    })
    assert.equal(text, 'Wash cold\nlinen\nsummer')
  })

  it('a PATCH leaves the index rows of the values it keeps, deletes the gone ones, adds the new', async (t) => {
    const api = await buildTestApi(t, dialect)
    const color = await define(api, { key: 'color', type: 'list.single_line_text_field' })
    const seats = await define(api, { key: 'seats', type: 'number_integer' })
    const names = new Map([
      [color.id, 'color'],
      [seats.id, 'seats'],
    ])
    const product = await api.createProduct({
      name: 'A',
      metafields: { 'custom.color': ['red', 'blue'], 'custom.seats': 2 },
    })
    const rows = async () => {
      const { rows } = await sql<{ definition_id: string; value: string }>`
        select definition_id, value from metafield_values
        where store_id = ${'store-a'} and record_id = ${product.id}`.execute(api.database.kysely)
      return rows.map((row) => `${names.get(row.definition_id)}=${JSON.parse(row.value)}`).sort()
    }
    assert.deepEqual(await rows(), ['color=blue', 'color=red', 'seats=2'])
    const patch = async (metafields: Record<string, unknown>) => {
      const res = await api.patch(`/products/${product.id}`, { metafields })
      assert.equal(res.statusCode, 200, res.body)
    }
    await patch({ 'custom.color': ['blue', 'green'] })
    assert.deepEqual(await rows(), ['color=blue', 'color=green', 'seats=2'])
    await patch({ 'custom.seats': null })
    assert.deepEqual(await rows(), ['color=blue', 'color=green'])
    await patch({ 'custom.seats': 3, 'custom.color': null })
    assert.deepEqual(await rows(), ['seats=3'])
  })

  it('a deleted product leaves no index row, its variants none, a deleted definition none', async (t) => {
    const api = await buildTestApi(t, dialect)
    const color = await define(api, { key: 'color', type: 'single_line_text_field' })
    const fit = await define(api, { key: 'fit', owner: 'variant', type: 'single_line_text_field' })
    const kept = await api.createProduct({ name: 'Kept', metafields: { 'custom.color': 'red' } })
    const gone = await api.createProduct({ name: 'Gone', metafields: { 'custom.color': 'red' } })
    await addVariant(api, gone.id, { name: 'Slim', metafields: { 'custom.fit': 'slim' } })
    await addVariant(api, kept.id, { name: 'Slim', metafields: { 'custom.fit': 'slim' } })
    const indexRows = async (column: 'product_id' | 'definition_id', id: string) => {
      const { rows } = await sql<{ n: number }>`select count(*) as n from metafield_values
        where store_id = ${'store-a'} and ${sql.ref(column)} = ${id}`.execute(api.database.kysely)
      return Number(rows[0]!.n)
    }
    const facets = async () => {
      const res = await api.get('/products?facets=metafield.custom.color,metafield.custom.fit')
      assert.equal(res.statusCode, 200, res.body)
      return res.json().facets
    }
    assert.deepEqual(await facets(), {
      'metafield.custom.color': [{ value: 'red', count: 2 }],
      'metafield.custom.fit': [{ value: 'slim', count: 2 }],
    })
    assert.equal((await api.delete(`/products/${gone.id}`)).statusCode, 200)
    assert.equal(await indexRows('product_id', gone.id), 0)
    // Over every product, a facet counts the definition's index rows alone.
    assert.deepEqual(await facets(), {
      'metafield.custom.color': [{ value: 'red', count: 1 }],
      'metafield.custom.fit': [{ value: 'slim', count: 1 }],
    })
    assert.equal((await api.delete(`/metafield-definitions/${fit.id}`)).statusCode, 200)
    assert.equal(await indexRows('definition_id', fit.id), 0)
    assert.equal(await indexRows('definition_id', color.id), 1)
  })
})
