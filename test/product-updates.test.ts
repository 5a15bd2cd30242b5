import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { it } from 'node:test'
import { buildTestApi, describeEachDialect, expectError, type TestApi } from './helpers.js'
import {
  IMAGES,
  PRODUCT_FIELDS,
  STORED_IMAGES,
  STORED_TAGS,
  TAGS,
  WRONG_FOR_NUMBER,
  WRONG_FOR_STRING,
  accepted,
  expectChanged,
  expectInvalid,
  expectNoChange,
  expectUntouched,
  money,
  pause,
  runCreateCases,
  runFieldCases,
  sample,
  slugSpec,
  text,
  trimmedString,
  type FieldSpec,
  type Json,
  type Subject,
} from './update-cases.js'

/** Every field a product can be created with, none left at its default. */
const CREATED = {
  name: 'Linen Shirt',
  description: 'Old text',
  status: 'draft',
  price: 10,
  compare_at_price: 15,
  sku: 'SKU-1',
  barcode: 'BAR-1',
  tax_rate: 19,
  vendor: 'Acme',
  product_type: 'Shirts',
  tags: STORED_TAGS,
  images: STORED_IMAGES,
}

/** Reads a product with GET, without its `variants`, failing unless the answer is 200. */
async function readProduct(api: TestApi, id: string, key = api.key): Promise<Json> {
  const res = await api.get(`/products/${id}`, key)
  assert.equal(res.statusCode, 200, `GET /products/${id}: ${res.body}`)
  const { variants: _variants, ...product } = res.json().data
  return product
}

/** A product in a store of its own, with the PATCH and GET of that store's key. */
async function productSubject(api: TestApi, body: Json = CREATED): Promise<Subject> {
  const key = await api.newKey({ store: `store-${randomUUID()}` })
  const record = await api.createProduct(body, key)
  const path = `/products/${record.id}`
  return {
    record,
    patch: (patch, headers) => api.patch(path, patch, { key, ...(headers && { headers }) }),
    read: () => readProduct(api, record.id, key),
  }
}

/** The merge-patch cases of each product field, from the contract's rules. */
const PRODUCT_SPECS: FieldSpec[] = [
  trimmedString('name', 'name', 'Linen Shirt', 255, true),
  {
    field: 'description',
    out: 'description',
    initialOut: 'Old text',
    replace: [
      accepted('New text'),
      accepted('  Kept as sent  ', '  Kept as sent  ', 'text with spaces around'),
      accepted(text(20_000, 'd'), text(20_000, 'd'), '20,000 characters'),
    ],
    null: { clearsTo: null },
    wrongType: WRONG_FOR_STRING,
    outOfBounds: [sample(text(20_001, 'd'), '20,001 characters')],
    same: [sample('Old text')],
  },
  {
    field: 'status',
    out: 'status',
    initialOut: 'draft',
    replace: [accepted('active'), accepted('archived')],
    null: 'refused',
    wrongType: [sample(1), sample(true), sample(['active']), sample({ status: 'active' })],
    outOfBounds: [sample('ACTIVE'), sample('published'), sample(''), sample(' active ')],
    same: [sample('draft')],
  },
  money('price', 'price', 10, true),
  money('compare_at_price', 'compareAtPrice', 15, false),
  trimmedString('sku', 'sku', 'SKU-1', 255),
  trimmedString('barcode', 'barcode', 'BAR-1', 255),
  {
    field: 'tax_rate',
    out: 'taxRate',
    initialOut: 19,
    replace: [accepted(7.5), accepted(0), accepted(100)],
    null: { clearsTo: null },
    wrongType: WRONG_FOR_NUMBER,
    outOfBounds: [sample(-1), sample(-0.5), sample(100.01), sample(101)],
    same: [sample(19)],
  },
  trimmedString('vendor', 'vendor', 'Acme', 255),
  trimmedString('product_type', 'productType', 'Shirts', 255),
  TAGS,
  IMAGES,
  slugSpec('linen-shirt'),
]

/** Whether `slug` is `base` itself or `base-N` with N >= 2, as the contract's suffixes are. */
function isSlugOf(slug: string, base: string): boolean {
  if (slug === base) return true
  const suffix = slug.startsWith(`${base}-`) ? slug.slice(base.length + 1) : ''
  return /^[1-9]\d*$/.test(suffix) && Number(suffix) >= 2
}

describeEachDialect('POST /products: vendor, product_type, tags, images and version', (dialect) => {
  it('returns the new fields as sent, version 1, and GET shows the same record', async (t) => {
    const api = await buildTestApi(t, dialect)
    const res = await api.post('/products', CREATED)
    assert.equal(res.statusCode, 200, res.body)
    const product = res.json().data
    assert.deepEqual(Object.keys(product).sort(), PRODUCT_FIELDS)
    assert.equal(product.vendor, 'Acme')
    assert.equal(product.productType, 'Shirts')
    assert.deepEqual(product.tags, STORED_TAGS)
    assert.deepEqual(product.images, STORED_IMAGES)
    assert.equal(product.version, 1)
    assert.equal('product_type' in product, false, 'product_type is returned camelCase')
    assert.deepEqual(await readProduct(api, product.id), product)
  })

  it('answers vendor and productType null, tags and images [] when not sent or sent null', async (t) => {
    const api = await buildTestApi(t, dialect)
    const bodies = [
      { name: 'Plain' },
      { name: 'Nulls', vendor: null, product_type: null, tags: null, images: null },
    ]
    for (const body of bodies) {
      const product = await api.createProduct(body)
      const label = JSON.stringify(body)
      assert.deepEqual(Object.keys(product).sort(), PRODUCT_FIELDS, label)
      assert.equal(product.vendor, null, label)
      assert.equal(product.productType, null, label)
      assert.deepEqual(product.tags, [], label)
      assert.deepEqual(product.images, [], label)
      assert.equal(product.version, 1, label)
    }
  })

  it('trims vendor and product_type', async (t) => {
    const api = await buildTestApi(t, dialect)
    const product = await api.createProduct({
      name: 'Mug',
      vendor: '  Acme Ltd ',
      product_type: '\tMugs \n',
    })
    assert.equal(product.vendor, 'Acme Ltd')
    assert.equal(product.productType, 'Mugs')
  })

  it('keeps each tag once, trimmed, case-insensitively, with the first spelling and order', async (t) => {
    const api = await buildTestApi(t, dialect)
    const product = await api.createProduct({
      name: 'Hat',
      tags: ['  Summer', 'hat', 'SUMMER', 'Sale ', 'summer', 'HAT', 'sale'],
    })
    assert.deepEqual(product.tags, ['Summer', 'hat', 'Sale'])
    assert.deepEqual((await readProduct(api, product.id)).tags, ['Summer', 'hat', 'Sale'])
  })

  for (const spec of [
    trimmedString('vendor', 'vendor', 'Acme', 255),
    trimmedString('product_type', 'productType', 'Shirts', 255),
    TAGS,
    IMAGES,
  ]) {
    it(`${spec.field}: in bounds accepted, wrong type and out of bounds 400 validation_failed`, async (t) => {
      const api = await buildTestApi(t, dialect)
      await runCreateCases(
        t,
        (value) => api.post('/products', { name: 'Bounds', [spec.field]: value }),
        spec,
      )
    })
  }
})

describeEachDialect('PATCH /products/:id: merge-patch cases per field', (dialect) => {
  for (const spec of PRODUCT_SPECS) {
    it(`${spec.field}: left out, replaced, null, wrong type, out of bounds, as stored`, async (t) => {
      const api = await buildTestApi(t, dialect)
      const otherChange =
        spec.field === 'name' ? { description: 'Changed text' } : { name: 'Renamed Shirt' }
      await runFieldCases(t, () => productSubject(api), spec, otherChange)
    })
  }
})

describeEachDialect('PATCH /products/:id', (dialect) => {
  it('answers 200 with the whole product after the change, without variants', async (t) => {
    const api = await buildTestApi(t, dialect)
    const subject = await productSubject(api)
    await pause()
    const res = await subject.patch({ price: 11 })
    const product = await expectChanged(subject, res, 'PATCH price')
    assert.deepEqual(Object.keys(res.json()), ['data'])
    assert.deepEqual(Object.keys(product).sort(), PRODUCT_FIELDS)
    assert.equal('variants' in product, false)
    assert.deepEqual(product, {
      ...subject.record,
      price: 11,
      version: 2,
      updatedAt: product.updatedAt,
    })
  })

  it('answers without variants also when the product has some', async (t) => {
    const api = await buildTestApi(t, dialect)
    const product = await api.createProduct({ name: 'Tee' })
    const variant = await api.post(`/products/${product.id}/variants`, { name: 'Red' })
    assert.equal(variant.statusCode, 200, variant.body)
    const res = await api.patch(`/products/${product.id}`, { name: 'Red Tee' })
    assert.equal(res.statusCode, 200, res.body)
    assert.deepEqual(Object.keys(res.json().data).sort(), PRODUCT_FIELDS)
    assert.equal(res.json().data.version, 3, '1, + the variant added, + the rename')
  })

  it('changes several fields in one step: version + 1, not + the number of fields', async (t) => {
    const api = await buildTestApi(t, dialect)
    const subject = await productSubject(api)
    await pause()
    const patch = { name: 'Heavy Linen Shirt', price: 12, tags: ['heavy'], vendor: null }
    const product = await expectChanged(subject, await subject.patch(patch), 'PATCH four fields')
    assert.equal(product.name, 'Heavy Linen Shirt')
    assert.equal(product.price, 12)
    assert.deepEqual(product.tags, ['heavy'])
    assert.equal(product.vendor, null)
  })

  it('moves version and updatedAt with each change, one by one', async (t) => {
    const api = await buildTestApi(t, dialect)
    const subject = await productSubject(api)
    let current = subject.record
    for (const [i, patch] of [{ price: 1 }, { price: 2 }, { sku: null }, { tags: [] }].entries()) {
      await pause()
      const next = await expectChanged(
        { ...subject, record: current },
        await subject.patch(patch),
        `change ${i + 1}`,
      )
      assert.equal(next.version, i + 2)
      current = next
    }
  })

  it('an empty patch {} answers 200 with the record as it is: same version, same updatedAt', async (t) => {
    const api = await buildTestApi(t, dialect)
    const subject = await productSubject(api)
    await pause()
    await expectNoChange(subject, await subject.patch({}), 'PATCH {}')
  })

  it('a patch of every field with its stored value changes nothing', async (t) => {
    const api = await buildTestApi(t, dialect)
    const subject = await productSubject(api)
    await pause()
    const patch = { ...CREATED, slug: subject.record.slug }
    await expectNoChange(subject, await subject.patch(patch), 'PATCH of the stored values')
  })

  it('a no-op patch after real changes keeps the version and updatedAt those changes made', async (t) => {
    const api = await buildTestApi(t, dialect)
    const subject = await productSubject(api)
    await pause()
    const changed = await expectChanged(subject, await subject.patch({ price: 42 }), 'PATCH price')
    await pause()
    const now: Subject = { ...subject, record: changed }
    await expectNoChange(now, await subject.patch({ price: 42 }), 'PATCH the same price again')
  })

  it('ignores fields it does not define, id included: alone they change nothing', async (t) => {
    const api = await buildTestApi(t, dialect)
    const subject = await productSubject(api)
    await pause()
    const unknown = {
      id: randomUUID(),
      version: 99,
      created_at: '2000-01-01T00:00:00.000Z',
      updated_at: '2000-01-01T00:00:00.000Z',
      createdAt: '2000-01-01T00:00:00.000Z',
      // (The camelCase spellings of request fields are refused instead: errors.test.ts.)
      variants: [{ name: 'Sneaky' }],
      colour: 'blue',
    }
    await expectNoChange(subject, await subject.patch(unknown), 'PATCH of unknown fields')
  })

  it('ignores unknown fields, id included, beside a real change', async (t) => {
    const api = await buildTestApi(t, dialect)
    const subject = await productSubject(api)
    await pause()
    const res = await subject.patch({ id: randomUUID(), version: 7, name: 'Renamed' })
    const product = await expectChanged(subject, res, 'PATCH name with id and version')
    assert.equal(product.name, 'Renamed')
    assert.equal(product.id, subject.record.id)
  })

  for (const contentType of [
    'application/merge-patch+json',
    'application/merge-patch+json; charset=utf-8',
    'application/json',
    'application/json; charset=utf-8',
  ]) {
    it(`accepts Content-Type ${contentType}`, async (t) => {
      const api = await buildTestApi(t, dialect)
      const subject = await productSubject(api)
      await pause()
      const res = await subject.patch({ name: 'Patched' }, { 'content-type': contentType })
      const product = await expectChanged(subject, res, `PATCH as ${contentType}`)
      assert.equal(product.name, 'Patched')
    })
  }

  it('refuses a body that is not JSON with 415 unsupported_media_type, changing nothing', async (t) => {
    const api = await buildTestApi(t, dialect)
    const subject = await productSubject(api)
    for (const contentType of ['text/plain', 'application/x-www-form-urlencoded']) {
      const res = await subject.patch('{"name":"Patched"}', { 'content-type': contentType })
      expectError(res, 415, 'unsupported_media_type')
    }
    await expectUntouched(subject, 'PATCH as text/plain')
  })

  it('refuses an empty body or broken JSON with 400 invalid_json, changing nothing', async (t) => {
    const api = await buildTestApi(t, dialect)
    const subject = await productSubject(api)
    for (const body of ['', '{"name": "Patched"', '{name: "x"}']) {
      expectError(await subject.patch(body), 400, 'invalid_json')
    }
    await expectUntouched(subject, 'PATCH with broken JSON')
  })

  it('refuses a JSON body that is not an object with 400, changing nothing', async (t) => {
    const api = await buildTestApi(t, dialect)
    const subject = await productSubject(api)
    for (const body of ['[]', '[{"name":"x"}]', '"x"', '42', 'null', 'true']) {
      const res = await subject.patch(body)
      assert.equal(res.statusCode, 400, `PATCH with ${body}: ${res.body}`)
      const code = res.json().error
      assert.ok(code === 'validation_failed' || code === 'invalid_json', `${body}: ${res.body}`)
    }
    await expectUntouched(subject, 'PATCH with a body that is not an object')
  })

  it('applies nothing of a patch with one bad field among good ones', async (t) => {
    const api = await buildTestApi(t, dialect)
    const subject = await productSubject(api)
    const res = await subject.patch({ name: 'Good', tags: ['fine'], price: -5 })
    expectInvalid(res, 'price', 'PATCH with price -5')
    await expectUntouched(subject, 'PATCH with price -5')
  })
})

describeEachDialect('PATCH /products/:id: status transitions', (dialect) => {
  const ALLOWED = [
    ['draft', 'active'],
    ['active', 'draft'],
    ['draft', 'archived'],
    ['active', 'archived'],
    ['archived', 'draft'],
  ] as const

  it('allows every transition of the table: draft<->active, draft|active -> archived, archived -> draft', async (t) => {
    const api = await buildTestApi(t, dialect)
    for (const [from, to] of ALLOWED) {
      await t.test(`${from} -> ${to}: 200, status ${to}, version + 1`, async () => {
        const subject = await productSubject(api, { ...CREATED, status: from })
        assert.equal(subject.record.status, from)
        await pause()
        const product = await expectChanged(
          subject,
          await subject.patch({ status: to }),
          `${from} -> ${to}`,
        )
        assert.equal(product.status, to)
      })
    }
  })

  it('refuses archived -> active with 409 invalid_transition and changes nothing', async (t) => {
    const api = await buildTestApi(t, dialect)
    await t.test('archived -> active alone', async () => {
      const subject = await productSubject(api, { ...CREATED, status: 'archived' })
      expectError(await subject.patch({ status: 'active' }), 409, 'invalid_transition')
      await expectUntouched(subject, 'archived -> active')
    })
    await t.test('archived -> active beside other changes: none of them is applied', async () => {
      const subject = await productSubject(api, { ...CREATED, status: 'archived' })
      const res = await subject.patch({ status: 'active', name: 'Back on sale', price: 1 })
      expectError(res, 409, 'invalid_transition')
      await expectUntouched(subject, 'archived -> active with name and price')
    })
    await t.test('archived -> draft -> active, the way round, is allowed', async () => {
      const subject = await productSubject(api, { ...CREATED, status: 'archived' })
      await pause()
      const draft = await expectChanged(
        subject,
        await subject.patch({ status: 'draft' }),
        'to draft',
      )
      await pause()
      const active = await expectChanged(
        { ...subject, record: draft },
        await subject.patch({ status: 'active' }),
        'to active',
      )
      assert.equal(active.status, 'active')
    })
  })

  it('sending the current status is no change, in each status', async (t) => {
    const api = await buildTestApi(t, dialect)
    for (const status of ['draft', 'active', 'archived']) {
      await t.test(`${status} -> ${status}: 200, same version and updatedAt`, async () => {
        const subject = await productSubject(api, { ...CREATED, status })
        await pause()
        await expectNoChange(subject, await subject.patch({ status }), `${status} -> ${status}`)
      })
    }
  })

  it('checks the transition before conflicts: archived -> active with a taken slug is invalid_transition', async (t) => {
    const api = await buildTestApi(t, dialect)
    await api.createProduct({ name: 'Taken' })
    const archived = await api.createProduct({ name: 'Old', status: 'archived' })
    const res = await api.patch(`/products/${archived.id}`, { status: 'active', slug: 'taken' })
    expectError(res, 409, 'invalid_transition')
    assert.deepEqual(await readProduct(api, archived.id), archived)
  })
})

describeEachDialect('PATCH /products/:id: slugs', (dialect) => {
  it('keeps the slug when the product is renamed, rename after rename', async (t) => {
    const api = await buildTestApi(t, dialect)
    const product = await api.createProduct({ name: 'Linen Shirt' })
    assert.equal(product.slug, 'linen-shirt')
    for (const name of ['Cotton Shirt', 'Wool Sweater', 'Linen Shirt Deluxe']) {
      const res = await api.patch(`/products/${product.id}`, { name })
      assert.equal(res.statusCode, 200, res.body)
      assert.equal(res.json().data.name, name)
      assert.equal(res.json().data.slug, 'linen-shirt', `after renaming to ${name}`)
    }
    assert.equal((await readProduct(api, product.id)).slug, 'linen-shirt')
  })

  it('sets a valid slug, which GET shows', async (t) => {
    const api = await buildTestApi(t, dialect)
    const product = await api.createProduct({ name: 'Linen Shirt' })
    const res = await api.patch(`/products/${product.id}`, { slug: 'shirt-2026-linen' })
    assert.equal(res.statusCode, 200, res.body)
    assert.equal(res.json().data.slug, 'shirt-2026-linen')
    assert.equal((await readProduct(api, product.id)).slug, 'shirt-2026-linen')
  })

  it("refuses another product's slug with 409 duplicate_slug and changes nothing", async (t) => {
    const api = await buildTestApi(t, dialect)
    const first = await api.createProduct({ name: 'Summer Hat' })
    const second = await api.createProduct({ name: 'Winter Hat' })
    await t.test('its generated slug', async () => {
      const res = await api.patch(`/products/${second.id}`, { slug: first.slug })
      expectError(res, 409, 'duplicate_slug')
      assert.deepEqual(await readProduct(api, second.id), second)
    })
    await t.test('a slug set by hand, beside another change', async () => {
      const third = await api.createProduct({ name: 'Cap' })
      assert.equal((await api.patch(`/products/${third.id}`, { slug: 'the-cap' })).statusCode, 200)
      const res = await api.patch(`/products/${second.id}`, {
        slug: 'the-cap',
        name: 'Not applied',
      })
      expectError(res, 409, 'duplicate_slug')
      assert.deepEqual(await readProduct(api, second.id), second)
    })
  })

  it("takes a slug another store's product has", async (t) => {
    const api = await buildTestApi(t, dialect)
    const otherKey = await api.newKey({ store: 'store-b' })
    await api.createProduct({ name: 'Summer Hat' }, otherKey)
    const mine = await api.createProduct({ name: 'Other' })
    const res = await api.patch(`/products/${mine.id}`, { slug: 'summer-hat' })
    assert.equal(res.statusCode, 200, res.body)
    assert.equal(res.json().data.slug, 'summer-hat')
  })

  it('setting its own slug again is no change', async (t) => {
    const api = await buildTestApi(t, dialect)
    const subject = await productSubject(api, { name: 'Summer Hat' })
    await pause()
    await expectNoChange(subject, await subject.patch({ slug: 'summer-hat' }), 'PATCH own slug')
  })

  it('never generates a slug set by hand: a product named "Summer Hat" does not get summer-hat', async (t) => {
    const api = await buildTestApi(t, dialect)
    const x = await api.createProduct({ name: 'Straw thing' })
    assert.equal((await api.patch(`/products/${x.id}`, { slug: 'summer-hat' })).statusCode, 200)
    const hat = await api.createProduct({ name: 'Summer Hat' })
    assert.notEqual(hat.slug, 'summer-hat')
    assert.ok(isSlugOf(hat.slug, 'summer-hat'), `${hat.slug} is summer-hat with a suffix`)
  })

  it('never generates t-shirt-3 once it was set by hand, however many T-Shirts follow', async (t) => {
    const api = await buildTestApi(t, dialect)
    assert.equal((await api.createProduct({ name: 'T-Shirt' })).slug, 't-shirt')
    assert.equal((await api.createProduct({ name: 'T-Shirt' })).slug, 't-shirt-2')
    const other = await api.createProduct({ name: 'Other' })
    assert.equal((await api.patch(`/products/${other.id}`, { slug: 't-shirt-3' })).statusCode, 200)
    const slugs = new Set(['t-shirt', 't-shirt-2', 't-shirt-3'])
    for (let i = 0; i < 5; i++) {
      const slug = (await api.createProduct({ name: 'T-Shirt' })).slug
      assert.notEqual(slug, 't-shirt-3')
      assert.ok(isSlugOf(slug, 't-shirt'), slug)
      assert.ok(!slugs.has(slug), `${slug} given twice`)
      slugs.add(slug)
    }
  })

  it("never generates a product's old slug after a hand change: Mug -> coffee-mug, then Mug is not mug", async (t) => {
    const api = await buildTestApi(t, dialect)
    const mug = await api.createProduct({ name: 'Mug' })
    assert.equal(mug.slug, 'mug')
    assert.equal((await api.patch(`/products/${mug.id}`, { slug: 'coffee-mug' })).statusCode, 200)
    const next = await api.createProduct({ name: 'Mug' })
    assert.notEqual(next.slug, 'mug')
    assert.ok(isSlugOf(next.slug, 'mug'), next.slug)
  })

  it('never generates a hand-set slug after it was changed again', async (t) => {
    const api = await buildTestApi(t, dialect)
    const x = await api.createProduct({ name: 'Straw thing' })
    assert.equal((await api.patch(`/products/${x.id}`, { slug: 'summer-hat' })).statusCode, 200)
    assert.equal((await api.patch(`/products/${x.id}`, { slug: 'straw-hat' })).statusCode, 200)
    const hat = await api.createProduct({ name: 'Summer Hat' })
    assert.notEqual(hat.slug, 'summer-hat')
  })

  it('lets a product take back its old slug by hand', async (t) => {
    const api = await buildTestApi(t, dialect)
    const mug = await api.createProduct({ name: 'Mug' })
    assert.equal((await api.patch(`/products/${mug.id}`, { slug: 'coffee-mug' })).statusCode, 200)
    const res = await api.patch(`/products/${mug.id}`, { slug: 'mug' })
    assert.equal(res.statusCode, 200, res.body)
    assert.equal(res.json().data.slug, 'mug')
  })

  it("never generates a deleted product's slug again, but it can be set by hand", async (t) => {
    const api = await buildTestApi(t, dialect)
    const mug = await api.createProduct({ name: 'Mug' })
    assert.equal(mug.slug, 'mug')
    const deleted = await api.delete(`/products/${mug.id}`)
    assert.equal(deleted.statusCode, 200, deleted.body)
    const next = await api.createProduct({ name: 'Mug' })
    assert.notEqual(next.slug, 'mug')
    assert.ok(isSlugOf(next.slug, 'mug'), next.slug)
    const res = await api.patch(`/products/${next.id}`, { slug: 'mug' })
    assert.equal(res.statusCode, 200, res.body)
    assert.equal(res.json().data.slug, 'mug')
    assert.equal((await readProduct(api, next.id)).slug, 'mug')
  })

  it('frees a slug changed by hand for another product to set by hand', async (t) => {
    const api = await buildTestApi(t, dialect)
    const first = await api.createProduct({ name: 'Mug' })
    const second = await api.createProduct({ name: 'Cup' })
    assert.equal((await api.patch(`/products/${first.id}`, { slug: 'old-mug' })).statusCode, 200)
    const res = await api.patch(`/products/${second.id}`, { slug: 'mug' })
    assert.equal(res.statusCode, 200, res.body)
    assert.equal(res.json().data.slug, 'mug')
  })
})

describeEachDialect('PATCH /products/:id: scopes and isolation', (dialect) => {
  it('refuses a read-only key with 403 forbidden, whatever the body, and changes nothing', async (t) => {
    const api = await buildTestApi(t, dialect)
    const product = await api.createProduct({ name: 'Mug' })
    const readKey = await api.newKey({ scopes: ['read'] })
    const cases: [string, unknown][] = [
      ['a valid body', { name: 'Renamed' }],
      ['broken JSON', '{"name": '],
      ['an empty body', ''],
      ['an invalid field', { price: -1 }],
      ['null name', { name: null }],
    ]
    for (const [label, body] of cases) {
      await t.test(`read key with ${label}: 403`, async () => {
        const res = await api.patch(`/products/${product.id}`, body, { key: readKey })
        expectError(res, 403, 'forbidden')
      })
    }
    await t.test('read key on an unknown id: 403', async () => {
      expectError(
        await api.patch(`/products/${randomUUID()}`, { name: 'x' }, { key: readKey }),
        403,
        'forbidden',
      )
    })
    assert.deepEqual(await readProduct(api, product.id), product)
  })

  it('refuses a request without a valid key with 401', async (t) => {
    const api = await buildTestApi(t, dialect)
    const product = await api.createProduct({ name: 'Mug' })
    const res = await api.patch(`/products/${product.id}`, { name: 'x' }, { key: 'ck_not_a_key' })
    expectError(res, 401, 'unauthorized')
    assert.deepEqual(await readProduct(api, product.id), product)
  })

  it("answers 404 for another store's product and leaves it as it was", async (t) => {
    const api = await buildTestApi(t, dialect)
    const otherKey = await api.newKey({ store: 'store-b' })
    const theirs = await api.createProduct({ name: 'Their Mug' }, otherKey)
    expectError(await api.patch(`/products/${theirs.id}`, { name: 'Mine now' }), 404, 'not_found')
    expectError(await api.patch(`/products/${theirs.id}`, {}), 404, 'not_found')
    assert.deepEqual(await readProduct(api, theirs.id, otherKey), theirs)
  })

  it('answers 404 for unknown and malformed ids', async (t) => {
    const api = await buildTestApi(t, dialect)
    for (const id of [randomUUID(), 'not-a-uuid', '123', `${randomUUID()}x`, 'null']) {
      await t.test(`PATCH /products/${id}: 404`, async () => {
        expectError(await api.patch(`/products/${id}`, { name: 'x' }), 404, 'not_found')
      })
    }
  })

  it('checks the body before existence: an invalid body on an unknown id is 400', async (t) => {
    const api = await buildTestApi(t, dialect)
    expectInvalid(
      await api.patch(`/products/${randomUUID()}`, { price: -1 }),
      'price',
      'unknown id',
    )
  })
})
