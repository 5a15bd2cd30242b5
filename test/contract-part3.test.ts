import assert from 'node:assert/strict'
import { it } from 'node:test'
import { loadConfig } from '../src/config.js'
import { csv, importText } from './import-helpers.js'
import { buildTestApi, describeEachDialect, expectError, type TestApi } from './helpers.js'

// Contract, part 3 ("bringing a catalogue in and out"), checked as a client sees it.

function postCsv(api: TestApi, body: string | Buffer, key?: string) {
  return api.request('POST', '/imports', {
    body,
    ...(key && { key }),
    headers: { 'content-type': 'text/csv' },
  })
}

async function waitForImport(api: TestApi, id: string) {
  for (let i = 0; i < 3000; i++) {
    const record = (await api.get(`/imports/${id}`)).json().data
    if (record.status !== 'running') return record
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
  throw new Error('the import did not finish')
}

async function runImport(api: TestApi, file: string) {
  const accepted = await postCsv(api, file)
  assert.equal(accepted.statusCode, 202, accepted.body)
  return waitForImport(api, accepted.json().data.id)
}

const counts = (record: Record<string, any>) => [
  record.productsCreated,
  record.productsUpdated,
  record.variantsCreated,
  record.variantsUpdated,
  record.rowsFailed,
]

describeEachDialect('part 3: IMPORT_MAX_BYTES', (dialect) => {
  // "body up to IMPORT_MAX_BYTES (default 64 MiB)": any limit a deployment sets holds, a
  // small one included (the service refused to start below 1,024 bytes).
  it('a limit of 100 bytes: a body of exactly 100 is accepted, 101 is 413', async (t) => {
    const config = loadConfig({ IMPORT_MAX_BYTES: '100' })
    assert.equal(config.importMaxBytes, 100)
    const api = await buildTestApi(t, dialect, { importMaxBytes: config.importMaxBytes })
    const head = 'Handle,Title\r\n'
    const fits = head + 'a,' + 'x'.repeat(100 - head.length - 2)
    assert.equal(Buffer.byteLength(fits), 100)
    const record = await runImport(api, fits)
    assert.equal(record.status, 'succeeded', record.failureReason)
    expectError(await postCsv(api, `${fits}x`), 413, 'payload_too_large')
  })
})

describeEachDialect('part 3: a variant by its sku, else by its options', (dialect) => {
  const head = 'Handle,Title,Option1 Name,Option1 Value,Variant SKU,Variant Price'

  it("a stored variant that a later row names by sku is not an earlier row's by options", async (t) => {
    const api = await buildTestApi(t, dialect)
    assert.deepEqual(counts(await runImport(api, csv(head, 't,T,Size,S,A,1'))), [1, 0, 1, 0, 0])
    // Row 3 names the stored variant by its sku; row 2 (a new sku) has its options. The
    // variant is row 3's, and row 2 is a new variant: written in file order it would take
    // options the stored variant still holds, so the product is refused (as a swap of options
    // is), and nothing is lost or merged.
    const file = csv(head, 't,T,Size,S,C,1', 't,,,M,A,2')
    for (let run = 0; run < 2; run++) {
      const record = await runImport(api, file)
      assert.deepEqual(
        record.errors.map((e: Record<string, unknown>) => [e.row, e.error]),
        [[2, 'duplicate_options']],
      )
      assert.deepEqual(counts(record), [0, 0, 0, 0, 2])
    }
    const variants = async () => {
      const [product] = (await api.get('/products?slug=t')).json().data
      return (await api.get(`/products/${product.id}/variants`))
        .json()
        .data.map((v: Record<string, unknown>) => [v.sku, v.options, v.price])
    }
    assert.deepEqual(await variants(), [['A', { Size: 'S' }, 1]])

    // The stored variant moves away first, then the new one takes its old options.
    const moved = csv(head, 't,T,Size,M,A,2', 't,,,S,C,1')
    assert.deepEqual(counts(await runImport(api, moved)), [0, 1, 1, 1, 0])
    assert.deepEqual(await variants(), [
      ['A', { Size: 'M' }, 2],
      ['C', { Size: 'S' }, 1],
    ])
    assert.deepEqual(counts(await runImport(api, moved)), [0, 0, 0, 0, 0], 'a second run')
  })
})

describeEachDialect('part 3: --dry-run prints the summary a real run would print', (dialect) => {
  const head = 'Handle,Title,Variant SKU,Variant Price'

  it('a sku an earlier product of the file gives up is free for a later one, dry as real', async (t) => {
    const api = await buildTestApi(t, dialect)
    assert.deepEqual(counts(await runImport(api, csv(head, 'p1,P1,X,1'))), [1, 0, 1, 0, 0])
    const files = [
      // p1's variant takes another sku, then p2 takes X: a real run writes p1 first.
      csv(head, 'p1,P1,Y,1', 'p2,P2,X,2'),
      // Cleared (an empty cell), as well.
      csv('Handle,Title,Variant SKU,Variant Price,Variant Barcode', 'p1,P1,,1,B', 'p3,P3,Y,3,'),
    ]
    for (const file of files) {
      const dry = await importText(api.database, 'store-a', file, { dryRun: true })
      // The record's own fields (where it came from, its choice, its hints) are not a summary's.
      const {
        status,
        id,
        createdAt,
        finishedAt,
        failureReason,
        source,
        duplicateSkus,
        hints,
        ...real
      } = await runImport(api, file)
      ;(void status, id, createdAt, finishedAt, failureReason, source, duplicateSkus, hints)
      assert.deepEqual(real.errors, [])
      assert.deepEqual(dry, real, 'the dry run said what the real run did')
    }
    // A sku given up later in the file is still held when an earlier product asks for it.
    const later = csv(head, 'p4,P4,Y,4', 'p3,P3,Z,3')
    const dry = await importText(api.database, 'store-a', later, { dryRun: true })
    const {
      status,
      id,
      createdAt,
      finishedAt,
      failureReason,
      source,
      duplicateSkus,
      hints,
      ...real
    } = await runImport(api, later)
    ;(void status, id, createdAt, finishedAt, failureReason, source, duplicateSkus, hints)
    assert.deepEqual(
      real.errors.map((e: Record<string, unknown>) => [e.row, e.error]),
      [[2, 'duplicate_sku']],
    )
    assert.deepEqual(dry, real)
  })
})

describeEachDialect("part 3: errors name the file's column in the 2025 layout", (dialect) => {
  // Each error is "{row, handle, field, error, message}", the field the column as the file
  // names it (the existing tests check so for bad values): a conflict the database refuses
  // (a real run) says the same as the dry run, which finds it by reading.
  it('duplicate_sku on SKU, duplicate_options on Option1 value, duplicate_slug on URL handle', async (t) => {
    const api = await buildTestApi(t, dialect)
    const head = 'URL handle,Title,SKU,Price,Option1 name,Option1 value'
    const first = await runImport(api, csv(head, 'p1,P1,X,1,Size,S', 'p1,,W,1,,M'))
    assert.deepEqual(first.errors, [])
    const file = csv(
      head,
      'p2,P2,X,2,Size,S',
      // W and X swap options: the first write meets options the other still holds.
      'p1,P1,X,1,Size,M',
      'p1,,W,1,,S',
      'p3,P3,Y,3,Size,S',
      'p4,P4,Z,4,Size,S',
      'p3,P3 again,V,3,Size,S',
    )
    const expected = [
      [2, 'p2', 'SKU', 'duplicate_sku'],
      [3, 'p1', 'Option1 value', 'duplicate_options'],
      [7, 'p3', 'URL handle', 'duplicate_slug'],
    ]
    const dry = await importText(api.database, 'store-a', file, { dryRun: true })
    const real = await runImport(api, file)
    for (const summary of [real, dry]) {
      assert.deepEqual(
        summary.errors.map((e: Record<string, unknown>) => [e.row, e.handle, e.field, e.error]),
        expected,
      )
    }
  })
})
