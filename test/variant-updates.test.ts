import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { it } from 'node:test'
import {
  addVariant,
  buildTestApi,
  describeEachDialect,
  expectError,
  type TestApi,
} from './helpers.js'
import {
  OPTIONS,
  STORED_OPTIONS,
  VARIANT_FIELDS,
  expectChanged,
  expectInvalid,
  expectNoChange,
  expectUntouched,
  integer,
  money,
  pause,
  runCreateCases,
  runFieldCases,
  trimmedString,
  type Answer,
  type FieldSpec,
  type Json,
  type Subject,
} from './update-cases.js'

/** Every field a variant can be created with, none left at its default. */
const CREATED = {
  name: 'Red',
  sku: 'V-1',
  barcode: 'VB-1',
  price: 10,
  compare_at_price: 15,
  options: STORED_OPTIONS,
  position: 3,
  weight_grams: 500,
}

const MAX_POSITION = 2_147_483_647

/** A variant as the product's variant list shows it, failing unless it is there. */
async function readVariant(api: TestApi, productId: string, id: string, key = api.key) {
  const res = await api.get(`/products/${productId}/variants`, key)
  assert.equal(res.statusCode, 200, res.body)
  const variant = res.json().data.find((v: Json) => v.id === id)
  assert.ok(variant, `variant ${id} is not listed under product ${productId}`)
  return variant as Json
}

/** A product as GET shows it, without its variants. */
async function readProduct(api: TestApi, id: string, key = api.key): Promise<Json> {
  const res = await api.get(`/products/${id}`, key)
  assert.equal(res.statusCode, 200, `GET /products/${id}: ${res.body}`)
  const { variants: _variants, ...product } = res.json().data
  return product
}

/** A variant of a product in a store of its own, with that store's PATCH and read. */
async function variantSubject(api: TestApi, body: Json = CREATED): Promise<Subject> {
  const key = await api.newKey({ store: `store-${randomUUID()}` })
  const product = await api.createProduct({ name: 'Tee', price: 20 }, key)
  const record = await addVariant(api, product.id, body, key)
  const path = `/products/${product.id}/variants/${record.id}`
  return {
    record,
    patch: (patch, headers) => api.patch(path, patch, { key, ...(headers && { headers }) }),
    read: () => readVariant(api, product.id, record.id, key),
  }
}

const patchVariant = (api: TestApi, variant: Json, body: unknown): Promise<Answer> =>
  api.patch(`/products/${variant.productId}/variants/${variant.id}`, body)

/** The merge-patch cases of each variant field, from the contract's rules. */
const VARIANT_SPECS: FieldSpec[] = [
  trimmedString('name', 'name', 'Red', 255, true),
  trimmedString('sku', 'sku', 'V-1', 255),
  trimmedString('barcode', 'barcode', 'VB-1', 255),
  money('price', 'price', 10, true),
  money('compare_at_price', 'compareAtPrice', 15, false),
  OPTIONS,
  integer('position', 'position', 3, MAX_POSITION, true),
  integer('weight_grams', 'weightGrams', 500, 1_000_000_000, false),
]

describeEachDialect('POST /products/:id/variants: weight_grams and version', (dialect) => {
  it('returns weightGrams as sent and version 1, and the list shows the same record', async (t) => {
    const api = await buildTestApi(t, dialect)
    const product = await api.createProduct({ name: 'Tee' })
    const variant = await addVariant(api, product.id, CREATED)
    assert.deepEqual(Object.keys(variant).sort(), VARIANT_FIELDS)
    assert.equal(variant.weightGrams, 500)
    assert.equal(variant.version, 1)
    assert.equal('weight_grams' in variant, false, 'weight_grams is returned camelCase')
    assert.deepEqual(await readVariant(api, product.id, variant.id), variant)
  })

  it('answers weightGrams null when it is not sent or sent null', async (t) => {
    const api = await buildTestApi(t, dialect)
    const product = await api.createProduct({ name: 'Tee' })
    for (const body of [{ name: 'Plain' }, { name: 'Null', weight_grams: null }]) {
      const variant = await addVariant(api, product.id, body)
      assert.deepEqual(Object.keys(variant).sort(), VARIANT_FIELDS, JSON.stringify(body))
      assert.equal(variant.weightGrams, null, JSON.stringify(body))
      assert.equal(variant.version, 1, JSON.stringify(body))
    }
  })

  it('weight_grams: in bounds accepted, wrong type and out of bounds 400 validation_failed', async (t) => {
    const api = await buildTestApi(t, dialect)
    const product = await api.createProduct({ name: 'Tee' })
    const spec = integer('weight_grams', 'weightGrams', 500, 1_000_000_000, false)
    await runCreateCases(
      t,
      (value) =>
        api.post(`/products/${product.id}/variants`, { name: 'Bounds', weight_grams: value }),
      spec,
    )
  })
})

describeEachDialect(
  'PATCH /products/:id/variants/:variantId: merge-patch cases per field',
  (dialect) => {
    for (const spec of VARIANT_SPECS) {
      it(`${spec.field}: left out, replaced, null, wrong type, out of bounds, as stored`, async (t) => {
        const api = await buildTestApi(t, dialect)
        const otherChange = spec.field === 'name' ? { barcode: 'OTHER' } : { name: 'Renamed' }
        await runFieldCases(t, () => variantSubject(api), spec, otherChange)
      })
    }
  },
)

describeEachDialect('PATCH /products/:id/variants/:variantId', (dialect) => {
  it('answers 200 with the whole variant after the change', async (t) => {
    const api = await buildTestApi(t, dialect)
    const subject = await variantSubject(api)
    await pause()
    const res = await subject.patch({ price: 11 })
    const variant = await expectChanged(subject, res, 'PATCH price')
    assert.deepEqual(Object.keys(res.json()), ['data'])
    assert.deepEqual(Object.keys(variant).sort(), VARIANT_FIELDS)
    assert.deepEqual(variant, {
      ...subject.record,
      price: 11,
      version: 2,
      updatedAt: variant.updatedAt,
    })
  })

  it('changes several fields in one step: version + 1', async (t) => {
    const api = await buildTestApi(t, dialect)
    const subject = await variantSubject(api)
    await pause()
    const patch = { name: 'Blue', options: { color: 'Blue' }, sku: null, weight_grams: 600 }
    const variant = await expectChanged(subject, await subject.patch(patch), 'PATCH four fields')
    assert.equal(variant.name, 'Blue')
    assert.deepEqual(variant.options, { color: 'Blue' })
    assert.equal(variant.sku, null)
    assert.equal(variant.weightGrams, 600)
  })

  it('changes only the variant patched, not its siblings', async (t) => {
    const api = await buildTestApi(t, dialect)
    const product = await api.createProduct({ name: 'Tee' })
    const a = await addVariant(api, product.id, { name: 'A', sku: 'A', options: { s: 'A' } })
    const b = await addVariant(api, product.id, { name: 'B', sku: 'B', options: { s: 'B' } })
    const res = await patchVariant(api, a, { name: 'A2', price: 3 })
    assert.equal(res.statusCode, 200, res.body)
    assert.deepEqual(await readVariant(api, product.id, b.id), b)
  })

  it('an empty patch {} answers 200 with the variant as it is: same version, same updatedAt', async (t) => {
    const api = await buildTestApi(t, dialect)
    const subject = await variantSubject(api)
    await pause()
    await expectNoChange(subject, await subject.patch({}), 'PATCH {}')
  })

  it('a patch of every field with its stored value changes nothing', async (t) => {
    const api = await buildTestApi(t, dialect)
    const subject = await variantSubject(api)
    await pause()
    await expectNoChange(subject, await subject.patch(CREATED), 'PATCH of the stored values')
  })

  it('takes its own options in another key order as no change, keeping the stored order', async (t) => {
    const api = await buildTestApi(t, dialect)
    const product = await api.createProduct({ name: 'Shirt' })
    const variant = await addVariant(api, product.id, {
      name: 'M / Red',
      options: { size: 'M', color: 'Red' },
    })
    await pause()
    const res = await api.patch(`/products/${product.id}/variants/${variant.id}`, {
      options: { color: 'Red', size: 'M' },
    })
    assert.equal(res.statusCode, 200, res.body)
    assert.deepEqual(res.json().data, variant)
    assert.deepEqual(Object.keys(res.json().data.options), ['size', 'color'])
  })

  it('ignores fields it does not define (id, product_id, productId, version)', async (t) => {
    const api = await buildTestApi(t, dialect)
    const subject = await variantSubject(api)
    const elsewhere = await api.createProduct({ name: 'Elsewhere' })
    await pause()
    const unknown = {
      id: randomUUID(),
      product_id: elsewhere.id,
      productId: elsewhere.id,
      version: 42,
      // (The camelCase spellings of request fields are refused instead: errors.test.ts.)
      created_at: '2000-01-01T00:00:00.000Z',
    }
    await expectNoChange(subject, await subject.patch(unknown), 'PATCH of unknown fields')
    await pause()
    const res = await subject.patch({ ...unknown, name: 'Renamed' })
    const variant = await expectChanged(subject, res, 'PATCH name with unknown fields')
    assert.equal(variant.id, subject.record.id)
    assert.equal(variant.productId, subject.record.productId)
  })

  for (const contentType of ['application/merge-patch+json', 'application/json']) {
    it(`accepts Content-Type ${contentType}`, async (t) => {
      const api = await buildTestApi(t, dialect)
      const subject = await variantSubject(api)
      await pause()
      const res = await subject.patch({ name: 'Patched' }, { 'content-type': contentType })
      assert.equal((await expectChanged(subject, res, contentType)).name, 'Patched')
    })
  }

  it('refuses broken JSON, an empty body and a body that is not JSON, changing nothing', async (t) => {
    const api = await buildTestApi(t, dialect)
    const subject = await variantSubject(api)
    expectError(await subject.patch('{"name": '), 400, 'invalid_json')
    expectError(await subject.patch(''), 400, 'invalid_json')
    const text = await subject.patch('{"name":"x"}', { 'content-type': 'text/plain' })
    expectError(text, 415, 'unsupported_media_type')
    await expectUntouched(subject, 'refused bodies')
  })
})

describeEachDialect(
  'PATCH /products/:id/variants/:variantId: sku and options conflicts',
  (dialect) => {
    it('refuses a sku another variant of the product has with 409 duplicate_sku, changing nothing', async (t) => {
      const api = await buildTestApi(t, dialect)
      const product = await api.createProduct({ name: 'Tee' })
      await addVariant(api, product.id, { name: 'A', sku: 'TEE-A' })
      const b = await addVariant(api, product.id, { name: 'B', sku: 'TEE-B' })
      for (const sku of ['TEE-A', '  TEE-A ']) {
        await t.test(`sku ${JSON.stringify(sku)}: 409 duplicate_sku`, async () => {
          const res = await patchVariant(api, b, { sku, name: 'Not applied' })
          expectError(res, 409, 'duplicate_sku')
          assert.deepEqual(await readVariant(api, product.id, b.id), b)
        })
      }
    })

    it('refuses a sku a variant of another product of the store has', async (t) => {
      const api = await buildTestApi(t, dialect)
      const other = await api.createProduct({ name: 'Other' })
      await addVariant(api, other.id, { name: 'Theirs', sku: 'SHARED' })
      const product = await api.createProduct({ name: 'Tee' })
      const mine = await addVariant(api, product.id, { name: 'Mine', sku: 'MINE' })
      expectError(await patchVariant(api, mine, { sku: 'SHARED' }), 409, 'duplicate_sku')
      assert.deepEqual(await readVariant(api, product.id, mine.id), mine)
    })

    it("takes a sku another store's variant has", async (t) => {
      const api = await buildTestApi(t, dialect)
      const otherKey = await api.newKey({ store: 'store-b' })
      const theirs = await api.createProduct({ name: 'Theirs' }, otherKey)
      await addVariant(api, theirs.id, { name: 'Theirs', sku: 'SHARED' }, otherKey)
      const product = await api.createProduct({ name: 'Tee' })
      const mine = await addVariant(api, product.id, { name: 'Mine', sku: 'MINE' })
      const res = await patchVariant(api, mine, { sku: 'SHARED' })
      assert.equal(res.statusCode, 200, res.body)
      assert.equal(res.json().data.sku, 'SHARED')
    })

    it("takes a product's sku: product skus are not checked", async (t) => {
      const api = await buildTestApi(t, dialect)
      const product = await api.createProduct({ name: 'Tee', sku: 'TEE' })
      const variant = await addVariant(api, product.id, { name: 'Plain', sku: 'PLAIN' })
      const res = await patchVariant(api, variant, { sku: 'TEE' })
      assert.equal(res.statusCode, 200, res.body)
      assert.equal(res.json().data.sku, 'TEE')
    })

    it('setting its own sku again is no change', async (t) => {
      const api = await buildTestApi(t, dialect)
      const subject = await variantSubject(api)
      await pause()
      await expectNoChange(subject, await subject.patch({ sku: 'V-1' }), 'PATCH own sku')
    })

    it('frees the old sku when a variant takes another', async (t) => {
      const api = await buildTestApi(t, dialect)
      const product = await api.createProduct({ name: 'Tee' })
      const a = await addVariant(api, product.id, { name: 'A', sku: 'FIRST' })
      const b = await addVariant(api, product.id, { name: 'B', sku: 'SECOND' })
      assert.equal((await patchVariant(api, a, { sku: 'RENAMED' })).statusCode, 200)
      const res = await patchVariant(api, b, { sku: 'FIRST' })
      assert.equal(res.statusCode, 200, res.body)
      assert.equal(res.json().data.sku, 'FIRST')
      const cleared = await addVariant(api, product.id, { name: 'C', sku: 'THIRD' })
      assert.equal((await patchVariant(api, cleared, { sku: null })).statusCode, 200)
      assert.equal((await addVariant(api, product.id, { name: 'D', sku: 'THIRD' })).sku, 'THIRD')
    })

    it("refuses another variant's options, in any key order, with 409 duplicate_options", async (t) => {
      const api = await buildTestApi(t, dialect)
      const product = await api.createProduct({ name: 'Tee' })
      await addVariant(api, product.id, { name: 'Red M', options: { color: 'Red', size: 'M' } })
      const blue = await addVariant(api, product.id, { name: 'Blue', options: { color: 'Blue' } })
      for (const options of [
        { color: 'Red', size: 'M' },
        { size: 'M', color: 'Red' },
      ]) {
        await t.test(`options ${JSON.stringify(options)}: 409 duplicate_options`, async () => {
          const res = await patchVariant(api, blue, { options, name: 'Not applied' })
          expectError(res, 409, 'duplicate_options')
          assert.deepEqual(await readVariant(api, product.id, blue.id), blue)
        })
      }
    })

    it("takes the options of another product's variant", async (t) => {
      const api = await buildTestApi(t, dialect)
      const other = await api.createProduct({ name: 'Other' })
      await addVariant(api, other.id, { name: 'Red', options: { color: 'Red' } })
      const product = await api.createProduct({ name: 'Tee' })
      const blue = await addVariant(api, product.id, { name: 'Blue', options: { color: 'Blue' } })
      const res = await patchVariant(api, blue, { options: { color: 'Red' } })
      assert.equal(res.statusCode, 200, res.body)
      assert.deepEqual(res.json().data.options, { color: 'Red' })
    })

    it('lets several variants have no options: {} and null are exempt', async (t) => {
      const api = await buildTestApi(t, dialect)
      const product = await api.createProduct({ name: 'Tee' })
      await addVariant(api, product.id, { name: 'Plain' })
      const red = await addVariant(api, product.id, { name: 'Red', options: { color: 'Red' } })
      const blue = await addVariant(api, product.id, { name: 'Blue', options: { color: 'Blue' } })
      const cleared = await patchVariant(api, red, { options: null })
      assert.equal(cleared.statusCode, 200, cleared.body)
      assert.deepEqual(cleared.json().data.options, {})
      const emptied = await patchVariant(api, blue, { options: {} })
      assert.equal(emptied.statusCode, 200, emptied.body)
      assert.deepEqual(emptied.json().data.options, {})
    })

    it('setting its own options again is no change', async (t) => {
      const api = await buildTestApi(t, dialect)
      const subject = await variantSubject(api, {
        ...CREATED,
        options: { color: 'Red', size: 'M' },
      })
      await pause()
      await expectNoChange(
        subject,
        await subject.patch({ options: { color: 'Red', size: 'M' } }),
        'PATCH own options',
      )
    })

    it('frees the old options when a variant takes others', async (t) => {
      const api = await buildTestApi(t, dialect)
      const product = await api.createProduct({ name: 'Tee' })
      const red = await addVariant(api, product.id, { name: 'Red', options: { color: 'Red' } })
      const blue = await addVariant(api, product.id, { name: 'Blue', options: { color: 'Blue' } })
      assert.equal((await patchVariant(api, red, { options: { color: 'Green' } })).statusCode, 200)
      const res = await patchVariant(api, blue, { options: { color: 'Red' } })
      assert.equal(res.statusCode, 200, res.body)
    })
  },
)

describeEachDialect("PATCH /products/:id/variants/:variantId: the product's version", (dialect) => {
  /** A product, a pause, and what GET shows of it. */
  async function start(api: TestApi) {
    const product = await api.createProduct({ name: 'Tee' })
    await pause()
    return product
  }

  /** Asserts the product's version moved by `by` since `before`, and updatedAt with it. */
  async function expectProductMoved(api: TestApi, before: Json, by: number, label: string) {
    const after = await readProduct(api, before.id)
    assert.equal(after.version, before.version + by, `${label}: product version`)
    if (by === 0) assert.equal(after.updatedAt, before.updatedAt, `${label}: product updatedAt`)
    else assert.ok(after.updatedAt > before.updatedAt, `${label}: product updatedAt moves`)
    return after
  }

  it("never moves a record's updatedAt back, whichever write commits last: it moves on", async (t) => {
    const api = await buildTestApi(t, dialect)
    const product = await start(api)
    const variant = await addVariant(api, product.id, { name: 'M', sku: 'M-1' })
    // As if a write that read the clock later had committed first.
    const later = '2999-01-01T00:00:00.000Z'
    for (const table of ['products', 'variants'] as const) {
      await api.database.kysely.updateTable(table).set({ updated_at: later }).execute()
    }
    const patched = await api.patch(`/products/${product.id}/variants/${variant.id}`, { name: 'L' })
    assert.equal(patched.statusCode, 200, patched.body)
    // Each change moves it on from the stored time, a millisecond at least.
    assert.equal(patched.json().data.updatedAt, '2999-01-01T00:00:00.001Z', 'variant')
    const touched = (await readProduct(api, product.id)).updatedAt
    assert.equal(touched, '2999-01-01T00:00:00.001Z', 'product, variant patched')
    await addVariant(api, product.id, { name: 'S' })
    const renamed = await api.patch(`/products/${product.id}`, { name: 'Shirt' })
    assert.equal(renamed.json().data.updatedAt, '2999-01-01T00:00:00.003Z', 'product, renamed')
    assert.equal(renamed.json().data.version, product.version + 4)
  })

  it('moves when a variant is added', async (t) => {
    const api = await buildTestApi(t, dialect)
    const product = await start(api)
    assert.equal(product.version, 1)
    await addVariant(api, product.id, { name: 'A' })
    await expectProductMoved(api, product, 1, 'variant added')
  })

  it('moves when a variant is patched with a real change', async (t) => {
    const api = await buildTestApi(t, dialect)
    const product = await start(api)
    const variant = await addVariant(api, product.id, { name: 'A', price: 5 })
    const before = await readProduct(api, product.id)
    await pause()
    assert.equal((await patchVariant(api, variant, { price: 6 })).statusCode, 200)
    await expectProductMoved(api, before, 1, 'variant patched')
  })

  it('does not move on a no-op variant patch', async (t) => {
    const api = await buildTestApi(t, dialect)
    const product = await start(api)
    const variant = await addVariant(api, product.id, { name: 'A', price: 5, sku: 'A' })
    const before = await readProduct(api, product.id)
    await pause()
    for (const patch of [{}, { price: 5 }, { sku: 'A', name: 'A' }]) {
      assert.equal((await patchVariant(api, variant, patch)).statusCode, 200)
      await expectProductMoved(api, before, 0, `no-op PATCH ${JSON.stringify(patch)}`)
    }
  })

  it('does not move on a refused variant patch (400, 409)', async (t) => {
    const api = await buildTestApi(t, dialect)
    const product = await start(api)
    await addVariant(api, product.id, { name: 'A', sku: 'A', options: { s: 'A' } })
    const b = await addVariant(api, product.id, { name: 'B', sku: 'B', options: { s: 'B' } })
    const before = await readProduct(api, product.id)
    await pause()
    expectInvalid(await patchVariant(api, b, { price: -1 }), 'price', 'price -1')
    expectError(await patchVariant(api, b, { sku: 'A' }), 409, 'duplicate_sku')
    expectError(await patchVariant(api, b, { options: { s: 'A' } }), 409, 'duplicate_options')
    await expectProductMoved(api, before, 0, 'refused patches')
  })

  it('moves when a variant is deleted', async (t) => {
    const api = await buildTestApi(t, dialect)
    const product = await start(api)
    const variant = await addVariant(api, product.id, { name: 'A' })
    const before = await readProduct(api, product.id)
    await pause()
    const res = await api.delete(`/products/${product.id}/variants/${variant.id}`)
    assert.equal(res.statusCode, 200, res.body)
    await expectProductMoved(api, before, 1, 'variant deleted')
  })

  it('counts each change once: add, patch, no-op, patch, delete end at 1 + 4', async (t) => {
    const api = await buildTestApi(t, dialect)
    const product = await start(api)
    const variant = await addVariant(api, product.id, { name: 'A' })
    assert.equal((await patchVariant(api, variant, { name: 'B' })).statusCode, 200)
    assert.equal((await patchVariant(api, variant, { name: 'B' })).statusCode, 200)
    const patched = await patchVariant(api, variant, { name: 'C' })
    assert.equal(patched.json().data.version, 3, 'the variant: 1 + two changes')
    const deleted = await api.delete(`/products/${product.id}/variants/${variant.id}`)
    assert.equal(deleted.statusCode, 200, deleted.body)
    assert.equal((await readProduct(api, product.id)).version, 5)
  })
})

describeEachDialect('PATCH /products/:id/variants/:variantId: scopes and isolation', (dialect) => {
  it('refuses a read-only key with 403 forbidden, whatever the body, and changes nothing', async (t) => {
    const api = await buildTestApi(t, dialect)
    const product = await api.createProduct({ name: 'Tee' })
    const variant = await addVariant(api, product.id, { name: 'A', sku: 'A' })
    const readKey = await api.newKey({ scopes: ['read'] })
    const path = `/products/${product.id}/variants/${variant.id}`
    const cases: [string, unknown][] = [
      ['a valid body', { name: 'B' }],
      ['broken JSON', '{"name": '],
      ['an empty body', ''],
      ['an invalid field', { position: -1 }],
    ]
    for (const [label, body] of cases) {
      await t.test(`read key with ${label}: 403`, async () => {
        expectError(await api.patch(path, body, { key: readKey }), 403, 'forbidden')
      })
    }
    assert.deepEqual(await readVariant(api, product.id, variant.id), variant)
  })

  it("answers 404 for another store's product or variant, leaving them as they were", async (t) => {
    const api = await buildTestApi(t, dialect)
    const otherKey = await api.newKey({ store: 'store-b' })
    const theirProduct = await api.createProduct({ name: 'Theirs' }, otherKey)
    const theirs = await addVariant(api, theirProduct.id, { name: 'T', sku: 'T' }, otherKey)
    const myProduct = await api.createProduct({ name: 'Mine' })
    const mine = await addVariant(api, myProduct.id, { name: 'M', sku: 'M' })
    const paths = [
      `/products/${theirProduct.id}/variants/${theirs.id}`,
      `/products/${myProduct.id}/variants/${theirs.id}`,
      `/products/${theirProduct.id}/variants/${mine.id}`,
    ]
    for (const path of paths) {
      await t.test(`PATCH ${path}: 404`, async () => {
        expectError(await api.patch(path, { name: 'Taken' }), 404, 'not_found')
      })
    }
    assert.deepEqual(await readVariant(api, theirProduct.id, theirs.id, otherKey), theirs)
    assert.deepEqual(await readVariant(api, myProduct.id, mine.id), mine)
  })

  it('answers 404 for a variant id under another product of the store', async (t) => {
    const api = await buildTestApi(t, dialect)
    const first = await api.createProduct({ name: 'First' })
    const second = await api.createProduct({ name: 'Second' })
    const variant = await addVariant(api, first.id, { name: 'A' })
    const res = await api.patch(`/products/${second.id}/variants/${variant.id}`, { name: 'Moved' })
    expectError(res, 404, 'not_found')
    assert.deepEqual(await readVariant(api, first.id, variant.id), variant)
  })

  it('answers 404 for unknown and malformed product and variant ids', async (t) => {
    const api = await buildTestApi(t, dialect)
    const product = await api.createProduct({ name: 'Tee' })
    const variant = await addVariant(api, product.id, { name: 'A' })
    for (const path of [
      `/products/${product.id}/variants/${randomUUID()}`,
      `/products/${product.id}/variants/not-a-uuid`,
      `/products/${product.id}/variants/42`,
      `/products/${randomUUID()}/variants/${variant.id}`,
      `/products/not-a-uuid/variants/${variant.id}`,
      `/products/not-a-uuid/variants/not-a-uuid`,
    ]) {
      await t.test(`PATCH ${path}: 404`, async () => {
        expectError(await api.patch(path, { name: 'B' }), 404, 'not_found')
      })
    }
  })

  it('checks the body before existence: an invalid body on an unknown variant is 400', async (t) => {
    const api = await buildTestApi(t, dialect)
    const product = await api.createProduct({ name: 'Tee' })
    const res = await api.patch(`/products/${product.id}/variants/${randomUUID()}`, { price: -1 })
    expectInvalid(res, 'price', 'unknown variant')
  })
})
