import assert from 'node:assert/strict'
import { it } from 'node:test'
import { JOB_READ_BYTES } from '../src/import/import-jobs.js'
import { csv, importText } from './import-helpers.js'
import { buildTestApi, describeEachDialect, expectError, type TestApi } from './helpers.js'

// The contract's rules for POST /imports, checked as a client sees them. Part 2: "idempotency
// keys on every write"; part 1: "Idempotency-Key (1 to 255 printable characters) on any
// write, as in Stripe's API".

function postCsv(
  api: TestApi,
  body: string | Buffer,
  headers: Record<string, string> = {},
  key?: string,
) {
  return api.request('POST', '/imports', {
    body,
    ...(key && { key }),
    headers: { 'content-type': 'text/csv', ...headers },
  })
}

async function waitForImport(api: TestApi, id: string, key?: string) {
  for (let i = 0; i < 3000; i++) {
    const record = (await api.get(`/imports/${id}`, key)).json().data
    if (record.status !== 'running') return record
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
  throw new Error('the import did not finish')
}

describeEachDialect('POST /imports with an Idempotency-Key', (dialect) => {
  const file = csv('Handle,Title,Variant SKU,Variant Price', 'a,A,SKU-A,1', 'b,B,SKU-B,2')

  it('a retry gets the first answer again, replayed, and starts no second import', async (t) => {
    const api = await buildTestApi(t, dialect)
    const first = await postCsv(api, file, { 'idempotency-key': 'import-1' })
    assert.equal(first.statusCode, 202, first.body)
    assert.equal(first.headers['idempotent-replayed'], undefined)
    const accepted = first.json().data
    await waitForImport(api, accepted.id)

    const retry = await postCsv(api, file, { 'idempotency-key': 'import-1' })
    assert.equal(retry.statusCode, 202, retry.body)
    assert.equal(retry.headers['idempotent-replayed'], 'true')
    assert.deepEqual(retry.json(), first.json(), 'the first answer, byte for byte')

    // Without the key, the same file is a new import: that is what the key prevents.
    const unkeyed = await postCsv(api, file)
    assert.notEqual(unkeyed.json().data.id, accepted.id)
  })

  it('the same key with another file is 422 idempotency_key_reused, and nothing starts', async (t) => {
    const api = await buildTestApi(t, dialect)
    const first = await postCsv(api, file, { 'idempotency-key': 'import-2' })
    assert.equal(first.statusCode, 202, first.body)
    await waitForImport(api, first.json().data.id)
    const other = csv('Handle,Title', 'c,C')
    expectError(
      await postCsv(api, other, { 'idempotency-key': 'import-2' }),
      422,
      'idempotency_key_reused',
    )
    const products = (await api.get('/products')).json().data.map((p: { slug: string }) => p.slug)
    assert.deepEqual(products.sort(), ['a', 'b'], 'the second file was not imported')
  })

  it("a key is per store: another store's same key starts its own import", async (t) => {
    const api = await buildTestApi(t, dialect)
    const otherKey = await api.newKey({ store: 'store-b' })
    const mine = await postCsv(api, file, { 'idempotency-key': 'import-3' })
    const theirs = await postCsv(api, file, { 'idempotency-key': 'import-3' }, otherKey)
    assert.equal(theirs.statusCode, 202, theirs.body)
    assert.equal(theirs.headers['idempotent-replayed'], undefined)
    assert.notEqual(theirs.json().data.id, mine.json().data.id)
    await waitForImport(api, mine.json().data.id)
    const record = await waitForImport(api, theirs.json().data.id, otherKey)
    assert.equal(record.productsCreated, 2)
  })

  it('a malformed key is 400 validation_failed, and no import starts', async (t) => {
    const api = await buildTestApi(t, dialect)
    const res = await postCsv(api, file, { 'idempotency-key': ' padded ' })
    expectError(res, 400, 'validation_failed')
    assert.deepEqual((await api.get('/products')).json().data, [])
  })
})

describeEachDialect('POST /imports: one slug, one product of the file', (dialect) => {
  // Contract, part 3: "a second run of the same file reports 0 created and 0 updated", and
  // --dry-run "prints the summary a real run would print". A handle that comes back after
  // another product's rows, or two handles made into one slug, must not make the later
  // product overwrite the earlier one (which a second run would then overwrite back).
  const file = csv(
    'Handle,Title,Variant SKU,Variant Price',
    'ab,First AB,AB-1,1',
    'cd,CD,CD-1,2',
    'ab,Second AB,AB-2,3',
    'Crème Brûlée,First CB,CB-1,4',
    'creme-brulee,Second CB,CB-2,5',
  )

  it('the later product is duplicate_slug, the earlier kept; a second run changes nothing', async (t) => {
    const api = await buildTestApi(t, dialect)
    const dry = await importText(api.database, 'store-a', file, { dryRun: true })
    const first = await waitForImport(api, (await postCsv(api, file)).json().data.id)
    assert.deepEqual(
      first.errors.map((e: Record<string, unknown>) => [e.row, e.handle, e.field, e.error]),
      [
        [4, 'ab', 'Handle', 'duplicate_slug'],
        [6, 'creme-brulee', 'Handle', 'duplicate_slug'],
      ],
    )
    assert.equal(first.productsCreated, 3)
    assert.equal(first.productsUpdated, 0)
    assert.equal(first.rowsFailed, 2)
    const { status, id, createdAt, finishedAt, source, duplicateSkus, hints, ...counts } = first
    ;(void status, id, createdAt, finishedAt, source, duplicateSkus, hints)
    assert.deepEqual(counts, { ...dry, failureReason: null }, 'the dry run said the same')
    const names = (await api.get('/products')).json().data.map((p: { name: string }) => p.name)
    assert.deepEqual(names.sort(), ['CD', 'First AB', 'First CB'])

    const second = await waitForImport(api, (await postCsv(api, file)).json().data.id)
    assert.equal(second.productsCreated, 0)
    assert.equal(second.productsUpdated, 0)
    assert.equal(second.variantsUpdated, 0)
    assert.deepEqual(second.errors, first.errors)
  })
})

describeEachDialect('POST /imports: errors name the column', (dialect) => {
  // Each error names "row, handle, field": the file's column, as for every other field
  // ("Variant Price", "Status"), also for a product whose first row has no title.
  it('a product without a title is reported on its Title column', async (t) => {
    const api = await buildTestApi(t, dialect)
    const file = csv('Handle,Title,Variant Price', 'a,,1', 'b,B,abc')
    const record = await waitForImport(api, (await postCsv(api, file)).json().data.id)
    assert.deepEqual(
      record.errors.map((e: Record<string, unknown>) => [e.row, e.handle, e.field, e.error]),
      [
        [2, 'a', 'Title', 'validation_failed'],
        [3, 'b', 'Variant Price', 'validation_failed'],
      ],
    )
    const layout2025 = csv('URL handle,Title,Price', 'c,,1')
    const other = await waitForImport(api, (await postCsv(api, layout2025)).json().data.id)
    assert.deepEqual(
      other.errors.map((e: Record<string, unknown>) => e.field),
      ['Title'],
    )
  })
})

describeEachDialect('POST /imports: errors of images and options name their column', (dialect) => {
  const fields = (record: Record<string, any>) =>
    record.errors.map((e: Record<string, unknown>) => [e.row, e.handle, e.field])

  it('alt text, an option name, an option value, the name the values make and an image URL', async (t) => {
    const api = await buildTestApi(t, dialect)
    const file = csv(
      'Handle,Title,Option1 Name,Option1 Value,Option2 Name,Option2 Value,Variant Price,Image Src,Image Alt Text',
      `a,A,Size,S,,,1,https://cdn.example.com/a.jpg,${'x'.repeat(513)}`,
      `b,B,${'n'.repeat(65)},S,,,1,,`,
      `c,C,Size,${'v'.repeat(256)},,,1,,`,
      `d,D,Size,${'s'.repeat(200)},Color,${'c'.repeat(100)},1,,`,
      'e,E,Size,S,,,1,http://:80/e.jpg,',
    )
    const record = await waitForImport(api, (await postCsv(api, file)).json().data.id)
    assert.deepEqual(fields(record), [
      [2, 'a', 'Image Alt Text'],
      [3, 'b', 'Option1 Name'],
      [4, 'c', 'Option1 Value'],
      [5, 'd', 'Option1 Value'],
      [6, 'e', 'Image Src'],
    ])
    assert.match(record.errors[3].message, /joined/, 'the name made of the values, said so')
    assert.match(record.errors[4].message, /absolute http/, 'an image URL without a host')
    assert.equal(record.rowsFailed, 5)
  })

  it("an image's error is on the row that gives the image, whatever its position", async (t) => {
    // The contract's `row` is the record's number as a spreadsheet shows it.
    const api = await buildTestApi(t, dialect)
    const file = csv(
      'Handle,Title,Variant SKU,Image Src,Image Alt Text,Image Position',
      'im1,Img,i1,https://ex.com/1.jpg,,1',
      'im1,,i2,https://ex.com/2.jpg,,2',
      'im1,,i3,ftp://bad/3.jpg,,3',
      `im2,Img2,j1,https://ex.com/1.jpg,${'x'.repeat(513)},3`,
      'im2,,j2,https://ex.com/2.jpg,,1',
      'im2,,j3,ftp://bad/3.jpg,,2',
    )
    const record = await waitForImport(api, (await postCsv(api, file)).json().data.id)
    assert.deepEqual(fields(record), [
      [4, 'im1', 'Image Src'],
      [7, 'im2', 'Image Src'],
      [5, 'im2', 'Image Alt Text'],
    ])
    const dry = await importText(api.database, 'store-a', file, { dryRun: true })
    assert.deepEqual(dry.errors, record.errors, 'the dry run says the same')
  })

  it("the 2025 layout's names", async (t) => {
    const api = await buildTestApi(t, dialect)
    const file = csv(
      'URL handle,Title,Option1 name,Option1 value,Price,Product image URL,Image alt text',
      `a,A,Size,S,1,https://cdn.example.com/a.jpg,${'x'.repeat(513)}`,
      `b,B,${'n'.repeat(65)},S,1,,`,
      `c,C,Size,${'v'.repeat(256)},1,,`,
    )
    const record = await waitForImport(api, (await postCsv(api, file)).json().data.id)
    assert.deepEqual(fields(record), [
      [2, 'a', 'Image alt text'],
      [3, 'b', 'Option1 name'],
      [4, 'c', 'Option1 value'],
    ])
  })
})

describeEachDialect('POST /imports: a NUL character in a cell', (dialect) => {
  // "a product with a bad row is reported (row number, handle, field, message) and skipped,
  // and the rest go on": a NUL, which the API refuses in any string (PostgreSQL cannot store
  // it), fails its row on its column, on both databases, and does not stop the import.
  it('fails its product with validation_failed on its column; the others are imported', async (t) => {
    const api = await buildTestApi(t, dialect)
    const file = csv(
      'Handle,Title,Variant SKU,Tags,Image Src,Image Alt Text,Option1 Name,Option1 Value',
      'z1,Nul\u0000here,z1,,,,,',
      'z2,OK,z2,,,,,',
      'z3,OK3,sku\u0000x,,,,,',
      'z4,OK4,z4,"a, b\u0000c",,,,',
      'z5,OK5,z5,,https://ex.com/5.jpg,alt\u0000text,,',
      'z6,OK6,z6,,,,Si\u0000ze,S',
      'z7,OK7,z7,,,,Size,S\u0000',
    )
    const record = await waitForImport(api, (await postCsv(api, file)).json().data.id)
    assert.equal(record.status, 'succeeded', record.failureReason)
    assert.deepEqual(
      record.errors.map((e: Record<string, unknown>) => [e.row, e.handle, e.field, e.error]),
      [
        [2, 'z1', 'Title', 'validation_failed'],
        [4, 'z3', 'Variant SKU', 'validation_failed'],
        [5, 'z4', 'Tags', 'validation_failed'],
        [6, 'z5', 'Image Alt Text', 'validation_failed'],
        [7, 'z6', 'Option1 Name', 'validation_failed'],
        [8, 'z7', 'Option1 Value', 'validation_failed'],
      ],
    )
    assert.match(record.errors[0].message, /must not contain a NUL character/)
    assert.equal(record.rowsFailed, 6)
    const slugs = (await api.get('/products')).json().data.map((p: { slug: string }) => p.slug)
    assert.deepEqual(slugs, ['z2'])
  })
})

describeEachDialect('POST /imports: bytes that are not UTF-8', (dialect) => {
  // "The format is Shopify's product CSV: UTF-8": a row holding bytes that are not (an
  // overlong form, a surrogate, a code point past U+10FFFF, a sequence cut short, ...) is a
  // bad row, reported and skipped; it is not imported with U+FFFD in place of them.
  it('each such row fails on its column; valid text is imported, a character split between the pieces read too', async (t) => {
    const api = await buildTestApi(t, dialect)
    const bad: [string, number[]][] = [
      ['overlong-3', [0xe0, 0x80, 0xaf]],
      ['past-10ffff', [0xf4, 0x90, 0x80, 0x80]],
      ['surrogate', [0xed, 0xb2, 0x80]],
      ['overlong-2', [0xc0, 0xaf]],
      ['f8-lead', [0xf8, 0x88, 0x80, 0x80, 0x80]],
      ['cut-short', [0xe2, 0x82]],
      ['stray-continuation', [0x80]],
    ]
    const lines = [Buffer.from('Handle,Title,Body (HTML)\n')]
    for (const [handle, bytes] of bad) {
      lines.push(Buffer.from(`${handle},A`), Buffer.from(bytes), Buffer.from(',D\n'))
    }
    lines.push(Buffer.from('valid,Crème \u{1F600} \uFFFD,D\n'))
    // The job reads its file in pieces of JOB_READ_BYTES: an emoji, then an overlong form,
    // each across the end of a piece.
    const across = (handle: string, sequence: number[], pieceEnd: number) => {
      const head = Buffer.from(`${handle},T,`)
      const size = Buffer.concat(lines).length + head.length
      const pad = Buffer.alloc(pieceEnd - size - 2, 'x')
      lines.push(head, pad, Buffer.from(sequence), Buffer.from('\n'))
    }
    across('emoji-across', [0xf0, 0x9f, 0x98, 0x80], JOB_READ_BYTES)
    across('overlong-across', [0xe0, 0x80, 0xaf], 2 * JOB_READ_BYTES)
    const record = await waitForImport(
      api,
      (await postCsv(api, Buffer.concat(lines))).json().data.id,
    )
    assert.deepEqual(
      record.errors.map((e: Record<string, unknown>) => [e.row, e.handle, e.field, e.message]),
      [
        ...bad.map(([handle], i) => [i + 2, handle, 'Title', 'holds bytes that are not UTF-8']),
        [11, 'overlong-across', 'Body (HTML)', 'holds bytes that are not UTF-8'],
      ],
    )
    const products = (await api.get('/products')).json().data
    assert.deepEqual(products.map((p: { slug: string }) => p.slug).sort(), [
      'emoji-across',
      'valid',
    ])
    const emoji = products.find((p: { slug: string }) => p.slug === 'emoji-across')
    assert.ok(emoji.description.endsWith('xx\u{1F600}'), 'the emoji across two pieces, whole')
    const valid = products.find((p: { slug: string }) => p.slug === 'valid')
    assert.equal(
      valid.name,
      'Crème \u{1F600} \uFFFD',
      'a U+FFFD of the file is text like any other',
    )
  })
})

describeEachDialect('POST /imports: a file that stops being CSV part-way', (dialect) => {
  // "invalid_csv for a file that cannot be read as CSV from that row on"; "1 when some failed
  // (the others are imported all the same)": the products whose rows all come before the
  // unreadable row are imported; one that may go on in it is not (not whole). The file was
  // not read to its end: the import is failed (docs/import-export.md: `succeeded` once the
  // file was read to its end), its reason naming the row.
  it('the import is failed, its reason naming the row; the errors keep the invalid_csv entry', async (t) => {
    const api = await buildTestApi(t, dialect)
    const file = csv(
      'Handle,Title,Variant SKU',
      'k1,K1,k1',
      'k2,K2,k2a',
      'k2,,k2b',
      'k2,"unclosed,k2c',
      'k3,K3,k3',
    )
    const record = await waitForImport(api, (await postCsv(api, file)).json().data.id)
    assert.equal(record.status, 'failed')
    assert.match(record.failureReason, /^The file is not CSV from row 5 on: a quoted field/)
    assert.deepEqual(
      record.errors.map((e: Record<string, unknown>) => [e.row, e.error]),
      [[5, 'invalid_csv']],
    )
    assert.deepEqual([record.productsCreated, record.rowsFailed], [1, 2])
    const slugs = (await api.get('/products')).json().data.map((p: { slug: string }) => p.slug)
    assert.deepEqual(slugs, ['k1'])
  })

  it('failed also when 1,000 errors before it leave no room for its invalid_csv entry', async (t) => {
    const api = await buildTestApi(t, dialect)
    const rows = Array.from({ length: 1000 }, (_, i) => `b${i},B,abc`)
    const file = csv('Handle,Title,Variant Price', ...rows, 'c,"never closed,1')
    const record = await waitForImport(api, (await postCsv(api, file)).json().data.id)
    assert.equal(record.status, 'failed')
    assert.match(record.failureReason, /^The file is not CSV from row 1002 on/)
    assert.equal(record.errors.length, 1000)
    assert.equal(record.rowsFailed, 1000)
  })

  it('every product before the unreadable row is imported, when that row names another handle', async (t) => {
    const api = await buildTestApi(t, dialect)
    const file = csv('Handle,Title', 'a,A', 'b,B', 'c,"C never closed', 'd,D')
    const record = await waitForImport(api, (await postCsv(api, file)).json().data.id)
    assert.equal(record.status, 'failed')
    assert.deepEqual(
      record.errors.map((e: Record<string, unknown>) => [e.row, e.error]),
      [[4, 'invalid_csv']],
    )
    assert.equal(record.productsCreated, 2)
    assert.equal(record.rowsFailed, 0)
    const slugs = (await api.get('/products')).json().data.map((p: { slug: string }) => p.slug)
    assert.deepEqual(slugs.sort(), ['a', 'b'])
  })

  it('the product being read is not imported when the unreadable row may be one of its own', async (t) => {
    const api = await buildTestApi(t, dialect)
    const file = csv(
      'Handle,Title,Option1 Name,Option1 Value',
      'a,A,Size,S',
      'b,B,Size,S',
      'b,,,"M',
    )
    const record = await waitForImport(api, (await postCsv(api, file)).json().data.id)
    assert.deepEqual(
      record.errors.map((e: Record<string, unknown>) => [e.row, e.error]),
      [[4, 'invalid_csv']],
    )
    assert.equal(record.rowsFailed, 1)
    const slugs = (await api.get('/products')).json().data.map((p: { slug: string }) => p.slug)
    assert.deepEqual(slugs, ['a'])
  })
})

describeEachDialect(
  'POST /imports: a column the file lacks leaves its field as it is',
  (dialect) => {
    // Contract, part 3: "A product's `price` is its first variant's price" (the lowest
    // position); docs/import-export.md: "A column the file lacks leaves its field as it is on
    // an update". A file of skus and prices only must not take the options and names of the
    // variants it matches, nor price the product from its own first row.
    async function productWithSizes(api: TestApi) {
      const product = await api.createProduct({ name: 'Up 1', price: 10 })
      assert.equal(product.slug, 'up-1')
      for (const [sku, size, price] of [
        ['U1-S', 'S', 10],
        ['U1-M', 'M', 11],
        [null, 'L', 12],
      ] as const) {
        const res = await api.post(`/products/${product.id}/variants`, {
          name: size,
          sku,
          price,
          options: { Size: size },
        })
        assert.equal(res.statusCode, 200, res.body)
      }
      return product.id as string
    }

    async function variantsOf(api: TestApi, id: string) {
      const product = (await api.get(`/products/${id}`)).json().data
      return {
        price: product.price,
        variants: product.variants.map((v: Record<string, unknown>) => [
          v.sku,
          v.name,
          v.options,
          v.price,
        ]),
      }
    }

    it('a file without option columns: options and names stay; the product is priced by its first variant', async (t) => {
      const api = await buildTestApi(t, dialect)
      const id = await productWithSizes(api)
      const file = csv('Handle,Variant SKU,Variant Price', 'up-1,U1-M,50', 'up-1,U1-S,15')
      const dry = await importText(api.database, 'store-a', file, { dryRun: true })
      const record = await waitForImport(api, (await postCsv(api, file)).json().data.id)
      assert.deepEqual(record.errors, [])
      assert.deepEqual(
        [record.productsUpdated, record.variantsUpdated, record.variantsCreated],
        [1, 2, 0],
      )
      assert.deepEqual(
        [dry.productsUpdated, dry.variantsUpdated, dry.variantsCreated],
        [1, 2, 0],
        'the dry run said the same',
      )
      assert.deepEqual(await variantsOf(api, id), {
        price: 15,
        variants: [
          ['U1-S', 'S', { Size: 'S' }, 15],
          ['U1-M', 'M', { Size: 'M' }, 50],
          [null, 'L', { Size: 'L' }, 12],
        ],
      })
      const again = await waitForImport(api, (await postCsv(api, file)).json().data.id)
      assert.deepEqual(
        [again.productsUpdated, again.variantsUpdated, again.variantsCreated],
        [0, 0, 0],
        'a second run changes nothing',
      )
    })

    it('a file that prices only later variants leaves the product price', async (t) => {
      const api = await buildTestApi(t, dialect)
      const id = await productWithSizes(api)
      const file = csv('Handle,Variant SKU,Variant Price', 'up-1,U1-M,50')
      const record = await waitForImport(api, (await postCsv(api, file)).json().data.id)
      assert.deepEqual([record.productsUpdated, record.variantsUpdated], [0, 1])
      assert.equal((await variantsOf(api, id)).price, 10)
    })

    it('option columns set the options, and the name made of them unless a Variant Name is given', async (t) => {
      const api = await buildTestApi(t, dialect)
      const id = await productWithSizes(api)
      const derived = csv(
        'Handle,Option1 Name,Option1 Value,Variant SKU',
        'up-1,Size,Small,U1-S',
        'up-1,,Medium,U1-M',
      )
      const first = await waitForImport(api, (await postCsv(api, derived)).json().data.id)
      assert.deepEqual(first.errors, [])
      assert.deepEqual([first.productsUpdated, first.variantsUpdated], [0, 2])
      const named = csv(
        'Handle,Option1 Name,Option1 Value,Variant SKU,Variant Name',
        'up-1,Size,Small,U1-S,The small one',
      )
      const second = await waitForImport(api, (await postCsv(api, named)).json().data.id)
      assert.deepEqual([second.productsUpdated, second.variantsUpdated], [0, 1])
      const nameOnly = csv('Handle,Variant SKU,Variant Name', 'up-1,U1-M,The medium one')
      const third = await waitForImport(api, (await postCsv(api, nameOnly)).json().data.id)
      assert.deepEqual([third.productsUpdated, third.variantsUpdated], [0, 1])
      assert.deepEqual(await variantsOf(api, id), {
        price: 10,
        variants: [
          ['U1-S', 'The small one', { Size: 'Small' }, 10],
          ['U1-M', 'The medium one', { Size: 'Medium' }, 11],
          [null, 'L', { Size: 'L' }, 12],
        ],
      })
    })

    it('a new product without option columns: Default Title variants, priced by its first row', async (t) => {
      const api = await buildTestApi(t, dialect)
      const file = csv('Handle,Title,Variant SKU,Variant Price', 'new,New,N-1,7', 'new,,N-2,3')
      const record = await waitForImport(api, (await postCsv(api, file)).json().data.id)
      assert.deepEqual(record.errors, [])
      assert.deepEqual([record.productsCreated, record.variantsCreated], [1, 2])
      const [product] = (await api.get('/products?slug=new')).json().data
      assert.deepEqual(await variantsOf(api, product.id), {
        price: 7,
        variants: [
          ['N-1', 'Default Title', {}, 7],
          ['N-2', 'Default Title', {}, 3],
        ],
      })
    })
  },
)
