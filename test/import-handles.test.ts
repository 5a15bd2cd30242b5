import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { it } from 'node:test'
import { readFeed } from './event-helpers.js'
import { buildTestApi, describeEachDialect, expectError, type TestApi } from './helpers.js'
import { csv, SHOPIFY_SAMPLES } from './import-helpers.js'
import { databaseUrlFor, runCatalog } from './process-helpers.js'

// Contract, part 3: "a handle that is a valid slug by the PATCH rule (up to 255 characters)
// is kept as it is, any other (accents, emoji, ™) is made into one by the slug rules of
// part 1"; "A handle that is made into another slug (too long, accents, emoji) is imported
// under the new slug and reported in `warnings` with the slug it got; two handles of a file
// that make the same slug both import (the second suffixed, as part 1 does), and a second
// run of the file matches each to its own product." Part 2: a slug set by hand is 1 to 255
// characters; "a product created whole by an import, its variants with it, is at 1".

const HANDLES = fileURLToPath(new URL('fixtures/handles/handles.csv', import.meta.url))
const handlesFile = readFileSync(HANDLES)
const handles = handlesFile
  .toString('utf8')
  .split('\r\n')
  .slice(1)
  .map((line) => line.split(',')[0]!)
const [h200, , h300Red, h300Tan, cafe, , cafeCaps] = handles as [
  string,
  string,
  string,
  string,
  string,
  string,
  string,
]
// The part 1 rule: at most 96 characters, cut at a `-`.
const cut300 = h300Red.slice(0, 97).slice(0, h300Red.slice(0, 97).lastIndexOf('-'))

async function postCsv(api: TestApi, body: string | Buffer) {
  const res = await api.request('POST', '/imports', {
    body,
    headers: { 'content-type': 'text/csv' },
  })
  assert.equal(res.statusCode, 202, res.body)
  const id = res.json().data.id as string
  for (let i = 0; i < 3000; i++) {
    const record = (await api.get(`/imports/${id}`)).json().data
    if (record.status !== 'running') return record
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
  throw new Error('the import did not finish')
}

async function productsBySlug(api: TestApi): Promise<Map<string, Record<string, any>>> {
  const res = await api.get('/products?limit=100')
  assert.equal(res.statusCode, 200, res.body)
  return new Map(res.json().data.map((p: Record<string, any>) => [p.slug, p]))
}

describeEachDialect('import: handles kept, made into slugs, reported', (dialect) => {
  it('a 200-character handle is kept; 300 characters and Café-™ are made into slugs and warned of; colliding handles both import', async (t) => {
    const api = await buildTestApi(t, dialect)
    assert.equal(h200.length, 200)
    assert.equal(h300Red.length, 300)
    assert.equal(h300Tan.slice(0, 296), h300Red.slice(0, 296), 'the two long handles differ late')
    const first = await postCsv(api, handlesFile)
    assert.deepEqual(first.errors, [])
    assert.equal(first.productsCreated, 6)
    assert.equal(first.skusCleared, 0, 'a slug warning is no cleared sku')
    assert.deepEqual(
      first.warnings.map((w: Record<string, unknown>) => [w.row, w.handle, w.field]),
      [
        [4, h300Red, 'slug'],
        [5, h300Tan, 'slug'],
        [6, cafe, 'slug'],
        [8, cafeCaps, 'slug'],
      ],
    )
    const slugsOf = (warnings: { message: string }[]) =>
      warnings.map((w) => /the product's slug is "([a-z0-9-]+)"/.exec(w.message)?.[1])
    assert.deepEqual(slugsOf(first.warnings), [cut300, `${cut300}-2`, 'cafe', 'cafe-2'])

    const stored = await productsBySlug(api)
    assert.deepEqual(
      [h200, cut300, `${cut300}-2`, 'cafe', 'cafe-2', 'plain'].map((s) => stored.get(s)?.name),
      ['Two hundred', 'Long red', 'Long tan', 'Café TM', 'Café capitals', 'Plain'],
    )
    const longest = (await api.get(`/products?slug=${h200}`)).json().data
    assert.equal(longest.length, 1, 'found by its 200-character slug')

    // A second run matches each handle to its own product: nothing created, nothing updated,
    // and the same warnings (the same slugs).
    const second = await postCsv(api, handlesFile)
    assert.deepEqual(second.errors, [])
    assert.equal(second.productsCreated, 0)
    assert.equal(second.productsUpdated, 0)
    assert.equal(second.variantsCreated, 0)
    assert.equal(second.variantsUpdated, 0)
    assert.deepEqual(second.warnings, first.warnings)
    assert.equal((await productsBySlug(api)).size, 6)

    // The store's export (its slugs as handles) imported back into it finds every product too.
    const exported = await api.get('/exports/products.csv')
    assert.equal(exported.statusCode, 200, exported.body)
    const back = await postCsv(api, exported.body)
    assert.deepEqual(back.errors, [])
    assert.deepEqual(back.warnings, [])
    assert.equal(back.productsCreated, 0)
    assert.equal(back.productsUpdated, 0)
    assert.equal((await productsBySlug(api)).size, 6)
  })

  it('a second run finds each handle by its own product, also after its slug was changed by hand, and a change lands on the right one', async (t) => {
    const api = await buildTestApi(t, dialect)
    const file = csv(
      'Handle,Title,Variant SKU,Variant Price',
      'Café-™,First,C-1,1',
      'CAFÉ ™,Second,C-2,2',
      'cafe-2,Valid handle,C-3,3',
    )
    const first = await postCsv(api, file)
    assert.equal(first.productsCreated, 2)
    // `cafe-2` is a valid handle, kept as it is: the product of row 3 has that slug.
    assert.deepEqual(
      first.errors.map((e: Record<string, unknown>) => [e.row, e.handle, e.field, e.error]),
      [[4, 'cafe-2', 'Handle', 'duplicate_slug']],
    )
    const byName = new Map(
      [...(await productsBySlug(api)).values()].map((p) => [p.name, p] as const),
    )
    const renamed = await api.patch(`/products/${byName.get('First')!.id}`, { slug: 'my-cafe' })
    assert.equal(renamed.statusCode, 200, renamed.body)

    const changed = csv(
      'Handle,Title,Variant SKU,Variant Price',
      'Café-™,First,C-1,1',
      'CAFÉ ™,Second changed,C-2,2',
      'cafe-2,Valid handle,C-3,3',
    )
    const second = await postCsv(api, changed)
    assert.equal(second.productsCreated, 0)
    assert.equal(second.productsUpdated, 1)
    assert.deepEqual(
      second.warnings.map((w: Record<string, unknown>) => [w.handle, w.message]),
      [
        ['Café-™', first.warnings[0].message.replace('"cafe"', '"my-cafe"')],
        ['CAFÉ ™', first.warnings[1].message],
      ],
    )
    const after = await productsBySlug(api)
    assert.equal(after.get('my-cafe')?.name, 'First')
    assert.equal(after.get('cafe-2')?.name, 'Second changed')
    assert.equal(after.size, 2)
  })
})

describeEachDialect('import: colliding handles, the file reordered', (dialect) => {
  it('a second run with the rows in the other order still finds each handle its own product', async (t) => {
    const api = await buildTestApi(t, dialect)
    const head = 'Handle,Title,Variant SKU,Variant Price'
    const first = await postCsv(api, csv(head, 'Café-™,First,C-1,1', 'CAFÉ ™,Second,C-2,2'))
    assert.equal(first.productsCreated, 2)
    const second = await postCsv(api, csv(head, 'CAFÉ ™,Second,C-2,2', 'Café-™,First,C-1,1'))
    assert.deepEqual(second.errors, [])
    assert.equal(second.productsCreated, 0)
    assert.equal(second.productsUpdated, 0)
    const after = await productsBySlug(api)
    assert.deepEqual(
      [after.get('cafe')?.name, after.get('cafe-2')?.name, after.size],
      ['First', 'Second', 2],
    )
  })
})

describeEachDialect('import: a deleted product takes its handle with it', (dialect) => {
  it('the next run creates the product again, under a new slug', async (t) => {
    const api = await buildTestApi(t, dialect)
    const file = csv('Handle,Title,Variant SKU,Variant Price', 'Café-™,Café,C-1,1')
    assert.equal((await postCsv(api, file)).productsCreated, 1)
    const cafe = (await productsBySlug(api)).get('cafe')!
    const deleted = await api.request('DELETE', `/products/${cafe.id}`)
    assert.ok(deleted.statusCode < 300, deleted.body)
    const again = await postCsv(api, file)
    assert.deepEqual(again.errors, [])
    assert.equal(again.productsCreated, 1)
    // A deleted product's slug is never generated again (part 2).
    assert.deepEqual([...(await productsBySlug(api)).keys()], ['cafe-2'])
    assert.equal((await postCsv(api, file)).productsCreated, 0)
  })
})

describeEachDialect('import: a sku a handle made into a slug keeps', (dialect) => {
  it('a later product asking for it is told the handle and row that keep it', async (t) => {
    const api = await buildTestApi(t, dialect)
    const summary = await postCsv(
      api,
      csv('Handle,Title,Variant SKU,Variant Price', 'CAFÉ ™,Café,C-1,1', 'other,Other,C-1,2'),
    )
    assert.deepEqual(
      summary.errors.map((e: Record<string, unknown>) => [e.row, e.error, e.message]),
      [[3, 'duplicate_sku', 'SKU "C-1" is already used by product "CAFÉ ™" (row 2)']],
    )
  })
})

describeEachDialect('catalog import: handles made into slugs', (dialect) => {
  it('prints each warning with its field; a second run creates and updates nothing', async (t) => {
    const env = { DATABASE_URL: await databaseUrlFor(t, dialect) }
    const first = await runCatalog(['import', HANDLES, '--store', 'shop', '--new-store'], env)
    assert.equal(first.code, 0, first.stderr)
    assert.match(first.stdout, /^ {2}row 6, handle Café-™, slug: .*"cafe"$/m)
    assert.match(first.stdout, /^ {2}row 8, handle CAFÉ ™, slug: .*"cafe-2"$/m)
    const again = await runCatalog(['import', HANDLES, '--store', 'shop', '--json'], env)
    const summary = JSON.parse(again.stdout)
    assert.deepEqual(
      [summary.productsCreated, summary.productsUpdated, summary.warnings.length],
      [0, 0, 4],
    )
  })
})

describeEachDialect('PATCH slug: 1 to 255 characters', (dialect) => {
  it('a slug of 255 characters is set; 256 is 400 validation_failed', async (t) => {
    const api = await buildTestApi(t, dialect)
    const created = await api.post('/products', { name: 'Long' })
    assert.equal(created.statusCode, 200, created.body)
    const id = created.json().data.id as string
    const slug255 = `${'a'.repeat(200)}-${'b'.repeat(54)}`
    assert.equal(slug255.length, 255)
    const set = await api.patch(`/products/${id}`, { slug: slug255 })
    assert.equal(set.statusCode, 200, set.body)
    assert.equal(set.json().data.slug, slug255)
    expectError(
      await api.patch(`/products/${id}`, { slug: `${slug255}b` }),
      400,
      'validation_failed',
    )
    // Generation keeps part 1's bound: a name makes at most 96 characters.
    const named = await api.post('/products', { name: 'word '.repeat(50) })
    assert.equal(named.statusCode, 200, named.body)
    assert.equal(named.json().data.slug, Array(19).fill('word').join('-'))
  })
})

describeEachDialect('import: a product created whole is at version 1', (dialect) => {
  it('a real export: every product and variant read at version 1, and so are the events', async (t) => {
    const api = await buildTestApi(t, dialect)
    const summary = await postCsv(
      api,
      readFileSync(`${SHOPIFY_SAMPLES}/greatoutdoor_products_export_1.csv`),
    )
    assert.ok(summary.productsCreated > 0)
    const list = (await api.get('/products?limit=100')).json().data as Record<string, any>[]
    assert.equal(list.length, summary.productsCreated)
    assert.deepEqual(new Set(list.map((p) => p.version)), new Set([1]))
    const withVariants = list.find((p) => p.slug === 'teak-wood-outdoor-lounge-chair') ?? list[0]!
    const full = (await api.get(`/products/${withVariants.id}`)).json().data
    assert.equal(full.version, 1)
    assert.deepEqual(
      new Set(full.variants.map((v: { version: number }) => v.version)),
      new Set([1]),
    )
    const events = await readFeed(api, { atLeast: summary.productsCreated })
    const created = events.filter((e) => e.type === 'product.created')
    assert.equal(created.length, summary.productsCreated)
    assert.deepEqual(new Set(created.map((e) => e.data.object.version)), new Set([1]))
  })

  it('products imported alone (handles made into one slug) are at version 1 too', async (t) => {
    const api = await buildTestApi(t, dialect)
    const summary = await postCsv(api, handlesFile)
    assert.equal(summary.productsCreated, 6)
    const products = [...(await productsBySlug(api)).values()]
    assert.deepEqual(
      products.map((p) => [p.slug.slice(0, 20), p.version]),
      products.map((p) => [p.slug.slice(0, 20), 1]),
    )
    const cafe = (await api.get(`/products/${(await productsBySlug(api)).get('cafe')!.id}`)).json()
      .data
    assert.equal(cafe.variants.length, 2)
    assert.equal(cafe.version, 1)
    // A later change counts from there.
    const patched = await api.patch(`/products/${cafe.id}`, { name: 'Café' })
    assert.equal(patched.json().data.version, 2)
  })
})
