import assert from 'node:assert/strict'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { it } from 'node:test'
import {
  buildTestApi,
  createTestDatabase,
  describeEachDialect,
  expectError,
  type TestApi,
} from './helpers.js'
import { catalogue, csv, importText } from './import-helpers.js'
import { databaseUrlFor, runCatalog, tempDir } from './process-helpers.js'

const HEADER = 'Handle,Title,Option1 Name,Option1 Value,Variant SKU,Variant Price'

/** Two products sharing a sku (rows 2 and 4), and one repeating a sku of its own (rows 5, 6). */
const SHARED = csv(
  HEADER,
  'red-chair,Red chair,Size,S,ABC,10',
  'red-chair,,,M,RC-M,11',
  'blue-chair,Blue chair,Size,S,ABC,12',
  'stool,Stool,Size,S,ST,5',
  'stool,,,M,ST,6',
)

const WARNINGS = [
  {
    row: 4,
    handle: 'blue-chair',
    field: 'sku',
    message:
      'SKU "ABC" is already used by product "red-chair" (row 2); the variant was imported without a sku',
  },
  {
    row: 6,
    handle: 'stool',
    field: 'sku',
    message:
      'SKU "ST" is already used by product "stool" (row 5); the variant was imported without a sku',
  },
]

const counts = (s: Record<string, any>) => [
  s.productsCreated,
  s.productsUpdated,
  s.variantsCreated,
  s.variantsUpdated,
  s.rowsFailed,
  s.skusCleared,
]

function postCsv(api: TestApi, body: string, query = '') {
  return api.request('POST', `/imports${query}`, { body, headers: { 'content-type': 'text/csv' } })
}

async function waitForImport(api: TestApi, id: string) {
  for (let i = 0; i < 3000; i++) {
    const record = (await api.get(`/imports/${id}`)).json().data
    if (record.status !== 'running') return record
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
  throw new Error('the import did not finish')
}

describeEachDialect('import --duplicate-skus', (dialect) => {
  it('by default a taken sku skips its product, the message naming the holder and its row', async (t) => {
    const db = await createTestDatabase(t, dialect)
    const summary = await importText(db, 's', SHARED)
    assert.deepEqual(
      summary.errors.map((e) => [e.row, e.handle, e.field, e.error, e.message]),
      [
        [
          4,
          'blue-chair',
          'Variant SKU',
          'duplicate_sku',
          'SKU "ABC" is already used by product "red-chair" (row 2)',
        ],
        [
          6,
          'stool',
          'Variant SKU',
          'duplicate_sku',
          'SKU "ST" is already used by product "stool" (row 5)',
        ],
      ],
    )
    assert.deepEqual(summary.warnings, [])
    assert.equal(summary.skusCleared, 0)
    // A sku a stored product holds: named by its handle, without a row.
    const again = await importText(db, 's', csv(HEADER, 'green-chair,Green,Size,S,RC-M,1'))
    assert.deepEqual(
      again.errors.map((e) => e.message),
      ['SKU "RC-M" is already used by product "red-chair"'],
    )
    const dry = await importText(db, 's', csv(HEADER, 'green-chair,Green,Size,S,RC-M,1'), {
      dryRun: true,
    })
    assert.deepEqual(dry.errors, again.errors)
  })

  it('clear: shared and repeated skus are dropped with warnings, no product skipped; a second run settles', async (t) => {
    const db = await createTestDatabase(t, dialect)
    const dry = await importText(db, 's', SHARED, { duplicateSkus: 'clear', dryRun: true })
    assert.deepEqual(counts(dry), [3, 0, 5, 0, 0, 2])
    assert.deepEqual(dry.warnings, WARNINGS)
    assert.deepEqual(dry.errors, [])

    const first = await importText(db, 's', SHARED, { duplicateSkus: 'clear' })
    assert.deepEqual(counts(first), [3, 0, 5, 0, 0, 2])
    assert.deepEqual(first.warnings, WARNINGS)
    assert.deepEqual(first.errors, [])
    const stored = await catalogue(db, 's')
    assert.deepEqual(
      stored.map((p: any) => [p.slug, p.variants.map((v: any) => v.sku)]),
      [
        ['red-chair', ['ABC', 'RC-M']],
        ['blue-chair', [null]],
        ['stool', ['ST', null]],
      ],
    )

    const second = await importText(db, 's', SHARED, { duplicateSkus: 'clear' })
    assert.deepEqual(counts(second), [0, 0, 0, 0, 0, 2])
    assert.deepEqual(second.warnings, WARNINGS)
    assert.deepEqual(second.errors, [])
    const secondDry = await importText(db, 's', SHARED, { duplicateSkus: 'clear', dryRun: true })
    assert.deepEqual(counts(secondDry), [0, 0, 0, 0, 0, 2])
    assert.deepEqual(secondDry.warnings, WARNINGS)
    assert.deepEqual(await catalogue(db, 's'), stored)
  })

  it('clear: a sku a stored product holds is dropped, naming that product', async (t) => {
    const db = await createTestDatabase(t, dialect)
    await importText(db, 's', csv(HEADER, 'red-chair,Red chair,Size,S,ABC,10'))
    const file = csv(HEADER, 'other,Other,Size,S,ABC,3', 'other,,,M,OTHER-M,4')
    const dry = await importText(db, 's', file, { duplicateSkus: 'clear', dryRun: true })
    const real = await importText(db, 's', file, { duplicateSkus: 'clear' })
    for (const summary of [dry, real]) {
      assert.deepEqual(counts(summary), [1, 0, 2, 0, 0, 1])
      assert.deepEqual(summary.warnings, [
        {
          row: 2,
          handle: 'other',
          field: 'sku',
          message:
            'SKU "ABC" is already used by product "red-chair"; the variant was imported without a sku',
        },
      ])
    }
  })

  it('an 80-character sku imports, and comes back by its sku', async (t) => {
    const db = await createTestDatabase(t, dialect)
    const sku = 'S'.repeat(80)
    const summary = await importText(db, 's', csv(HEADER, `long,Long,Size,S,${sku},1`))
    assert.deepEqual([summary.productsCreated, summary.rowsFailed, summary.errors], [1, 0, []])
    const stored = await catalogue(db, 's')
    assert.equal((stored[0] as any).variants[0].sku, sku)
  })

  it('POST /imports?duplicate_skus=clear: warnings and skusCleared in the record; a bad value is 400', async (t) => {
    const api = await buildTestApi(t, dialect)
    const plain = await waitForImport(api, (await postCsv(api, SHARED)).json().data.id)
    assert.deepEqual([plain.warnings, plain.skusCleared, plain.rowsFailed], [[], 0, 3])
    const cleared = await waitForImport(
      api,
      (await postCsv(api, SHARED, '?duplicate_skus=clear')).json().data.id,
    )
    assert.equal(cleared.status, 'succeeded')
    assert.deepEqual(cleared.warnings, WARNINGS)
    assert.deepEqual([cleared.skusCleared, cleared.rowsFailed, cleared.errors], [2, 0, []])
    const listed = (await api.get('/imports')).json().data[0]
    assert.equal(listed.skusCleared, 2)
    assert.equal('warnings' in listed, false)
    const bad = await postCsv(api, SHARED, '?duplicate_skus=skip')
    expectError(bad, 400, 'validation_failed')
    assert.match(bad.body, /duplicate_skus/)
  })

  it('catalog import --duplicate-skus=clear; another value is a usage error (exit 2)', async (t) => {
    const env = { DATABASE_URL: await databaseUrlFor(t, dialect) }
    const file = join(await tempDir(t), 'shared.csv')
    await writeFile(file, SHARED)
    const plain = await runCatalog(['import', file, '--store', 's', '--new-store', '--json'], env)
    assert.equal(plain.code, 1, plain.stderr)
    assert.deepEqual(
      [JSON.parse(plain.stdout).warnings, JSON.parse(plain.stdout).skusCleared],
      [[], 0],
    )
    const cleared = await runCatalog(
      ['import', file, '--store', 't', '--new-store', '--duplicate-skus=clear', '--json'],
      env,
    )
    assert.equal(cleared.code, 0, cleared.stderr)
    const summary = JSON.parse(cleared.stdout)
    assert.deepEqual(summary.warnings, WARNINGS)
    assert.equal(summary.skusCleared, 2)
    const text = await runCatalog(
      ['import', file, '--store', 't', '--new-store', '--duplicate-skus', 'clear'],
      env,
    )
    assert.equal(text.code, 0, text.stderr)
    assert.match(text.stdout, /skus cleared: +2/)
    assert.match(
      text.stdout,
      /row 4, handle blue-chair, sku: SKU "ABC" is already used by product "red-chair" \(row 2\)/,
    )
    const bad = await runCatalog(['import', file, '--store', 't', '--duplicate-skus=skip'], env)
    assert.equal(bad.code, 2)
    assert.match(bad.stderr, /--duplicate-skus must be fail or clear/)
  })
})
