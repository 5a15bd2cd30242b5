import assert from 'node:assert/strict'
import { createReadStream } from 'node:fs'
import { it } from 'node:test'
import { createDefinitionWork } from '../src/attributes/metafield-definition.service.js'
import type { Database } from '../src/db/database.js'
import { createMissingDefinitions } from '../src/import/metafield-import.js'
import { buildTestApi, createTestDatabase, describeEachDialect } from './helpers.js'
import { catalogue, csv, exportText, importText, SHOPIFY_SAMPLES } from './import-helpers.js'

const GREAT_OUTDOOR = `${SHOPIFY_SAMPLES}/greatoutdoor_products_export_1.csv`

async function define(
  database: Database,
  store: string,
  owner: 'product' | 'variant',
  namespace: string,
  key: string,
  type: Parameters<typeof createDefinitionWork>[1]['type'],
) {
  return database.write(
    createDefinitionWork(store, { owner, namespace, key, type, name: `${namespace}.${key}` }),
  )
}

describeEachDialect('metafields in Shopify CSV', (dialect) => {
  it('a metafield column without a definition is not stored; with one, its values are', async (t) => {
    const database = await createTestDatabase(t, dialect)
    const before = await importText(database, 'shop', { file: GREAT_OUTDOOR })
    const columns = before.columnsNotStored.filter((name) => name.includes('.metafields.'))
    assert.equal(columns.length, 16)
    const armchair = (await catalogue(database, 'shop')).find(
      (p) => p.slug === 'honey-textured-armchair',
    )!
    assert.deepEqual(armchair.metafields, {})

    await define(database, 'shop', 'product', 'custom', 'material', 'single_line_text_field')
    const after = await importText(database, 'shop', { file: GREAT_OUTDOOR })
    assert.ok(!after.columnsNotStored.includes('Material (product.metafields.custom.material)'))
    assert.equal(after.columnsNotStored.filter((n) => n.includes('.metafields.')).length, 15)
    const again = (await catalogue(database, 'shop')).find(
      (p) => p.slug === 'honey-textured-armchair',
    )!
    assert.deepEqual(again.metafields, { 'custom.material': 'Cane' })
  })

  it('--create-definitions creates the missing ones (lists for "; " values) and every value is stored', async (t) => {
    const database = await createTestDatabase(t, dialect)
    const created = await createMissingDefinitions(
      database,
      'shop',
      createReadStream(GREAT_OUTDOOR),
    )
    assert.equal(created.length, 16)
    // The file gives many products the sku '100: cleared, so that every product is imported.
    const summary = await importText(
      database,
      'shop',
      { file: GREAT_OUTDOOR },
      { duplicateSkus: 'clear' },
    )
    assert.deepEqual(summary.errors, [])
    assert.equal(summary.columnsNotStored.filter((n) => n.includes('.metafields.')).length, 0)
    const definitions = await database.kysely
      .selectFrom('metafield_definitions')
      .select(['namespace', 'key', 'type', 'name'])
      .where('store_id', '=', 'shop')
      .execute()
    const color = definitions.find((d) => d.key === 'color-pattern')!
    assert.equal(color.name, 'Color')
    assert.equal(color.type, 'list.single_line_text_field')
    const products = await catalogue(database, 'shop')
    const withValues = products.filter((p) => Object.keys(p.metafields as object).length > 0)
    assert.ok(withValues.length > 0)
    const armchair = products.find((p) => p.slug === 'honey-textured-armchair')!
    const values = armchair.metafields as Record<string, unknown>
    assert.equal(values['custom.material'], 'Cane')
    for (const value of Object.values(values)) assert.notEqual(value, '')
  })

  it('variant columns are stored on each variant; import(export(store)) keeps every value', async (t) => {
    const database = await createTestDatabase(t, dialect)
    for (const store of ['source', 'target']) {
      await define(database, store, 'product', 'custom', 'fabric', 'list.single_line_text_field')
      await define(database, store, 'product', 'custom', 'care', 'multi_line_text_field')
      await define(database, store, 'product', 'specs', 'weight', 'number_decimal')
      await define(database, store, 'product', 'specs', 'launched', 'date_time')
      await define(database, store, 'product', 'specs', 'extra', 'json')
      await define(database, store, 'variant', 'fit', 'true-to-size', 'boolean')
      await define(database, store, 'variant', 'fit', 'sizes', 'list.number_integer')
      await define(database, store, 'variant', 'fit', 'color', 'color')
    }
    const file = csv(
      'Handle,Title,Option1 Name,Option1 Value,Variant SKU,' +
        'Fabric (product.metafields.custom.fabric),Care (product.metafields.custom.care),' +
        'Weight (product.metafields.specs.weight),Launched (product.metafields.specs.launched),' +
        'Extra (product.metafields.specs.extra),' +
        'True to size (variant.metafields.fit.true-to-size),Sizes (variant.metafields.fit.sizes),' +
        'Swatch (variant.metafields.fit.color)',
      'tee,Tee,Size,S,TEE-S,cotton; linen,"Wash cold\nDry flat",0.25,2026-11-30T10:00:00+01:00,' +
        '"{""a"":[1,2]}",true,36; 38,#AABBCC',
      'tee,,,M,TEE-M,,,,,,false,40,',
      'mug,Mug,,,,,,,,,,,',
    )
    const summary = await importText(database, 'source', file)
    assert.deepEqual(summary.errors, [])
    const source = await catalogue(database, 'source')
    const tee = source.find((p) => p.slug === 'tee')!
    assert.deepEqual(tee.metafields, {
      'custom.fabric': ['cotton', 'linen'],
      'custom.care': 'Wash cold\nDry flat',
      'specs.weight': 0.25,
      'specs.launched': '2026-11-30T09:00:00.000Z',
      'specs.extra': { a: [1, 2] },
    })
    const variants = tee.variants as { metafields: unknown }[]
    assert.deepEqual(variants[0]!.metafields, {
      'fit.true-to-size': true,
      'fit.sizes': [36, 38],
      'fit.color': '#aabbcc',
    })
    assert.deepEqual(variants[1]!.metafields, { 'fit.true-to-size': false, 'fit.sizes': [40] })

    const exported = await exportText(database, 'source')
    const header = exported.split('\n', 1)[0]!
    assert.ok(header.includes('custom.fabric (product.metafields.custom.fabric)'), header)
    assert.ok(header.includes('fit.sizes (variant.metafields.fit.sizes)'), header)
    assert.ok(exported.includes('cotton; linen'))
    const back = await importText(database, 'target', exported)
    assert.deepEqual(back.errors, [])
    assert.deepEqual(await catalogue(database, 'target'), source)
    // And once more: importing the export again over the same store changes nothing.
    const twice = await importText(database, 'source', exported)
    assert.equal(twice.productsUpdated, 0)
    assert.equal(twice.variantsUpdated, 0)
  })

  it('POST /imports?create_definitions=true creates the missing definitions first', async (t) => {
    const api = await buildTestApi(t, dialect)
    const file = csv(
      'Handle,Title,Fabric (product.metafields.custom.fabric),Fit (variant.metafields.fit.cut),Variant SKU',
      'tee,Tee,cotton; linen,slim,TEE-1',
    )
    const post = (query: string) =>
      api.request('POST', `/imports${query}`, {
        body: file,
        headers: { 'content-type': 'text/csv' },
      })
    const wait = async (id: string) => {
      for (let i = 0; i < 3000; i++) {
        const record = (await api.get(`/imports/${id}`)).json().data
        if (record.status !== 'running') return record
        await new Promise((resolve) => setTimeout(resolve, 10))
      }
      throw new Error('the import did not finish')
    }
    const without = await wait((await post('')).json().data.id)
    assert.equal(without.columnsNotStored.length, 2)
    const res = await post('?create_definitions=true')
    assert.equal(res.statusCode, 202, res.body)
    const record = await wait(res.json().data.id)
    assert.equal(record.status, 'succeeded', JSON.stringify(record))
    assert.deepEqual(record.columnsNotStored, [])
    const definitions = (await api.get('/metafield-definitions')).json().data
    assert.deepEqual(
      definitions
        .map((d: Record<string, string>) => [d.owner, d.namespace, d.key, d.type, d.name])
        .sort(),
      [
        ['product', 'custom', 'fabric', 'list.single_line_text_field', 'Fabric'],
        ['variant', 'fit', 'cut', 'single_line_text_field', 'Fit'],
      ],
    )
    const [product] = (await api.get('/products')).json().data
    const read = (await api.get(`/products/${product.id}`)).json().data
    assert.deepEqual(read.metafields, { 'custom.fabric': ['cotton', 'linen'] })
    assert.deepEqual(read.variants[0].metafields, { 'fit.cut': 'slim' })
  })

  it('a bad value is the row error of its column', async (t) => {
    const database = await createTestDatabase(t, dialect)
    await define(database, 'shop', 'product', 'specs', 'weight', 'number_integer')
    await define(database, 'shop', 'variant', 'fit', 'color', 'color')
    const summary = await importText(
      database,
      'shop',
      csv(
        'Handle,Title,Variant SKU,Weight (product.metafields.specs.weight),Swatch (variant.metafields.fit.color)',
        'a,A,A-1,heavy,',
        'b,B,B-1,3,blue',
      ),
    )
    assert.deepEqual(
      summary.errors.map((e) => [e.row, e.handle, e.field]),
      [
        [2, 'a', 'Weight (product.metafields.specs.weight)'],
        [3, 'b', 'Swatch (variant.metafields.fit.color)'],
      ],
    )
  })
})
