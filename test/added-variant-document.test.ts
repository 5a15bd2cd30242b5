import assert from 'node:assert/strict'
import { it } from 'node:test'
import { sql } from 'kysely'
import { refreshSearchDocuments } from '../src/search/documents/search-document.repository.js'
import {
  addVariant,
  buildTestApi,
  defineMetafield,
  describeEachDialect,
  type TestApi,
} from './helpers.js'

type Json = Record<string, any>

const STORE = 'store-a'

/** A product's stored search document and facet rows, as the database holds them. */
async function stored(api: TestApi, productId: string): Promise<Json> {
  const db = api.database.kysely
  const document = await sql<Json>`
    select name_words, other_words, name_key, codes from product_search
    where store_id = ${STORE} and product_id = ${productId}
  `.execute(db)
  const facets = await sql<Json>`
    select kind, name_key, value_key, value from search_facets
    where store_id = ${STORE} and product_id = ${productId}
    order by kind, name_key, value_key
  `.execute(db)
  return { document: document.rows, facets: facets.rows }
}

/**
 * Asserts that the product's stored document and facet rows are what a full rebuild writes
 * (refreshSearchDocuments: buildSearchDocument over the product, all its variants and its
 * searchable texts), and answers them.
 */
async function assertAsRebuilt(api: TestApi, productId: string, step: string): Promise<Json> {
  const written = await stored(api, productId)
  await api.database.write((tx) => refreshSearchDocuments(tx, STORE, [productId]))
  assert.deepEqual(written, await stored(api, productId), `after ${step}`)
  return written
}

async function names(api: TestApi, query: string): Promise<string[]> {
  const res = await api.get(`/products?${query}`)
  assert.equal(res.statusCode, 200, res.body)
  return res.json().data.map((p: Json) => p.name)
}

/**
 * An add appends its variant's part to the product's document instead of rebuilding it from
 * every variant (decision 0056): the rows must be exactly those of a full rebuild, whichever
 * path the add took (appended, or rebuilt for a position sent or searchable attributes).
 */
describeEachDialect('the document of a product after variants are added', (dialect) => {
  it('equals a full rebuild after each add, and finds the new variants', async (t) => {
    const api = await buildTestApi(t, dialect)
    await defineMetafield(api, {
      key: 'material',
      type: 'single_line_text_field',
      searchable: true,
    })
    await defineMetafield(api, {
      key: 'fit',
      owner: 'variant',
      type: 'single_line_text_field',
      searchable: true,
    })
    await defineMetafield(api, { key: 'other', owner: 'variant', type: 'single_line_text_field' })
    const tee = await api.createProduct({
      name: 'Crème Tee',
      sku: 'TEE-1',
      tags: ['Summer'],
      metafields: { 'custom.material': 'Organic cotton' },
    })
    const mug = await api.createProduct({ name: 'Mug' })
    const adds: [string, Json][] = [
      [tee.id, { name: 'Small', sku: 'AB-1', options: { Color: 'Red', Size: 'S' } }],
      // A sku differing in case: one code. A value differing in case: the first spelling kept.
      [tee.id, { name: 'Medium', sku: 'ab-1', options: { Color: 'red', Size: 'M' } }],
      // A barcode that is the product's sku; an option name differing in case.
      [tee.id, { name: 'Wide', barcode: 'tee-1', options: { color: 'Blue', Size: 'XL' } }],
      // A position sent, before the others: rebuilt.
      [tee.id, { name: 'Tiny', sku: 'TN-0', position: 1, options: { Size: 'XS' } }],
      // A searchable attribute of the variant: rebuilt.
      [tee.id, { name: 'Slim', metafields: { 'custom.fit': 'Slender' }, options: { Size: 'XXS' } }],
      // An attribute that is not searchable: appended.
      [tee.id, { name: 'Plain', metafields: { 'custom.other': 'x' }, options: { Size: 'XXL' } }],
      [
        tee.id,
        { name: 'Large', sku: 'LG-9', barcode: 'lg-9', options: { Size: 'L', Cut: 'Boxy' } },
      ],
      [mug.id, { name: 'Plain mug' }],
      [mug.id, { name: 'Blue mug', sku: 'MUG-B', options: { Colour: 'Navy' } }],
      [mug.id, { name: 'Red mug', sku: 'MUG-R', barcode: '0042', options: { Colour: 'navy' } }],
    ]
    for (const [i, [productId, body]] of adds.entries()) {
      await addVariant(api, productId, body)
      await assertAsRebuilt(api, productId, `add ${i} (${body.name})`)
    }
    const last = await assertAsRebuilt(api, tee.id, 'the adds')
    const [document] = last.document
    assert.equal(document.codes, '\ntee-1\nab-1\ntn-0\nlg-9\n')
    assert.match(document.other_words, /organic cotton .*slender/)
    assert.match(document.other_words, /large lg 9 lg 9 l boxy$/)
    assert.deepEqual(
      last.facets.filter((f: Json) => f.name_key === 'color').map((f: Json) => f.value),
      ['Blue', 'Red'],
    )
    assert.equal(
      (await assertAsRebuilt(api, mug.id, 'the adds')).document[0].codes,
      '\nmug-b\nmug-r\n0042\n',
    )

    // Search finds the product by a new variant's sku, barcode, option value and name.
    assert.deepEqual(await names(api, 'q=lg-9'), ['Crème Tee'])
    assert.deepEqual(await names(api, 'q=boxy'), ['Crème Tee'])
    assert.deepEqual(await names(api, 'q=0042'), ['Mug'])
    assert.deepEqual(await names(api, 'q=slender'), ['Crème Tee'])
    assert.deepEqual(await names(api, 'option.Cut=boxy'), ['Crème Tee'])
    assert.deepEqual(await names(api, 'option.Colour=NAVY'), ['Mug'])
  })

  it('moves the product’s version and its search keys on an add', async (t) => {
    const api = await buildTestApi(t, dialect)
    const tee = await api.createProduct({ name: 'Tee', price: 12 })
    const variant = await addVariant(api, tee.id, { name: 'Small', sku: 'S-1', price: 99 })
    const product = (await api.get(`/products/${tee.id}`)).json().data
    assert.equal(product.version, tee.version + 1)
    assert.ok(product.updatedAt > tee.updatedAt || product.updatedAt === variant.updatedAt)
    const keys = await sql<Json>`
      select price_e4, updated_at from product_search where product_id = ${tee.id}
    `.execute(api.database.kysely)
    const row = await sql<Json>`
      select price_e4, updated_at from products where id = ${tee.id}
    `.execute(api.database.kysely)
    assert.deepEqual(keys.rows, row.rows)
    // Sorted and filtered by the product's price (12), not the variant's.
    assert.deepEqual(await names(api, 'q=s-1&price_max=20&sort=updated'), ['Tee'])
  })
})

/**
 * A variant's PATCH on PostgreSQL reads the product's variants in its own statement, whose
 * query does not see the statement's update (decision 0034): the document must be built from
 * the variant after the PATCH, as a full rebuild would, on both databases.
 */
describeEachDialect('the document of a product after a variant’s PATCH', (dialect) => {
  it('finds the product by the variant’s new words, not its old ones, and equals a full rebuild', async (t) => {
    const api = await buildTestApi(t, dialect)
    await defineMetafield(api, {
      key: 'fit',
      owner: 'variant',
      type: 'single_line_text_field',
      searchable: true,
    })
    const tee = await api.createProduct({ name: 'Tee' })
    await addVariant(api, tee.id, { name: 'Small', sku: 'SM-1', options: { Size: 'S' } })
    const patched = await addVariant(api, tee.id, {
      name: 'Crimson',
      sku: 'CR-1',
      options: { Color: 'Red' },
      metafields: { 'custom.fit': 'Slender' },
    })
    await addVariant(api, tee.id, { name: 'Large', sku: 'LG-1', options: { Size: 'L' } })
    await assertAsRebuilt(api, tee.id, 'the adds')
    assert.deepEqual(await names(api, 'q=crimson'), ['Tee'])

    const path = `/products/${tee.id}/variants/${patched.id}`
    let res = await api.patch(path, { name: 'Scarlet', sku: 'SC-2' })
    assert.equal(res.statusCode, 200, res.body)
    const after = await assertAsRebuilt(api, tee.id, 'the name and sku')
    assert.equal(after.document[0].codes, '\nsm-1\nsc-2\nlg-1\n')
    assert.deepEqual(await names(api, 'q=scarlet'), ['Tee'])
    assert.deepEqual(await names(api, 'q=sc-2'), ['Tee'])
    assert.deepEqual(await names(api, 'q=crimson'), [])
    assert.deepEqual(await names(api, 'q=cr-1'), [])
    // The variant's searchable attribute stays in the document: the row after carries it.
    assert.deepEqual(await names(api, 'q=slender'), ['Tee'])

    res = await api.patch(path, { options: { Color: 'Blue' } })
    assert.equal(res.statusCode, 200, res.body)
    await assertAsRebuilt(api, tee.id, 'the options')
    assert.deepEqual(await names(api, 'option.Color=blue'), ['Tee'])
    assert.deepEqual(await names(api, 'option.Color=red'), [])
  })
})
