import assert from 'node:assert/strict'
import { it } from 'node:test'
import { buildTestApi, describeEachDialect, type TestApi, defineMetafield } from './helpers.js'
import { csv, importText } from './import-helpers.js'

/**
 * An import's values of custom attributes: checked by the store's definitions in a dry run as
 * in a real one (contract part 3: a dry run "reads and validates everything, writes nothing,
 * and prints the summary a real run would print"), and new products holding values written
 * by the import's batch as the API's creates leave them (values, filter index, search text,
 * events, smart collections).
 */

const define = (api: TestApi, body: Record<string, unknown>) => defineMetafield(api, body)

/** POST /imports of `file`, waited for: the job's record. */
async function importOverHttp(api: TestApi, file: string) {
  const posted = await api.request('POST', '/imports', {
    body: file,
    headers: { 'content-type': 'text/csv' },
  })
  assert.equal(posted.statusCode, 202, posted.body)
  const id = posted.json().data.id
  for (let i = 0; i < 3000; i++) {
    const record = (await api.get(`/imports/${id}`)).json().data
    if (record.status !== 'running') return record
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
  throw new Error('the import did not finish')
}

async function names(api: TestApi, query: string): Promise<string[]> {
  const res = await api.get(`/products?${query}`)
  assert.equal(res.statusCode, 200, res.body)
  return res.json().data.map((p: { name: string }) => p.name)
}

const HEADER =
  'Handle,Title,Option1 Name,Option1 Value,Variant SKU,' +
  'Weight (product.metafields.custom.weight),Material (product.metafields.custom.material),' +
  'Code (product.metafields.custom.code),Swatch (variant.metafields.fit.color)'

describeEachDialect(
  'metafield values in an import: checked dry as real, written in batch',
  (dialect) => {
    it('a dry run reports the value errors a real run does, on their row and column, and writes nothing', async (t) => {
      const api = await buildTestApi(t, dialect)
      await define(api, {
        key: 'weight',
        type: 'number_integer',
        validations: { min: 1, max: 100 },
      })
      await define(api, {
        key: 'material',
        type: 'single_line_text_field',
        validations: { choices: ['cotton', 'linen'] },
        filterable: true,
      })
      await define(api, {
        key: 'code',
        type: 'single_line_text_field',
        validations: { regex: '[A-Z]{3}' },
      })
      await define(api, { owner: 'variant', namespace: 'fit', key: 'color', type: 'color' })
      const file = csv(
        HEADER,
        'a,A,Size,S,A-S,heavy,,,', // 2: not an integer
        'b,B,Size,S,B-S,500,,,', // 3: over max
        'c,C,Size,S,C-S,,wool,,', // 4: not a choice
        'd,D,Size,S,D-S,,,,#AABBCC', // 5
        'd,,,M,D-M,,,,blue', // 6: not a color, on the variant's row
        'e,E,Size,S,E-S,,,abcd,', // 7: does not match the pattern
        'f,F,Size,S,F-S,0,silk,ABC,#00ff00', // 8: two errors of one product
        'g,G,Size,S,G-S,12,linen,XYZ,#112233', // 9: imported
      )
      const dry = await importText(api.database, 'store-a', file, { dryRun: true })
      // Nothing written: no product, no filter index row.
      assert.deepEqual(await names(api, ''), [])
      assert.deepEqual(await names(api, 'metafield.custom.material=linen'), [])
      const count = await api.database.kysely
        .selectFrom('metafield_values')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow()
      assert.equal(Number(count.n), 0)

      const expected = [
        [2, 'a', 'Weight (product.metafields.custom.weight)'],
        [3, 'b', 'Weight (product.metafields.custom.weight)'],
        [4, 'c', 'Material (product.metafields.custom.material)'],
        [6, 'd', 'Swatch (variant.metafields.fit.color)'],
        [7, 'e', 'Code (product.metafields.custom.code)'],
        [8, 'f', 'Weight (product.metafields.custom.weight)'],
        [8, 'f', 'Material (product.metafields.custom.material)'],
      ]
      assert.deepEqual(
        dry.errors.map((e) => [e.row, e.handle, e.field]),
        expected,
      )
      assert.ok(dry.errors.every((e) => e.error === 'validation_failed'))
      assert.deepEqual([dry.productsCreated, dry.variantsCreated, dry.rowsFailed], [1, 1, 7])

      const real = await importOverHttp(api, file)
      assert.equal(real.status, 'succeeded', JSON.stringify(real))
      // The same errors, messages included, and the same counts.
      assert.deepEqual(
        real.errors.map((e: Record<string, unknown>) => [e.row, e.handle, e.field, e.message]),
        dry.errors.map((e) => [e.row, e.handle, e.field, e.message]),
      )
      assert.deepEqual(
        [real.productsCreated, real.variantsCreated, real.rowsFailed],
        [dry.productsCreated, dry.variantsCreated, dry.rowsFailed],
      )
      assert.deepEqual(await names(api, ''), ['G'])
      assert.deepEqual(await names(api, 'metafield.custom.material=linen'), ['G'])

      // An update is checked on the values it changes, dry as real.
      const update = csv(HEADER, 'g,G,Size,S,G-S,101,,,')
      const dryUpdate = await importText(api.database, 'store-a', update, { dryRun: true })
      assert.deepEqual(
        dryUpdate.errors.map((e) => [e.row, e.field]),
        [[2, 'Weight (product.metafields.custom.weight)']],
      )
      const realUpdate = await importOverHttp(api, update)
      assert.deepEqual(
        realUpdate.errors.map((e: Record<string, unknown>) => [e.row, e.field, e.message]),
        dryUpdate.errors.map((e) => [e.row, e.field, e.message]),
      )
      const [g] = (await api.get('/products')).json().data
      assert.equal(g.metafields['custom.weight'], 12)
    })

    it('new products with values: stored, indexed, searchable, in events and smart collections as API creates', async (t) => {
      const api = await buildTestApi(t, dialect)
      await define(api, {
        key: 'material',
        type: 'single_line_text_field',
        filterable: true,
        searchable: true,
      })
      await define(api, { key: 'weight', type: 'number_integer', filterable: true })
      await define(api, { key: 'code', type: 'list.single_line_text_field', filterable: true })
      await define(api, {
        owner: 'variant',
        namespace: 'fit',
        key: 'color',
        type: 'color',
        filterable: true,
      })
      const collection = await api.post('/collections', {
        title: 'Linen',
        rules: [{ field: 'metafield.custom.material', relation: 'equals', value: 'LINEN' }],
      })
      assert.equal(collection.statusCode, 200, collection.body)
      const start = (await api.get('/events')).json().nextCursor

      const file = csv(
        HEADER,
        'shirt,Shirt,Size,S,SH-S,3,linen,a; a; b,#AABBCC',
        'shirt,,,M,SH-M,,,,#112233',
        'towel,Towel,Size,S,TO-S,5,terrycloth,b,',
        'plain,Plain,Size,S,PL-S,,,,',
      )
      const record = await importOverHttp(api, file)
      assert.equal(record.status, 'succeeded', JSON.stringify(record))
      assert.deepEqual(record.errors, [])
      assert.deepEqual([record.productsCreated, record.variantsCreated], [3, 4])

      const products = (await api.get('/products?sort=name')).json().data
      const shirt = (await api.get(`/products/${products[1].id}`)).json().data
      assert.equal(shirt.name, 'Shirt')
      assert.deepEqual(shirt.metafields, {
        'custom.weight': 3,
        'custom.material': 'linen',
        'custom.code': ['a', 'a', 'b'],
      })
      assert.deepEqual(
        shirt.variants.map((v: { metafields: unknown }) => v.metafields),
        [{ 'fit.color': '#aabbcc' }, { 'fit.color': '#112233' }],
      )
      assert.deepEqual(products[0].metafields, {})

      // The filter index: product and variant values, list items once each, facets.
      assert.deepEqual(await names(api, 'metafield.custom.material=linen'), ['Shirt'])
      assert.deepEqual(await names(api, 'metafield.custom.weight=5'), ['Towel'])
      assert.deepEqual(await names(api, 'metafield.fit.color=%23112233'), ['Shirt'])
      assert.deepEqual(await names(api, 'metafield.custom.code=b&sort=name'), ['Shirt', 'Towel'])
      const facets = (await api.get('/products?facets=metafield.custom.code')).json().facets
      assert.deepEqual(facets['metafield.custom.code'], [
        { value: 'b', count: 2 },
        { value: 'a', count: 1 },
      ])
      // Searchable text, and the smart collection's membership at commit.
      assert.deepEqual(await names(api, 'q=terrycloth'), ['Towel'])
      const members = (await api.get(`/collections/${collection.json().data.id}/products`)).json()
      assert.deepEqual(
        members.data.map((p: { name: string }) => p.name),
        ['Shirt'],
      )

      // Events carry the values as the records do.
      const events = (await api.get(`/events?after=${start}&limit=100`)).json().data
      const created = events.filter(
        (e: Record<string, any>) => e.type === 'product.created' && e.data.object.id === shirt.id,
      )
      assert.equal(created.length, 1)
      assert.deepEqual(created[0].data.object.metafields, shirt.metafields)
      const variantEvents = events.filter(
        (e: Record<string, any>) =>
          e.type === 'variant.created' && e.data.object.productId === shirt.id,
      )
      assert.deepEqual(
        variantEvents.map((e: Record<string, any>) => e.data.object.metafields),
        [{ 'fit.color': '#aabbcc' }, { 'fit.color': '#112233' }],
      )
    })
  },
)
