import assert from 'node:assert/strict'
import { it } from 'node:test'
import { readFeed } from './event-helpers.js'
import { buildTestApi, describeEachDialect } from './helpers.js'
import { csv, importText } from './import-helpers.js'

const HEAD = 'Handle,Title,Option1 Name,Option1 Value,Variant SKU,Variant Price'

/** An import's changes append the same events as the same changes made through the API. */
describeEachDialect('import: events', (dialect) => {
  it('a first import appends product.created and variant.created; a changed row product.updated or variant.updated; a second run of the same file none', async (t) => {
    const api = await buildTestApi(t, dialect)
    const file = csv(HEAD, 'mug,Mug,Size,S,MUG-S,9.5', 'mug,,,M,MUG-M,10', 'cap,Cap,,,,12')
    const first = await importText(api.database, 'store-a', file)
    assert.deepEqual(first.errors, [])
    const created = await readFeed(api, { atLeast: 5 })
    assert.deepEqual(created.map((event) => event.type).sort(), [
      'product.created',
      'product.created',
      'variant.created',
      'variant.created',
      'variant.created',
    ])
    const mug = created.find((e) => e.type === 'product.created' && e.data.object.slug === 'mug')
    assert.equal(mug?.data.object.name, 'Mug')
    const skus = created.filter((e) => e.type === 'variant.created').map((e) => e.data.object.sku)
    assert.deepEqual(skus.sort(), ['MUG-M', 'MUG-S', null])

    await importText(api.database, 'store-a', file)
    assert.equal((await readFeed(api)).length, 5, 'the same file again changes nothing')

    const changed = csv(HEAD, 'mug,Mug,Size,S,MUG-S,9.5', 'mug,,,M,MUG-M,11', 'cap,Big cap,,,,12')
    await importText(api.database, 'store-a', changed)
    const after = (await readFeed(api, { atLeast: 7 })).slice(5)
    const byType = Object.fromEntries(after.map((event) => [event.type, event]))
    assert.deepEqual(Object.keys(byType).sort(), ['product.updated', 'variant.updated'])
    assert.deepEqual(byType['product.updated'].data.previousAttributes, { name: 'Cap' })
    assert.deepEqual(byType['variant.updated'].data.previousAttributes, { price: 10 })
  })
})
