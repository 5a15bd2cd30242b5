/**
 * Issue 44 (HTTP side): an HTTP import's summary counts the products shared skus skipped and
 * names ?duplicate_skus=clear, and a `catalog import` process that died leaves its record
 * failed with a reason of its own once its heartbeat is old, as a server's job does.
 */
import assert from 'node:assert/strict'
import { it } from 'node:test'
import { newId } from '../src/db/values.js'
import { insertImport } from '../src/import/import-job.repository.js'
import { CLI_STOPPED_REASON, createImportJobs, STOPPED_REASON } from '../src/import/import-jobs.js'
import { buildTestApi, createTestDatabase, describeEachDialect, type TestApi } from './helpers.js'
import { csv } from './import-helpers.js'

const SHARED_SKUS = csv(
  'Handle,Title,Option1 Name,Option1 Value,Variant SKU,Variant Price',
  'first,First,Size,S,SKU-1,10',
  'first,,,M,SKU-2,10',
  'second,Second,Size,S,SKU-1,12',
  'second,,,M,SKU-9,12',
  'third,Third,Size,S,SKU-2,13',
  'bad,Bad,Size,S,SKU-B,abc',
)

async function importAndWait(api: TestApi, query = ''): Promise<Record<string, any>> {
  const posted = await api.request('POST', `/imports${query}`, {
    body: SHARED_SKUS,
    headers: { 'content-type': 'text/csv' },
  })
  assert.equal(posted.statusCode, 202, posted.body)
  const { id } = posted.json().data
  for (let i = 0; i < 3000; i++) {
    const record = (await api.get(`/imports/${id}`)).json().data
    if (record.status !== 'running') return record
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
  throw new Error('the import did not finish')
}

describeEachDialect('an HTTP import says what shared skus skipped', (dialect) => {
  it('counts them and names ?duplicate_skus=clear; GET /imports lists the same', async (t) => {
    const api = await buildTestApi(t, dialect)
    const record = await importAndWait(api)
    assert.equal(record.source, 'http')
    assert.equal(record.duplicateSkus, 'fail')
    assert.deepEqual(
      [
        record.productsCreated,
        record.rowsFailed,
        record.productsFailed,
        record.productsSkippedForDuplicateSkus,
        record.rowsSkippedForDuplicateSkus,
        record.errorCount,
      ],
      [1, 4, 3, 2, 3, 3],
    )
    assert.equal(record.hints.length, 1)
    assert.match(
      record.hints[0],
      /^2 products \(3 rows\) were skipped for a sku another product keeps \(duplicate_sku\): send the file again to POST \/imports\?duplicate_skus=clear/,
    )
    const [listed] = (await api.get('/imports')).json().data
    assert.deepEqual(listed.hints, record.hints)
    assert.equal(listed.productsSkippedForDuplicateSkus, 2)

    const cleared = await importAndWait(api, '?duplicate_skus=clear')
    assert.equal(cleared.duplicateSkus, 'clear')
    assert.deepEqual(
      [cleared.productsCreated, cleared.productsSkippedForDuplicateSkus, cleared.skusCleared],
      [2, 0, 2],
    )
    assert.deepEqual(cleared.hints, [])
  })

  it('a dead catalog import process: its record is failed with its own reason, a job with the service one', async (t) => {
    const database = await createTestDatabase(t, dialect)
    let now = Date.parse('2026-12-08T01:00:00.000Z')
    const ids = { cli: newId(), http: newId() }
    for (const source of ['cli', 'http'] as const) {
      await database.writeAtomic((db) =>
        insertImport(db, {
          store_id: 'shop',
          id: ids[source],
          instance_id: `dead-${source}`,
          created_at: new Date(now).toISOString(),
          source,
        }),
      )
    }
    now += 60_000
    const jobs = createImportJobs(database, { maxBytes: 1024, staleMs: 30_000, now: () => now })
    await jobs.start()
    t.after(() => jobs.stop())
    const cli = await jobs.get('shop', ids.cli)
    assert.deepEqual(
      [cli!.status, cli!.source, cli!.failureReason],
      ['failed', 'cli', CLI_STOPPED_REASON],
    )
    const http = await jobs.get('shop', ids.http)
    assert.deepEqual([http!.status, http!.failureReason], ['failed', STOPPED_REASON])
  })
})
