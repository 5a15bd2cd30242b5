import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { it } from 'node:test'
import type { LightMyRequestResponse } from 'fastify'
import {
  addVariant,
  buildTestApi,
  describeEachDialect,
  expectError,
  type TestApi,
} from './helpers.js'

type Json = Record<string, any>
type Answer = LightMyRequestResponse

/** Asserts a 200 whose ETag header is the record's version, quoted; returns the record. */
function expectTagged(res: Answer, label: string): Json {
  assert.equal(res.statusCode, 200, `${label}: ${res.body}`)
  const record = res.json().data
  assert.equal(typeof record.version, 'number', `${label}: version`)
  assert.equal(res.headers.etag, `"${record.version}"`, `${label}: ETag`)
  return record
}

/** The JSON body of a GET that must answer 200 (a snapshot, to show that nothing changed). */
async function read(api: TestApi, path: string): Promise<unknown> {
  const res = await api.get(path)
  assert.equal(res.statusCode, 200, `GET ${path}: ${res.body}`)
  return res.json()
}

/** A GET with If-None-Match; its answer, a 304 included, is checked against the document. */
function getIfNoneMatch(api: TestApi, path: string, value: string, key = api.key) {
  return api.request('GET', path, { key, headers: { 'if-none-match': value } })
}

function expectNotModified(res: Answer, version: number, label: string): void {
  assert.equal(res.statusCode, 304, `${label}: ${res.statusCode} ${res.body}`)
  assert.equal(res.headers.etag, `"${version}"`, `${label}: ETag`)
  assert.equal(res.body, '', `${label}: body`)
}

/** A record made for one test, changed once since creation so that "1" is an old version. */
interface Made {
  path: string
  version: number
  /** What GET shows of it (and, for a variant, of its product). */
  snapshot(): Promise<unknown>
}

/** One of the four writes that take If-Match. */
interface Target {
  label: string
  make(api: TestApi): Promise<Made>
  send(
    api: TestApi,
    path: string,
    options: { headers?: Record<string, string>; key?: string },
  ): Promise<Answer>
  /** Asserts that the write went through. */
  expectDone(api: TestApi, made: Made, res: Answer): Promise<void>
}

/** A product at version 2: created, then a variant added. */
async function makeProduct(api: TestApi): Promise<Made> {
  const product = await api.createProduct({ name: 'T-Shirt', price: 20 })
  await addVariant(api, product.id, { name: 'Red', sku: `SKU-${randomUUID()}` })
  const path = `/products/${product.id}`
  const version = expectTagged(await api.get(path), 'GET product').version
  assert.equal(version, 2, 'a product with one variant added is at version 2')
  return { path, version, snapshot: () => read(api, path) }
}

/** A variant at version 2 (created, then patched once); its product is then at version 3. */
async function makeVariant(api: TestApi): Promise<Made> {
  const product = await api.createProduct({ name: 'T-Shirt', price: 20 })
  const variant = await addVariant(api, product.id, { name: 'Red', options: { c: 'red' } })
  const path = `/products/${product.id}/variants/${variant.id}`
  const version = expectTagged(await api.patch(path, { name: 'Red once' }), 'PATCH variant').version
  assert.equal(version, 2, 'a variant patched once is at version 2')
  const productVersion = (await read(api, `/products/${product.id}`)) as Json
  assert.equal(productVersion.data.version, 3, 'its product is at version 3')
  return {
    path,
    version,
    snapshot: async () => [await read(api, `/products/${product.id}`), await read(api, path)],
  }
}

async function expectPatched(api: TestApi, made: Made, res: Answer): Promise<void> {
  const record = expectTagged(res, `PATCH ${made.path}`)
  assert.equal(record.name, 'Renamed')
  assert.equal(record.version, made.version + 1)
  assert.equal(((await read(api, made.path)) as Json).data.name, 'Renamed')
}

async function expectRemoved(api: TestApi, made: Made, res: Answer): Promise<void> {
  assert.equal(res.statusCode, 200, `DELETE ${made.path}: ${res.body}`)
  assert.equal(res.json().data.deleted, true)
  expectError(await api.get(made.path), 404, 'not_found')
}

const TARGETS: Target[] = [
  {
    label: 'PATCH /products/:id',
    make: makeProduct,
    send: (api, path, options) => api.patch(path, { name: 'Renamed' }, options),
    expectDone: expectPatched,
  },
  {
    label: 'DELETE /products/:id',
    make: makeProduct,
    send: (api, path, options) => api.delete(path, options),
    expectDone: expectRemoved,
  },
  {
    label: 'PATCH /products/:id/variants/:variantId',
    make: makeVariant,
    send: (api, path, options) => api.patch(path, { name: 'Renamed' }, options),
    expectDone: expectPatched,
  },
  {
    label: 'DELETE /products/:id/variants/:variantId',
    make: makeVariant,
    send: (api, path, options) => api.delete(path, options),
    expectDone: expectRemoved,
  },
]

/** Conditions that are neither `*` nor a list of quoted entity tags: `3` is the usual slip. */
const MALFORMED_CONDITIONS = (version: number) => [
  `${version}`,
  `'${version}'`,
  `"${version}`,
  `"${version}", ${version}`,
  `W/${version}`,
  '',
  ' , ',
  '**',
]

/** A 400 validation_failed naming the header and showing the quoted form. */
function expectMalformedCondition(
  res: LightMyRequestResponse,
  header: string,
  value: string,
): void {
  try {
    const error = expectError(res, 400, 'validation_failed')
    assert.equal(error.details?.length, 1)
    assert.equal(error.details?.[0]?.field, header)
    assert.match(error.details?.[0]?.message ?? '', /"3"/)
  } catch (cause) {
    throw new Error(`${header}: ${JSON.stringify(value)}: ${(cause as Error).message}`)
  }
}

/** Sends If-Match values that must not match, one by one: each 412, and nothing changes. */
async function expectEachRefused(
  api: TestApi,
  target: Target,
  made: Made,
  values: string[],
): Promise<void> {
  const before = await made.snapshot()
  for (const value of values) {
    const res = await target.send(api, made.path, { headers: { 'if-match': value } })
    try {
      expectError(res, 412, 'precondition_failed')
    } catch (cause) {
      throw new Error(`If-Match: ${value}: ${(cause as Error).message}`)
    }
    assert.deepEqual(await made.snapshot(), before, `If-Match: ${value} changed the record`)
  }
}

describeEachDialect('ETag', (dialect) => {
  it('is "<version>" on POST, GET and PATCH answers of products and variants', async (t) => {
    const api = await buildTestApi(t, dialect)
    const created = await api.post('/products', { name: 'T-Shirt' })
    assert.equal(expectTagged(created, 'POST product').version, 1)
    const product = created.json().data
    const added = await api.post(`/products/${product.id}/variants`, { name: 'Red' })
    assert.equal(expectTagged(added, 'POST variant').version, 1)
    const variantPath = `/products/${product.id}/variants/${added.json().data.id}`
    const productPath = `/products/${product.id}`
    // The product moved with the variant added.
    assert.equal(expectTagged(await api.get(productPath), 'GET product').version, 2)
    assert.equal(expectTagged(await api.get(variantPath), 'GET variant').version, 1)
    const patched = await api.patch(productPath, { name: 'Tee' })
    assert.equal(expectTagged(patched, 'PATCH product').version, 3)
    assert.equal(expectTagged(await api.get(productPath), 'GET product').version, 3)
    const patchedVariant = await api.patch(variantPath, { name: 'Crimson' })
    assert.equal(expectTagged(patchedVariant, 'PATCH variant').version, 2)
    assert.equal(expectTagged(await api.get(variantPath), 'GET variant').version, 2)
    assert.equal(expectTagged(await api.get(productPath), 'GET product').version, 4)
  })

  it('is on replayed answers too, as on the first', async (t) => {
    const api = await buildTestApi(t, dialect)
    const headers = { 'idempotency-key': 'create-1' }
    const body = { name: 'T-Shirt' }
    const first = await api.request('POST', '/products', { body, headers })
    assert.equal(expectTagged(first, 'first POST').version, 1)
    const replay = await api.request('POST', '/products', { body, headers })
    assert.equal(replay.headers['idempotent-replayed'], 'true')
    assert.equal(expectTagged(replay, 'replayed POST').version, 1)
    assert.equal(replay.headers.etag, first.headers.etag)
  })
})

describeEachDialect('If-Match', (dialect) => {
  for (const target of TARGETS) {
    it(`${target.label}: the current version goes through`, async (t) => {
      const api = await buildTestApi(t, dialect)
      const made = await target.make(api)
      const res = await target.send(api, made.path, {
        headers: { 'if-match': `"${made.version}"` },
      })
      await target.expectDone(api, made, res)
    })

    it(`${target.label}: an old or unknown version is 412 precondition_failed, nothing changes`, async (t) => {
      const api = await buildTestApi(t, dialect)
      const made = await target.make(api)
      // "3" is a version the record never had; for a variant it is its product's version.
      // Past the version column's range too (PostgreSQL's integer): no record has it.
      await expectEachRefused(api, target, made, [
        '"1"',
        '"3"',
        '"0"',
        '"99"',
        '"2147483648"',
        '"99999999999"',
        '"999999999999999"',
      ])
      // The record is still there to be written with the right version.
      const res = await target.send(api, made.path, {
        headers: { 'if-match': `"${made.version}"` },
      })
      await target.expectDone(api, made, res)
    })

    it(`${target.label}: a list that holds the current version goes through; one without is 412`, async (t) => {
      const api = await buildTestApi(t, dialect)
      const refused = await target.make(api)
      await expectEachRefused(api, target, refused, ['"1", "3"', '"0","1","4"'])
      for (const list of ['"1", "2"', '"2","7"', '"5" , "2" , "9"', '"99999999999", "2"']) {
        const made = await target.make(api)
        const res = await target.send(api, made.path, { headers: { 'if-match': list } })
        try {
          await target.expectDone(api, made, res)
        } catch (cause) {
          throw new Error(`If-Match: ${list}: ${(cause as Error).message}`)
        }
      }
    })

    it(`${target.label}: * goes through`, async (t) => {
      const api = await buildTestApi(t, dialect)
      const made = await target.make(api)
      const res = await target.send(api, made.path, { headers: { 'if-match': '*' } })
      await target.expectDone(api, made, res)
    })

    it(`${target.label}: a weak tag of the current version never matches: 412`, async (t) => {
      const api = await buildTestApi(t, dialect)
      const made = await target.make(api)
      const current = made.version
      await expectEachRefused(api, target, made, [`W/"${current}"`, `W/"1", W/"${current}"`])
    })

    it(`${target.label}: a value that is not * nor a list of quoted tags is 400 saying how to write one, nothing changes`, async (t) => {
      const api = await buildTestApi(t, dialect)
      const made = await target.make(api)
      const before = await made.snapshot()
      const current = made.version
      for (const value of MALFORMED_CONDITIONS(current)) {
        const res = await target.send(api, made.path, { headers: { 'if-match': value } })
        expectMalformedCondition(res, 'If-Match', value)
        assert.deepEqual(await made.snapshot(), before, `If-Match: ${value} changed the record`)
      }
    })
  }
})

describeEachDialect('If-Match: the order of the checks', (dialect) => {
  it('answers 404 before 412: an unknown record with a wrong If-Match is 404', async (t) => {
    const api = await buildTestApi(t, dialect)
    const otherStore = await api.newKey({ store: 'store-b' })
    const product = await api.createProduct({ name: 'T-Shirt' })
    const variant = await addVariant(api, product.id, { name: 'Red' })
    const theirs = await api.createProduct({ name: 'Theirs' }, otherStore)
    const paths = [
      `/products/${randomUUID()}`,
      `/products/not-a-uuid`,
      `/products/${theirs.id}`,
      `/products/${product.id}/variants/${randomUUID()}`,
      `/products/${randomUUID()}/variants/${variant.id}`,
      `/products/${theirs.id}/variants/${variant.id}`,
    ]
    for (const path of paths) {
      for (const value of ['"99"', '*']) {
        const headers = { 'if-match': value }
        const label = `${path} with If-Match ${value}`
        try {
          expectError(await api.patch(path, { name: 'Renamed' }, { headers }), 404, 'not_found')
          expectError(await api.delete(path, { headers }), 404, 'not_found')
        } catch (cause) {
          throw new Error(`${label}: ${(cause as Error).message}`)
        }
      }
    }
  })

  it('answers 412 before 409 invalid_transition: archived -> active with a stale If-Match', async (t) => {
    const api = await buildTestApi(t, dialect)
    const product = await api.createProduct({ name: 'Old', status: 'archived' })
    await addVariant(api, product.id, { name: 'Red' })
    const path = `/products/${product.id}`
    const before = await read(api, path)
    const stale = { 'if-match': '"1"' }
    expectError(
      await api.patch(path, { status: 'active' }, { headers: stale }),
      412,
      'precondition_failed',
    )
    assert.deepEqual(await read(api, path), before)
    // With the current version, the transition itself is what is refused.
    const current = { 'if-match': '"2"' }
    expectError(
      await api.patch(path, { status: 'active' }, { headers: current }),
      409,
      'invalid_transition',
    )
    assert.deepEqual(await read(api, path), before)
  })

  it('answers 412 before 409 duplicate_slug, duplicate_sku and duplicate_options', async (t) => {
    const api = await buildTestApi(t, dialect)
    await api.createProduct({ name: 'Taken' })
    const product = await api.createProduct({ name: 'Free' })
    await addVariant(api, product.id, { name: 'Red', sku: 'RED', options: { c: 'red' } })
    const blue = await addVariant(api, product.id, {
      name: 'Blue',
      sku: 'BLUE',
      options: { c: 'blue' },
    })
    const productPath = `/products/${product.id}`
    const variantPath = `/products/${product.id}/variants/${blue.id}`
    const before = await read(api, productPath)
    const cases: [string, Record<string, unknown>, string][] = [
      [productPath, { slug: 'taken' }, 'duplicate_slug'],
      [variantPath, { sku: 'RED' }, 'duplicate_sku'],
      [variantPath, { options: { c: 'red' } }, 'duplicate_options'],
    ]
    for (const [path, body, conflict] of cases) {
      const stale = { 'if-match': '"99"' }
      const label = `${path} ${JSON.stringify(body)}`
      try {
        expectError(await api.patch(path, body, { headers: stale }), 412, 'precondition_failed')
        const current = { 'if-match': path === productPath ? '"3"' : '"1"' }
        expectError(await api.patch(path, body, { headers: current }), 409, conflict)
      } catch (cause) {
        throw new Error(`${label}: ${(cause as Error).message}`)
      }
    }
    assert.deepEqual(await read(api, productPath), before)
  })

  it('answers 400 before 412: an invalid body with a stale If-Match is 400', async (t) => {
    const api = await buildTestApi(t, dialect)
    const product = await api.createProduct({ name: 'T-Shirt' })
    const variant = await addVariant(api, product.id, { name: 'Red' })
    const productPath = `/products/${product.id}`
    const variantPath = `${productPath}/variants/${variant.id}`
    const before = await read(api, productPath)
    const headers = { 'if-match': '"99"' }
    const cases: [string, unknown, string][] = [
      [productPath, { price: -1 }, 'validation_failed'],
      [productPath, { name: null }, 'validation_failed'],
      [productPath, { status: 'gone' }, 'validation_failed'],
      [productPath, '{"name": ', 'invalid_json'],
      [variantPath, { position: -1 }, 'validation_failed'],
      [variantPath, { price: '1.00' }, 'validation_failed'],
      [variantPath, '[', 'invalid_json'],
    ]
    for (const [path, body, code] of cases) {
      const res = await api.patch(path, body, { headers })
      try {
        expectError(res, 400, code)
      } catch (cause) {
        throw new Error(`${path} ${JSON.stringify(body)}: ${(cause as Error).message}`)
      }
    }
    assert.deepEqual(await read(api, productPath), before)
  })

  it('answers 403 before everything: a read key with a bad body, stale If-Match, unknown id', async (t) => {
    const api = await buildTestApi(t, dialect)
    const reader = await api.newKey({ scopes: ['read'] })
    const product = await api.createProduct({ name: 'T-Shirt' })
    const variant = await addVariant(api, product.id, { name: 'Red' })
    const productPath = `/products/${product.id}`
    const before = await read(api, productPath)
    const paths = [
      productPath,
      `${productPath}/variants/${variant.id}`,
      `/products/${randomUUID()}`,
      `${productPath}/variants/${randomUUID()}`,
    ]
    for (const path of paths) {
      for (const value of ['"99"', '"1"', '*']) {
        const options = { key: reader, headers: { 'if-match': value } }
        const label = `${path} with If-Match ${value}`
        try {
          expectError(await api.patch(path, { price: -1 }, options), 403, 'forbidden')
          expectError(await api.patch(path, { name: 'Renamed' }, options), 403, 'forbidden')
          expectError(await api.delete(path, options), 403, 'forbidden')
        } catch (cause) {
          throw new Error(`${label}: ${(cause as Error).message}`)
        }
      }
    }
    assert.deepEqual(await read(api, productPath), before)
  })
})

/** GET of one product or one variant, each at version 2 with "1" an old version. */
const READ_TARGETS: { label: string; make(api: TestApi): Promise<Made> }[] = [
  { label: 'GET /products/:id', make: makeProduct },
  { label: 'GET /products/:id/variants/:variantId', make: makeVariant },
]

describeEachDialect('If-None-Match', (dialect) => {
  for (const target of READ_TARGETS) {
    it(`${target.label}: the current version is 304 with the ETag and no body`, async (t) => {
      const api = await buildTestApi(t, dialect)
      const made = await target.make(api)
      const res = await getIfNoneMatch(api, made.path, `"${made.version}"`)
      expectNotModified(res, made.version, 'current')
    })

    it(`${target.label}: an old or unknown version is 200 with the record and its ETag`, async (t) => {
      const api = await buildTestApi(t, dialect)
      const made = await target.make(api)
      const expected = await read(api, made.path)
      for (const value of ['"1"', '"3"', '"99"', '"1", "3"']) {
        const res = await getIfNoneMatch(api, made.path, value)
        expectTagged(res, `If-None-Match: ${value}`)
        assert.deepEqual(res.json(), expected, `If-None-Match: ${value}`)
      }
    })

    it(`${target.label}: * is 304`, async (t) => {
      const api = await buildTestApi(t, dialect)
      const made = await target.make(api)
      expectNotModified(await getIfNoneMatch(api, made.path, '*'), made.version, '*')
    })

    it(`${target.label}: a list that holds the current version is 304`, async (t) => {
      const api = await buildTestApi(t, dialect)
      const made = await target.make(api)
      for (const list of ['"1", "2"', '"2","7"', '"5" , "2"']) {
        expectNotModified(await getIfNoneMatch(api, made.path, list), made.version, list)
      }
    })

    it(`${target.label}: a value that is not * nor a list of quoted tags is 400 saying how to write one`, async (t) => {
      const api = await buildTestApi(t, dialect)
      const made = await target.make(api)
      for (const value of MALFORMED_CONDITIONS(made.version)) {
        expectMalformedCondition(
          await getIfNoneMatch(api, made.path, value),
          'If-None-Match',
          value,
        )
      }
    })

    it(`${target.label}: a weak tag of the current version is 304 (weak comparison)`, async (t) => {
      const api = await buildTestApi(t, dialect)
      const made = await target.make(api)
      const value = `W/"${made.version}"`
      expectNotModified(await getIfNoneMatch(api, made.path, value), made.version, value)
    })
  }

  it("answers 404, not 304, for an unknown record or another store's, whatever If-None-Match", async (t) => {
    const api = await buildTestApi(t, dialect)
    const otherStore = await api.newKey({ store: 'store-b' })
    const product = await api.createProduct({ name: 'T-Shirt' })
    const variant = await addVariant(api, product.id, { name: 'Red' })
    const paths = [
      `/products/${randomUUID()}`,
      `/products/${product.id}/variants/${randomUUID()}`,
      `/products/${randomUUID()}/variants/${variant.id}`,
    ]
    for (const path of paths) {
      for (const value of ['*', '"1"']) {
        expectError(await getIfNoneMatch(api, path, value), 404, 'not_found')
      }
    }
    for (const path of [
      `/products/${product.id}`,
      `/products/${product.id}/variants/${variant.id}`,
    ]) {
      expectError(await getIfNoneMatch(api, path, '*', otherStore), 404, 'not_found')
    }
  })

  it("changes the product's ETag when one of its variants is patched or deleted", async (t) => {
    const api = await buildTestApi(t, dialect)
    const product = await api.createProduct({ name: 'T-Shirt' })
    const red = await addVariant(api, product.id, { name: 'Red' })
    const blue = await addVariant(api, product.id, { name: 'Blue' })
    const path = `/products/${product.id}`
    const tagOf = async () => String((await api.get(path)).headers.etag)
    const before = await tagOf()
    expectNotModified(await getIfNoneMatch(api, path, before), 3, 'before')

    const patched = await api.patch(`${path}/variants/${red.id}`, { name: 'Crimson' })
    assert.equal(patched.statusCode, 200, patched.body)
    const afterPatch = await getIfNoneMatch(api, path, before)
    const record = expectTagged(afterPatch, 'old ETag after the variant was patched')
    assert.equal(record.variants.find((v: Json) => v.id === red.id).name, 'Crimson')
    const patchedTag = String(afterPatch.headers.etag)
    assert.notEqual(patchedTag, before)
    expectNotModified(await getIfNoneMatch(api, path, patchedTag), 4, 'new ETag')

    const deleted = await api.delete(`${path}/variants/${blue.id}`)
    assert.equal(deleted.statusCode, 200, deleted.body)
    const afterDelete = await getIfNoneMatch(api, path, patchedTag)
    const after = expectTagged(afterDelete, 'old ETag after the variant was deleted')
    assert.deepEqual(
      after.variants.map((v: Json) => v.id),
      [red.id],
    )
    assert.notEqual(afterDelete.headers.etag, patchedTag)
  })
})
