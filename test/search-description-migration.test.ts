import assert from 'node:assert/strict'
import { it } from 'node:test'
import { sql } from 'kysely'
import { asciiLowercase } from '../src/slugs/slug.js'
import { migrateToLatest } from '../src/db/migrate.js'
import {
  addVariant,
  buildTestApi,
  defineMetafield,
  describeEachDialect,
  type TestApi,
} from './helpers.js'

type Json = Record<string, any>

const MIGRATION = '2026-12-08T00-search-description-text'

/** The fold documents had before the migration: any-ascii's, the raw description. */
const oldFold = (texts: readonly (string | null | undefined)[]) =>
  texts
    .flatMap((text) => (text ? asciiLowercase(text).split(/[^a-z0-9]+/) : []))
    .filter((word) => word !== '')
    .join(' ')

async function found(api: TestApi, q: string): Promise<string[]> {
  const res = await api.get(`/products?q=${encodeURIComponent(q)}`)
  assert.equal(res.statusCode, 200, res.body)
  return res
    .json()
    .data.map((product: Json) => product.name)
    .sort()
}

async function documents(api: TestApi) {
  const { rows } = await sql<{ product_id: string; name_words: string; other_words: string }>`
    select product_id, name_words, other_words from product_search order by name_words
  `.execute(api.database.kysely)
  return rows.map((row) => ({ ...row, product_id: String(row.product_id) }))
}

describeEachDialect(`migration ${MIGRATION}`, (dialect) => {
  it('rewrites the documents written before with the text of their descriptions', async (t) => {
    const api = await buildTestApi(t, dialect)
    await defineMetafield(api, {
      key: 'material',
      type: 'single_line_text_field',
      filterable: false,
      searchable: true,
    })
    const html = '<p style="color: red" data-mce-fragment="1">Soft <b>wo</b>ol</p><p>Warm</p>'
    const tee = await api.createProduct({
      name: 'Bjørn tee',
      description: html,
      vendor: 'Øst',
      tags: ['Summer'],
      metafields: { 'custom.material': 'Merino blend' },
    })
    await addVariant(api, tee.id, { name: 'Large', sku: 'TS-L', options: { Size: 'Stør' } })
    await addVariant(api, tee.id, { name: 'Small', options: { Size: 'S' } })
    const plain = await api.createProduct({ name: 'Mug', description: 'AT&T a < b' })
    const none = await api.createProduct({ name: 'Bare' })
    const written = await documents(api)

    // The documents as the fold before wrote them: the description's HTML as words, ø as o.
    const old: Record<string, { name: string; other: string }> = {
      [tee.id]: {
        name: oldFold(['Bjørn tee']),
        other: oldFold([
          html,
          'Øst',
          'Summer',
          tee.slug,
          'Merino blend',
          'Large',
          'TS-L',
          'Stør',
          'Small',
          'S',
        ]),
      },
      [plain.id]: { name: 'mug', other: oldFold(['AT&T a < b', plain.slug]) },
      [none.id]: { name: 'bare', other: oldFold([none.slug]) },
    }
    for (const [id, text] of Object.entries(old)) {
      await sql`update product_search set name_words = ${text.name}, other_words = ${text.other}
        where product_id = ${id}`.execute(api.database.kysely)
    }
    assert.deepEqual(await found(api, 'style'), ['Bjørn tee'])
    assert.deepEqual(await found(api, 'mce'), ['Bjørn tee'])
    assert.deepEqual(await found(api, 'Ø'), [])

    // It and those after it (each runs again unchanged) are taken as not run.
    const after = await sql<{
      name: string
    }>`select name from kysely_migration where name > ${MIGRATION} order by name`.execute(
      api.database.kysely,
    )
    await sql`delete from kysely_migration where name >= ${MIGRATION}`.execute(api.database.kysely)
    assert.deepEqual(await migrateToLatest(api.database), [
      MIGRATION,
      ...after.rows.map((row) => row.name),
    ])

    // Each document is the one the product's write now makes, the attribute's words kept.
    assert.deepEqual(await documents(api), written)
    for (const word of ['style', 'mce', 'color', 'data-mce-fragment', 'wo ol']) {
      assert.deepEqual(await found(api, word), [], word)
    }
    assert.deepEqual(await found(api, 'soft wool warm'), ['Bjørn tee'])
    assert.deepEqual(await found(api, 'merino blend'), ['Bjørn tee'])
    assert.deepEqual(await found(api, 'Ø'), ['Bjørn tee'])
    assert.deepEqual(await found(api, 'stør'), ['Bjørn tee'])
    assert.deepEqual(await found(api, 'AT&T'), ['Mug'])
    // The stored description is left as it was.
    const read = await api.get(`/products/${tee.id}`)
    assert.equal(read.json().data.description, html)
    // Run again, it changes nothing.
    await sql`delete from kysely_migration where name >= ${MIGRATION}`.execute(api.database.kysely)
    await migrateToLatest(api.database)
    assert.deepEqual(await documents(api), written)
  })
})
