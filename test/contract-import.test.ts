import assert from 'node:assert/strict'
import { it } from 'node:test'
import { csv, importText } from './import-helpers.js'
import { buildTestApi, describeEachDialect, expectError, type TestApi } from './helpers.js'

// The contract's rules for POST /imports, checked as a client sees them. Part 2: "idempotency
// keys on every write"; part 1: "Idempotency-Key (1 to 255 printable characters) on any
// write, as in Stripe's API".

function postCsv(api: TestApi, body: string, headers: Record<string, string> = {}, key?: string) {
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
    const { status, id, createdAt, finishedAt, ...counts } = first
    ;(void status, id, createdAt, finishedAt)
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

describeEachDialect('POST /imports: a file that stops being CSV part-way', (dialect) => {
  // "invalid_csv for a file that cannot be read as CSV from that row on"; "1 when some failed
  // (the others are imported all the same)": the products whose rows all come before the
  // unreadable row are imported; one that may go on in it is not (not whole).
  it('every product before the unreadable row is imported, when that row names another handle', async (t) => {
    const api = await buildTestApi(t, dialect)
    const file = csv('Handle,Title', 'a,A', 'b,B', 'c,"C never closed', 'd,D')
    const record = await waitForImport(api, (await postCsv(api, file)).json().data.id)
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
