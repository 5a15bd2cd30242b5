import assert from 'node:assert/strict'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { it } from 'node:test'
import { sql } from 'kysely'
import { createProduct, getProduct } from '../src/catalog/product.service.js'
import { slugify } from '../src/slugs/slug.js'
import { addVariant } from '../src/catalog/variant.service.js'
import type { Database } from '../src/db/database.js'
import { readCsvRecords } from '../src/import/csv-records.js'
import { exportCatalog, startedStream } from '../src/import/export.service.js'
import type { ImportSummary } from '../src/import/import.service.js'
import {
  catalogue,
  csv,
  exportText,
  importText,
  SAMPLE_2025,
  SAMPLE_CLASSIC,
  SHARED_SHOPIFY_SAMPLES,
  SHOPIFY_SAMPLES,
  unchanged,
} from './import-helpers.js'
import { createFileTestDatabase, createTestDatabase, describeEachDialect } from './helpers.js'
import { listProducts } from '../src/search/search.service.js'
import { updateProductWork } from '../src/catalog/product-update-work.js'

const HEAD =
  'Handle,Title,Body (HTML),Vendor,Type,Tags,Published,Option1 Name,Option1 Value,Option2 Name,Option2 Value,Variant SKU,Variant Grams,Variant Price,Variant Compare At Price,Variant Barcode,Image Src,Image Position,Image Alt Text,Status'

async function products(database: Database, store = 'shop'): Promise<Record<string, any>[]> {
  return catalogue(database, store)
}

function bySlug(list: Record<string, any>[], slug: string): Record<string, any> {
  const found = list.find((product) => product.slug === slug)
  assert.ok(found, `a product with slug ${slug}`)
  return found
}

function assertNoErrors(summary: ImportSummary) {
  assert.deepEqual(summary.errors, [])
  assert.equal(summary.rowsFailed, 0)
}

it(
  "the repository's Shopify samples are the shared ones, byte for byte",
  { skip: !existsSync(SHARED_SHOPIFY_SAMPLES) && 'no shared/data/shopify beside the repository' },
  () => {
    const files = readdirSync(SHARED_SHOPIFY_SAMPLES).sort()
    assert.deepEqual(readdirSync(SHOPIFY_SAMPLES).sort(), files)
    for (const file of files) {
      const copy = readFileSync(join(SHOPIFY_SAMPLES, file))
      assert.ok(copy.equals(readFileSync(join(SHARED_SHOPIFY_SAMPLES, file))), file)
    }
  },
)

describeEachDialect('import: Shopify samples', (dialect) => {
  it('the classic sample: 3 products, 16 variants, images, Default Title, grams rounded', async (t) => {
    const database = await createTestDatabase(t, dialect)
    const summary = await importText(database, 'shop', { file: SAMPLE_CLASSIC })
    assertNoErrors(summary)
    assert.equal(summary.rowsProcessed, 17)
    assert.equal(summary.productsCreated, 3)
    assert.equal(summary.variantsCreated, 16)
    assert.ok(summary.columnsNotStored.includes('Variant Inventory Qty'))
    assert.ok(summary.columnsNotStored.includes('Product Category'))
    assert.ok(!summary.columnsNotStored.includes('Variant SKU'))
    const list = await products(database)
    assert.deepEqual(
      list.map((p) => p.slug),
      ['example-shirt', 'example-pants', 'example-hat'],
    )
    const shirt = bySlug(list, 'example-shirt')
    assert.equal(shirt.name, 'Example T-Shirt')
    assert.equal(shirt.status, 'active')
    assert.equal(shirt.vendor, 'Acme')
    assert.equal(shirt.productType, 'Shirts')
    assert.deepEqual(shirt.tags, ['Made to Order', 'Shirt Tag'])
    assert.equal(shirt.price, 25)
    assert.equal(shirt.variants.length, 12)
    assert.deepEqual(shirt.variants[0], {
      name: 'Green / S',
      sku: 'SRT_COT_111',
      barcode: '365275101829',
      price: 25,
      compareAtPrice: null,
      options: { Color: 'Green', Size: 'S' },
      weightGrams: 145,
      metafields: {},
    })
    assert.deepEqual(shirt.variants.map((v: any) => v.name).slice(0, 4), [
      'Green / S',
      'Green / M',
      'Green / L',
      'Blue / S',
    ])
    assert.equal(shirt.images.length, 6)
    assert.deepEqual(shirt.images[0], {
      url: 'https://burst.shopifycdn.com/photos/tshirts.jpg?width=1500',
      alt: 'A rack of T-Shirts',
    })
    const pants = bySlug(list, 'example-pants')
    assert.equal(pants.status, 'draft')
    assert.deepEqual(
      pants.variants.map((v: any) => v.weightGrams),
      [227, 283, 397],
    )
    assert.equal(pants.variants[0].compareAtPrice, 64.95)
    assert.equal(pants.images.length, 4, 'the image-only row adds an image')
    assert.equal(pants.images[3].alt, 'Large tapered stone wash jeans')
    const hat = bySlug(list, 'example-hat')
    assert.equal(hat.status, 'archived')
    assert.deepEqual(hat.variants, [
      {
        name: 'Default Title',
        sku: 'HAT_GRY_275',
        barcode: '122327648356',
        price: 17.99,
        compareAtPrice: 22.99,
        options: {},
        weightGrams: 72,
        metafields: {},
      },
    ])
    assert.equal(hat.price, 17.99)
  })

  it('the 2025 sample: its column names, Status Active, later rows without a title', async (t) => {
    const database = await createTestDatabase(t, dialect)
    const summary = await importText(database, 'shop', { file: SAMPLE_2025 })
    assertNoErrors(summary)
    assert.equal(summary.productsCreated, 2)
    assert.equal(summary.variantsCreated, 15)
    assert.ok(summary.columnsNotStored.includes('Option1 Linked To'))
    const list = await products(database)
    const tee = bySlug(list, 'physical-product-the-band-t-shirt')
    assert.equal(tee.name, 'Physical Product “The Band” T-Shirt')
    assert.equal(tee.status, 'active')
    assert.equal(tee.price, 19.99)
    assert.equal(tee.variants.length, 12)
    assert.deepEqual(tee.variants[1], {
      name: 'Small / gray',
      sku: 'TheBandTShirt-SA',
      barcode: '5784397766',
      price: 19.99,
      compareAtPrice: 24.99,
      options: { Size: 'Small', Color: 'gray' },
      weightGrams: 150,
      metafields: {},
    })
    // Image position and alt text without an image URL are ignored.
    assert.equal(tee.images.length, 1)
    const book = bySlug(list, 'digital-product-the-history-of-rock-music')
    assert.deepEqual(
      book.variants.map((v: any) => [v.name, v.price, v.weightGrams]),
      [
        ['PDF', 14.99, null],
        ['Audio', 21.99, null],
        ['Kindle', 9.99, null],
      ],
    )
    assert.equal(book.price, 14.99)
  })

  it('a second run of the same file creates and updates nothing', async (t) => {
    const database = await createTestDatabase(t, dialect)
    for (const file of [SAMPLE_CLASSIC, SAMPLE_2025]) {
      const first = await importText(database, 'shop', { file })
      assertNoErrors(first)
      const before = await products(database)
      const again = await importText(database, 'shop', { file })
      assert.deepEqual(again, unchanged(first.rowsProcessed, first))
      assert.deepEqual(await products(database), before)
    }
  })

  it('--dry-run gives the summary of a real run and writes nothing', async (t) => {
    const database = await createTestDatabase(t, dialect)
    const dry = await importText(database, 'shop', { file: SAMPLE_CLASSIC }, { dryRun: true })
    assert.deepEqual(await products(database), [])
    const real = await importText(database, 'shop', { file: SAMPLE_CLASSIC })
    assert.deepEqual(dry, real)
  })
})

describeEachDialect('import: the mapping', (dialect) => {
  it('Status in any case, unlisted as active; Published without Status; price from the first variant', async (t) => {
    const database = await createTestDatabase(t, dialect)
    const summary = await importText(
      database,
      'shop',
      csv(
        'Handle,Title,Status,Variant Price,Option1 Name,Option1 Value',
        'a,A,ACTIVE,19.990,Size,S',
        'a,,,5,,M',
        'b,B,Unlisted,1,,',
        'c,C,Archived,1,,',
        'd,D,draft,1,,',
      ),
    )
    assertNoErrors(summary)
    const list = await products(database)
    assert.deepEqual(
      list.map((p) => [p.slug, p.status, p.price]),
      [
        ['a', 'active', 19.99],
        ['b', 'active', 1],
        ['c', 'archived', 1],
        ['d', 'draft', 1],
      ],
    )
    assert.deepEqual(
      list[0]!.variants.map((v: any) => [v.name, v.price]),
      [
        ['S', 19.99],
        ['M', 5],
      ],
    )
    const published = await importText(
      database,
      'other',
      csv('Handle,Title,Published', 'x,X,true', 'y,Y,FALSE', 'z,Z,TRUE', 'w,W,'),
    )
    assertNoErrors(published)
    assert.deepEqual(
      (await products(database, 'other')).map((p: any) => [p.slug, p.status, p.variants.length]),
      [
        ['x', 'active', 0],
        ['y', 'draft', 0],
        ['z', 'active', 0],
        ['w', 'draft', 0],
      ],
    )
  })

  it('a handle that is a valid slug is kept; any other is made into one by the slug rules', async (t) => {
    const database = await createTestDatabase(t, dialect)
    const long = 'a'.repeat(128)
    const handles = ['plain-handle-2', 'Crème Brûlée™', 'Tee 😀 Shirt', long, 'Upper-Case']
    const summary = await importText(
      database,
      'shop',
      csv('Handle,Title', ...handles.map((h, i) => `${h},Product ${i}`)),
    )
    assertNoErrors(summary)
    assert.deepEqual(
      (await products(database)).map((p) => p.slug),
      ['plain-handle-2', slugify('Crème Brûlée™'), slugify('Tee 😀 Shirt'), long, 'upper-case'],
    )
  })

  it('tags, description, vendor, type, images ordered by Image Position, grams rounded', async (t) => {
    const database = await createTestDatabase(t, dialect)
    const summary = await importText(
      database,
      'shop',
      csv(
        HEAD,
        'p,Product,"<p>Hi,\r\n""there""</p>",Acme,Shirts," a, b ,A,, c",TRUE,Size,S,,,SKU-1,99.5,10,12,BC,https://x.test/2.jpg,2,Two,',
        'p,,,,,,,,M,,,SKU-2,0.4,11,,,https://x.test/1.jpg,1,,',
        'p,,,,,,,,,,,,,,,,https://x.test/3.jpg,,Three,',
      ),
    )
    assertNoErrors(summary)
    const [p] = (await products(database)) as any[]
    assert.equal(p!.description, '<p>Hi,\r\n"there"</p>')
    assert.deepEqual(p!.tags, ['a', 'b', 'c'])
    assert.equal(p!.vendor, 'Acme')
    assert.equal(p!.productType, 'Shirts')
    assert.equal(p!.status, 'active')
    assert.deepEqual(p!.images, [
      { url: 'https://x.test/1.jpg', alt: null },
      { url: 'https://x.test/2.jpg', alt: 'Two' },
      { url: 'https://x.test/3.jpg', alt: 'Three' },
    ])
    assert.deepEqual(
      p!.variants.map((v: any) => [
        v.name,
        v.sku,
        v.weightGrams,
        v.price,
        v.compareAtPrice,
        v.barcode,
      ]),
      [
        ['S', 'SKU-1', 100, 10, 12, 'BC'],
        ['M', 'SKU-2', 0, 11, null, null],
      ],
    )
  })

  it('a BOM, LF line ends and a variant without a price (the product price)', async (t) => {
    const database = await createTestDatabase(t, dialect)
    const summary = await importText(
      database,
      'shop',
      `\uFEFFHandle,Title,Product Price,Option1 Name,Option1 Value\nq,Q,7.25,Size,S\nq,,,,M\n`,
    )
    assertNoErrors(summary)
    const [q] = (await products(database)) as any[]
    assert.equal(q!.price, 7.25)
    assert.deepEqual(
      q!.variants.map((v: any) => v.price),
      [7.25, 7.25],
    )
  })
})

describeEachDialect('import: upserts', (dialect) => {
  it('matches the product by handle and a variant by sku, then by options; counts only changes', async (t) => {
    const database = await createTestDatabase(t, dialect)
    const product = await createProduct(database, 'shop', { name: 'Tee', price: 10 })
    const slug = product.slug
    await addVariant(database, 'shop', product.id, {
      name: 'S',
      sku: 'TEE-S',
      price: 10,
      options: { Size: 'S' },
    })
    await addVariant(database, 'shop', product.id, { name: 'M', price: 10, options: { Size: 'M' } })
    await addVariant(database, 'shop', product.id, {
      name: 'L',
      sku: 'TEE-L',
      options: { Size: 'L' },
    })
    const summary = await importText(
      database,
      'shop',
      csv(
        'Handle,Title,Option1 Name,Option1 Value,Variant SKU,Variant Price',
        // by sku: the options change; by options: M gets a sku; XL is new.
        `${slug},Tee,Size,Small,TEE-S,10`,
        `${slug},,,M,TEE-M,10`,
        `${slug},,,XL,TEE-XL,12`,
      ),
    )
    assertNoErrors(summary)
    assert.equal(summary.productsCreated, 0)
    assert.equal(summary.productsUpdated, 0, 'the product fields are those stored')
    assert.equal(summary.variantsUpdated, 2)
    assert.equal(summary.variantsCreated, 1)
    const after = await getProduct(database, 'shop', product.id)
    assert.deepEqual(
      after.variants.map((v) => [v.sku, v.options, v.name]),
      [
        ['TEE-S', { Size: 'Small' }, 'Small'],
        ['TEE-M', { Size: 'M' }, 'M'],
        ['TEE-L', { Size: 'L' }, 'L'],
        ['TEE-XL', { Size: 'XL' }, 'XL'],
      ],
      'an import never deletes: L stays',
    )
    const again = await importText(
      database,
      'shop',
      csv(
        'Handle,Title,Option1 Name,Option1 Value,Variant SKU,Variant Price',
        `${slug},Tee,Size,Small,TEE-S,10`,
        `${slug},,,M,TEE-M,10.5`,
      ),
    )
    assert.equal(again.productsUpdated, 0)
    assert.equal(again.variantsUpdated, 1, 'only the variant whose price changed')
    assert.equal(again.variantsCreated, 0)
  })

  it('duplicate skus: the first holder in file order keeps it; the others are refused whole', async (t) => {
    const database = await createTestDatabase(t, dialect)
    const held = await createProduct(database, 'shop', { name: 'Held' })
    await addVariant(database, 'shop', held.id, { name: 'x', sku: 'STORE-SKU' })
    const summary = await importText(
      database,
      'shop',
      csv(
        'Handle,Title,Option1 Name,Option1 Value,Variant SKU',
        'one,One,Size,S,A',
        'one,,,M,A',
        'two,Two,Size,S,B',
        'three,Three,Size,S,B',
        'four,Four,Size,S,STORE-SKU',
        'five,Five,Size,S,C',
      ),
    )
    assert.deepEqual(
      summary.errors.map((e) => [e.row, e.handle, e.error, e.field]),
      [
        [3, 'one', 'duplicate_sku', 'Variant SKU'],
        [5, 'three', 'duplicate_sku', 'Variant SKU'],
        [6, 'four', 'duplicate_sku', 'Variant SKU'],
      ],
    )
    assert.equal(summary.rowsFailed, 4)
    assert.deepEqual(
      (await products(database)).map((p) => p.slug),
      ['held', 'two', 'five'],
      'a product with a bad row is not written at all',
    )
    const file = csv(
      'Handle,Title,Option1 Name,Option1 Value,Variant SKU',
      'two,Two,Size,S,B',
      'three,Three,Size,S,B',
      'four,Four,Size,S,HELD',
    )
    for (const store of ['dry', 'real']) {
      const held = await createProduct(database, store, { name: 'Held' })
      await addVariant(database, store, held.id, { name: 'Held', sku: 'HELD' })
    }
    const dry = await importText(database, 'dry', file, { dryRun: true })
    assert.deepEqual(
      dry.errors.map((e) => [e.row, e.error]),
      [
        [3, 'duplicate_sku'],
        [4, 'duplicate_sku'],
      ],
      'a dry run finds them too',
    )
    // Word for word the summary of a real run.
    assert.deepEqual(dry, await importText(database, 'real', file))
  })

  it("a dry run finds what a real run's database refuses: options another stored variant holds", async (t) => {
    const database = await createTestDatabase(t, dialect)
    const files = [
      // E1 takes E2's options.
      ['Handle,Title,Option1 Name,Option1 Value,Variant SKU', 'stock,Stock,Size,M,E1'],
      // E4 takes the options of the variant without a sku.
      ['Handle,Title,Option1 Name,Option1 Value,Variant SKU', 'stock,Stock,Size,L,E4'],
      // E1 and E2 swap options: the first write already clashes.
      [
        'Handle,Title,Option1 Name,Option1 Value,Variant SKU',
        'stock,Stock,Size,M,E1',
        'stock,,,S,E2',
      ],
      // E2 moves away first, then E1 takes its old options: no clash.
      [
        'Handle,Title,Option1 Name,Option1 Value,Variant SKU',
        'stock,Stock,Size,XXL,E2',
        'stock,,,M,E1',
      ],
      // A new variant with options nobody holds; one with E4's is E4 (found by its options).
      [
        'Handle,Title,Option1 Name,Option1 Value,Variant SKU',
        'stock,Stock,Size,XS,N1',
        'stock,,,XL,N2',
      ],
    ]
    const clashes: (number | undefined)[] = []
    for (const [i, lines] of files.entries()) {
      for (const store of [`dry-${i}`, `real-${i}`]) {
        const product = await createProduct(database, store, { name: 'Stock' })
        for (const [sku, size] of [
          ['E1', 'S'],
          ['E2', 'M'],
          [undefined, 'L'],
          ['E4', 'XL'],
        ] as const) {
          await addVariant(database, store, product.id, {
            name: size,
            ...(sku && { sku }),
            options: { Size: size },
          })
        }
      }
      const dry = await importText(database, `dry-${i}`, csv(...lines), { dryRun: true })
      const real = await importText(database, `real-${i}`, csv(...lines))
      assert.deepEqual(dry, real, lines.join(' | '))
      clashes.push(real.errors.find((e) => e.error === 'duplicate_options')?.row)
    }
    assert.deepEqual(clashes, [2, 2, 2, undefined, undefined])
  })

  it('duplicate options in one product are refused', async (t) => {
    const database = await createTestDatabase(t, dialect)
    const summary = await importText(
      database,
      'shop',
      csv('Handle,Title,Option1 Name,Option1 Value', 'a,A,Size,S', 'a,,,S', 'b,B,Size,S'),
    )
    assert.deepEqual(
      summary.errors.map((e) => [e.row, e.handle, e.error]),
      [[3, 'a', 'duplicate_options']],
    )
    assert.deepEqual(
      (await products(database)).map((p) => p.slug),
      ['b'],
    )
  })
  it('new products are stored as the API leaves them: version, next position, tags, slug counters', async (t) => {
    const database = await createTestDatabase(t, dialect)
    const summary = await importText(
      database,
      'shop',
      csv(
        'Handle,Title,Tags,Option1 Name,Option1 Value,Variant SKU,Variant Price',
        'tee,Tee,"Summer, Cotton",Size,S,TEE-S,10',
        'tee,,,,M,TEE-M,',
        'tee,,,,L,TEE-L,12',
        'tee-7,Tee seven,,,,,3',
      ),
    )
    assertNoErrors(summary)
    const [tee] = (await listProducts(database, 'shop', { limit: 10, slug: 'tee' })).data
    assert.ok(tee)
    assert.equal(tee.version, 1, 'created whole by the import, its variants with it')
    const added = await addVariant(database, 'shop', tee.id, { name: 'XL', sku: 'TEE-XL' })
    assert.equal(added.position, 4, 'the next default position follows the imported ones')
    assert.equal(added.price, 10, 'the product price')
    const full = await getProduct(database, 'shop', tee.id)
    assert.deepEqual(
      full.variants.map((v) => [v.sku, v.position, v.price]),
      [
        ['TEE-S', 1, 10],
        ['TEE-M', 2, 10],
        ['TEE-L', 3, 12],
        ['TEE-XL', 4, 10],
      ],
    )
    const tagged = await listProducts(database, 'shop', { limit: 10, tag: 'cotton' })
    assert.deepEqual(
      tagged.data.map((p) => p.slug),
      ['tee'],
      'found by its tag',
    )
    // The handles count as slugs handed out: a product named after one gets the next suffix.
    assert.equal((await createProduct(database, 'shop', { name: 'Tee' })).slug, 'tee-8')
    await assert.rejects(addVariant(database, 'shop', tee.id, { name: 'dup', sku: 'TEE-S' }), {
      code: 'duplicate_sku',
    })
  })

  it('archived to active is refused as validation_failed on Status (no code outside the contract); draft first works', async (t) => {
    const database = await createTestDatabase(t, dialect)
    await createProduct(database, 'shop', { name: 'Old', status: 'archived' })
    const head = 'Handle,Title,Status,Option1 Name,Option1 Value,Variant SKU'
    const summary = await importText(
      database,
      'shop',
      csv(head, 'old,Old,Active,Size,S,OLD-S', 'new,New,active,Size,S,NEW-S'),
    )
    assert.deepEqual(
      summary.errors.map((e) => [e.row, e.handle, e.field, e.error]),
      [[2, 'old', 'Status', 'validation_failed']],
    )
    assert.match(summary.errors[0]!.message, /archived.*draft first/)
    assert.equal(summary.rowsFailed, 1)
    assert.equal(summary.productsCreated, 1, 'the other product goes on')
    const old = bySlug(await products(database), 'old')
    assert.equal(old.status, 'archived')
    assert.equal(old.variants.length, 0, 'the product is refused whole, its variant too')

    const draft = await importText(database, 'shop', csv(head, 'old,Old,draft,Size,S,OLD-S'))
    assertNoErrors(draft)
    const active = await importText(database, 'shop', csv(head, 'old,Old,active,Size,S,OLD-S'))
    assertNoErrors(active)
    assert.equal(bySlug(await products(database), 'old').status, 'active')
  })

  it("a status changed by an import moves the product in the filters with status (the tags' copy of it too)", async (t) => {
    const database = await createTestDatabase(t, dialect)
    const head = 'Handle,Title,Vendor,Type,Tags,Status,Option1 Name,Option1 Value,Variant SKU'
    const row = (status: string) => `tee,Tee,Acme,Shirt,"Summer, Sale",${status},Size,S,TEE-S`
    const ids = async (
      filter: { tag?: string; vendor?: string; product_type?: string },
      status: 'draft' | 'active',
    ) => (await listProducts(database, 'shop', { ...filter, status })).data.map((p) => p.slug)
    for (const [status, other] of [
      ['draft', 'active'],
      ['active', 'draft'],
      ['draft', 'active'],
    ] as const) {
      assertNoErrors(await importText(database, 'shop', csv(head, row(status))))
      for (const filter of [
        { tag: 'summer' },
        { tag: 'SALE' },
        { vendor: 'Acme' },
        { product_type: 'Shirt' },
      ]) {
        assert.deepEqual(await ids(filter, status), ['tee'], `${JSON.stringify(filter)} ${status}`)
        assert.deepEqual(await ids(filter, other), [], `${JSON.stringify(filter)} ${other}`)
      }
    }
  })
})

it('bytes that are not UTF-8 are found in their record, wherever the pieces read cut the file', async () => {
  const rows: [string, number[], boolean][] = [
    ['overlong-3', [0xe0, 0x80, 0xaf], false],
    ['past-10ffff', [0xf4, 0x90, 0x80, 0x80], false],
    ['surrogate', [0xed, 0xb2, 0x80], false],
    ['overlong-2', [0xc0, 0xaf], false],
    ['f8-lead', [0xf8, 0x88, 0x80, 0x80, 0x80], false],
    ['cut-short', [0xe2, 0x82], false],
    ['emoji', [0xf0, 0x9f, 0x98, 0x80], true],
    ['accent', [0xc3, 0xa9], true],
    ['replacement-character', [0xef, 0xbf, 0xbd], true],
  ]
  const file = Buffer.concat([
    Buffer.from('\uFEFFHandle,Title\r\n'),
    ...rows.flatMap(([handle, bytes]) => [
      Buffer.from(`${handle},"A\n`),
      Buffer.from(bytes),
      Buffer.from('"\r\n\r\n'),
    ]),
    Buffer.from('last,'),
    Buffer.from([0xe2, 0x82]),
  ])
  const expected = [...rows.map(([handle, , valid]) => [handle, valid]), ['last', false]]
  for (const size of [1, 2, 3, 5, 7, 16, file.length]) {
    const pieces = async function* () {
      for (let at = 0; at < file.length; at += size) yield file.subarray(at, at + size)
    }
    const found: [string | undefined, boolean][] = []
    for await (const item of readCsvRecords(pieces())) {
      assert.equal(item.kind, 'record')
      if (item.kind === 'record' && item.row > 1) found.push([item.fields[0], !item.invalidUtf8])
    }
    assert.deepEqual(found, expected, `pieces of ${size} bytes`)
  }
})

describeEachDialect('import: malformed input', (dialect) => {
  const cases: [string, string | Buffer, (summary: ImportSummary) => void, string[]][] = [
    [
      'a price of abc and one of -1',
      csv('Handle,Title,Variant Price', 'a,A,abc', 'b,B,-1', 'c,C,1'),
      (s) => {
        assert.deepEqual(
          s.errors.map((e) => [e.row, e.handle, e.field, e.error]),
          [
            [2, 'a', 'Variant Price', 'validation_failed'],
            [3, 'b', 'Variant Price', 'validation_failed'],
          ],
        )
        assert.match(s.errors[1]!.message, />= 0/)
      },
      ['c'],
    ],
    [
      'rows with too many and too few columns',
      csv('Handle,Title,Vendor', 'a,A,V,extra', 'b,B', 'c,C,V'),
      (s) => {
        assert.deepEqual(
          s.errors.map((e) => [e.row, e.handle, e.field, e.error]),
          [
            [2, 'a', null, 'validation_failed'],
            [3, 'b', null, 'validation_failed'],
          ],
        )
      },
      ['c'],
    ],
    [
      'an unterminated quote: the rows before it are imported, the rest refused',
      csv('Handle,Title', 'a,"A\r\nstill A"', 'b,B', 'c,"C', 'd,D'),
      (s) => {
        assert.deepEqual(
          s.errors.map((e) => [e.row, e.error]),
          [[4, 'invalid_csv']],
          'row 4 as a spreadsheet shows it, though it starts on line 5',
        )
        // The unreadable row names another handle (c): b, the product being read, is whole.
        assert.equal(s.rowsFailed, 0)
      },
      ['a', 'b'],
    ],
    [
      'an unterminated quote in a row that may be the product being read',
      csv('Handle,Title', 'a,A', 'b,B', 'b,"B again'),
      (s) => {
        assert.deepEqual(
          s.errors.map((e) => [e.row, e.error]),
          [[4, 'invalid_csv']],
        )
        // b may have had more rows: not whole, not imported.
        assert.equal(s.rowsFailed, 1)
      },
      ['a'],
    ],
    [
      'a 1 MiB field',
      csv('Handle,Title,Body (HTML)', `a,A,"${'x'.repeat(1024 * 1024)}"`, 'b,B,short'),
      (s) => {
        assert.deepEqual(
          s.errors.map((e) => [e.row, e.field, e.error]),
          [[2, 'Body (HTML)', 'validation_failed']],
        )
      },
      ['b'],
    ],
    [
      'bytes that are not UTF-8',
      Buffer.concat([
        Buffer.from('Handle,Title\r\na,A'),
        Buffer.from([0xff, 0xfe]),
        Buffer.from('\r\nb,Bé\r\n'),
      ]),
      (s) => {
        assert.deepEqual(
          s.errors.map((e) => [e.row, e.field, e.error]),
          [[2, 'Title', 'validation_failed']],
        )
      },
      ['b'],
    ],
    [
      'a row without a handle',
      csv('Handle,Title', ',A', 'b,B'),
      (s) =>
        assert.deepEqual(
          s.errors.map((e) => [e.row, e.field]),
          [[2, 'Handle']],
        ),
      ['b'],
    ],
  ]
  for (const [what, input, check, kept] of cases) {
    it(`${what}: reported by row, the rest imported`, async (t) => {
      const database = await createTestDatabase(t, dialect)
      const summary = await importText(database, 'shop', input)
      check(summary)
      assert.deepEqual(
        (await products(database)).map((p) => p.slug),
        kept,
      )
    })
  }

  const refusals: [string, string | Buffer][] = [
    ['an empty file', ''],
    ['a header without Handle', csv('Title,Vendor', 'A,V')],
    ['a file of only a BOM', '\uFEFF'],
  ]
  for (const [what, input] of refusals) {
    it(`${what} is refused whole: one invalid_csv error, nothing written`, async (t) => {
      const database = await createTestDatabase(t, dialect)
      const summary = await importText(database, 'shop', input)
      assert.equal(summary.errors.length, 1)
      assert.equal(summary.errors[0]!.error, 'invalid_csv')
      assert.equal(summary.errors[0]!.row, 1)
      assert.equal(summary.rowsProcessed, 0)
      assert.deepEqual(await products(database), [])
    })
  }

  it('a header with URL handle is read (the 2025 name)', async (t) => {
    const database = await createTestDatabase(t, dialect)
    assertNoErrors(await importText(database, 'shop', csv('Title,URL handle', 'A,a')))
    assert.deepEqual(
      (await products(database)).map((p) => p.slug),
      ['a'],
    )
  })
})

describeEachDialect('import: after a large import', (dialect) => {
  const bulk = (count: number) =>
    csv(
      HEAD,
      ...Array.from(
        { length: count },
        (_, n) => `bulk-${n},Bulk ${n},,,,,TRUE,,,,,BULK-${n},,1.5,,,,,,active`,
      ),
    )

  it("PostgreSQL's planner statistics are refreshed (ANALYZE); a small import leaves them to autovacuum", async (t) => {
    if (dialect === 'sqlite') return t.skip('SQLite plans by its indexes, without statistics')
    const large = await createTestDatabase(t, dialect)
    const summary = await importText(large, 'shop', bulk(600))
    assert.equal(summary.productsCreated + summary.variantsCreated, 1200)
    assert.deepEqual(await estimatedRows(large), { products: 600, variants: 600 })
    const small = await createTestDatabase(t, dialect)
    await importText(small, 'shop', bulk(10))
    // -1: never analyzed (PostgreSQL 14 and later).
    assert.deepEqual(await estimatedRows(small), { products: -1, variants: -1 })
  })
})

/** The row counts PostgreSQL's planner has for products and variants (pg_class.reltuples). */
async function estimatedRows(database: Database) {
  const { rows } = await sql<{ products: number; variants: number }>`
    select (select reltuples from pg_class where oid = 'products'::regclass)::int as products,
           (select reltuples from pg_class where oid = 'variants'::regclass)::int as variants
  `.execute(database.kysely)
  return { ...rows[0]! }
}

describeEachDialect('import: export round trip', (dialect) => {
  it('import(export(store)) into an empty store gives the same catalogue, variant order included', async (t) => {
    const database = await createTestDatabase(t, dialect)
    const a = await createProduct(database, 'src', {
      name: 'Crème, "Brûlée"',
      description: 'Line one\nline "two", three',
      status: 'active',
      price: 12.3456,
      compare_at_price: 20,
      sku: 'PROD-SKU',
      barcode: 'PB',
      tax_rate: 7.7,
      vendor: 'V',
      product_type: 'T',
      tags: ['x', 'Y z'],
      images: [
        { url: 'https://img.test/1.png', alt: 'one' },
        { url: 'https://img.test/2.png' },
        { url: 'https://img.test/3.png', alt: 'three' },
      ],
    })
    await addVariant(database, 'src', a.id, {
      name: 'Big red',
      options: { size: 'L', color: 'red' },
      price: 1,
      position: 5,
      weight_grams: 0,
    })
    await addVariant(database, 'src', a.id, {
      name: 'Small',
      options: { size: 'S', material: 'wool', fit: 'slim', neck: 'v' },
      sku: 'V-S',
      barcode: 'B1',
      compare_at_price: 3,
      position: 2,
    })
    await addVariant(database, 'src', a.id, { name: 'No options' })
    await createProduct(database, 'src', { name: 'Bare' })
    const b = await createProduct(database, 'src', { name: 'Archived one', status: 'archived' })
    await addVariant(database, 'src', b.id, { name: 'Only', price: 0 })
    const exported = await exportText(database, 'src')
    // Shopify's classic columns (Option1 to Option3 among them), the export's own, then the
    // options past the third, which Shopify's format has no columns for.
    const header = exported.split('\n', 1)[0]!.split(',')
    assert.deepEqual(header.slice(header.indexOf('Option1 Name'), header.indexOf('Variant SKU')), [
      'Option1 Name',
      'Option1 Value',
      'Option2 Name',
      'Option2 Value',
      'Option3 Name',
      'Option3 Value',
    ])
    assert.deepEqual(header.slice(header.indexOf('Status')), [
      'Status',
      'Product Price',
      'Product Compare At Price',
      'Product SKU',
      'Product Barcode',
      'Product Tax Rate',
      'Variant Name',
      'Option4 Name',
      'Option4 Value',
      'Option5 Name',
      'Option5 Value',
    ])
    const summary = await importText(database, 'dst', exported)
    assertNoErrors(summary)
    assert.deepEqual(await products(database, 'dst'), await products(database, 'src'))
    const again = await importText(database, 'dst', exported)
    assert.deepEqual(again, unchanged(summary.rowsProcessed, summary))
  })

  it('reads one snapshot: what changes after the export began is not in the file', async (t) => {
    const database = await createFileTestDatabase(t, dialect)
    const tee = await createProduct(database, 'src', { name: 'Snapshot Tee' })
    await addVariant(database, 'src', tee.id, { name: 'S', options: { size: 'S' } })
    await createProduct(database, 'src', { name: 'Snapshot Mug' })
    const pieces = exportCatalog(database, 'src')
    const header = await pieces.next()
    // After the header, before the products: a variant with five option names (the header
    // has room for three), a rename and a new product.
    await addVariant(database, 'src', tee.id, {
      name: 'Wide',
      options: { size: 'M', color: 'red', fit: 'wide', neck: 'v', sleeve: 'long' },
    })
    await database.writeAtomic(updateProductWork('src', tee.id, { name: 'Renamed Tee' }, undefined))
    await createProduct(database, 'src', { name: 'Snapshot Late' })
    let text = header.value as string
    for await (const piece of pieces) text += piece
    assert.ok(!text.split('\n', 1)[0]!.includes('Option4 Name'))
    assert.ok(text.includes('Snapshot Tee') && !text.includes('Renamed Tee'))
    assert.ok(text.includes('snapshot-mug') && !text.includes('snapshot-late'))
    assert.ok(!text.includes('Wide'))
    assert.equal(text.trim().split('\n').length, 3, 'the header, the tee with one variant, the mug')
    // The writes went on beside the export, and a new export sees them.
    assert.ok((await exportText(database, 'src')).includes('sleeve'))
  })

  it('an export ended after its header releases its snapshot', async (t) => {
    const database = await createFileTestDatabase(t, dialect)
    await createProduct(database, 'src', { name: 'Released' })
    const pieces = exportCatalog(database, 'src')
    await pieces.next()
    // A commit after the snapshot: while the snapshot is held, SQLite cannot copy that commit
    // from its WAL into the database (a checkpoint stops at the oldest reader's snapshot), and
    // PostgreSQL keeps the pool's connection in its transaction.
    await createProduct(database, 'src', { name: 'After' })
    const held = await releaseSigns(database)
    await pieces.return(undefined)
    assert.deepEqual(await releaseSigns(database), {
      readerBlocksCheckpoint: false,
      busyConnections: 0,
    })
    assert.deepEqual(held, {
      readerBlocksCheckpoint: dialect === 'sqlite',
      busyConnections: dialect === 'postgres' ? 1 : 0,
    })
  })

  it('quotes a field that holds a carriage return alone, which would end its record otherwise', async (t) => {
    const database = await createTestDatabase(t, dialect)
    const product = await createProduct(database, 'src', { name: 'Bare CR', description: 'a\rb' })
    await addVariant(database, 'src', product.id, { name: 'n\rm', options: { 'Si\rze': 'v\r1' } })
    const exported = await exportText(database, 'src')
    for (const field of ['a\rb', 'n\rm', 'Si\rze', 'v\r1']) {
      assert.ok(exported.includes(`,"${field}"`), `${JSON.stringify(field)} quoted`)
    }
    // Outside quotes, no carriage return: every record is one line (no field holds a \n here).
    assert.equal(exported.replace(/"[^"]*"/g, '').includes('\r'), false)
    assertNoErrors(await importText(database, 'dst', exported))
    assert.deepEqual(await products(database, 'dst'), await products(database, 'src'))
  })
})

/**
 * What an open snapshot leaves to see: on SQLite, a passive checkpoint that cannot copy every
 * frame of the WAL; on PostgreSQL, connections of the pool that are not idle.
 */
async function releaseSigns(
  database: Database,
): Promise<{ readerBlocksCheckpoint: boolean; busyConnections: number }> {
  if (database.dialect === 'postgres') {
    const pool = database.poolFigures!()
    return { readerBlocksCheckpoint: false, busyConnections: pool.total - pool.idle }
  }
  const { rows } = await sql<{
    log: number
    checkpointed: number
  }>`pragma wal_checkpoint(passive)`.execute(database.kysely)
  return { readerBlocksCheckpoint: rows[0]!.checkpointed < rows[0]!.log, busyConnections: 0 }
}

it('a stream of an export destroyed before it is read ends the export, which waited after its first piece', async () => {
  let ended = false
  const pieces = (async function* () {
    try {
      yield 'header\n'
      yield 'page 1\n'
    } finally {
      ended = true
    }
  })()
  // As when a client goes away before its answer is sent: nothing of the stream is read.
  const stream = await startedStream(pieces)
  stream.destroy()
  await new Promise((resolve) => stream.once('close', resolve))
  await new Promise((resolve) => setImmediate(resolve))
  assert.equal(ended, true)
})
