/**
 * Issue 44: what `catalog import` tells and keeps. A real run is recorded as an import (GET
 * /imports lists it with its summary, errors and warnings; a dry run is not), an interrupted
 * one is failed with the reason, the summary says how many products shared skus skipped and
 * names the choice that imports them, the text says how many errors it shows of how many, a
 * refused file reads as refused, and a store that does not exist is refused without
 * --new-store. Run as a user runs it: the built `catalog`, on a database file or PostgreSQL.
 */
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { TestContext } from 'node:test'
import { it } from 'node:test'
import type { LightMyRequestResponse } from 'fastify'
import { buildApp } from '../src/app.js'
import { createApiKey } from '../src/auth/api-key.service.js'
import { createDatabase, type Database } from '../src/db/database.js'
import { migrateToLatest } from '../src/db/migrate.js'
import { interruptedReason } from '../src/import/import-jobs.js'
import { API, describeEachDialect } from './helpers.js'
import { csv, SAMPLE_CLASSIC } from './import-helpers.js'
import { checkAgainstDocument } from './openapi-conformance.js'
import { CATALOG_BIN, createKey, databaseUrlFor, runCatalog, tempDir } from './process-helpers.js'

/** Three products; the second and third take skus the first holds; the fourth has a bad price. */
const SHARED_SKUS = csv(
  'Handle,Title,Option1 Name,Option1 Value,Variant SKU,Variant Price',
  'first,First,Size,S,SKU-1,10',
  'first,,,M,SKU-2,10',
  'second,Second,Size,S,SKU-1,12',
  'second,,,M,SKU-9,12',
  'third,Third,Size,S,SKU-2,13',
  'bad,Bad,Size,S,SKU-B,abc',
)

async function fileOf(t: TestContext, name: string, text: string): Promise<string> {
  const file = join(await tempDir(t), name)
  await writeFile(file, text)
  return file
}

/** The app on the database the CLI wrote, with a read key of `store`: GET requests only. */
async function apiOn(t: TestContext, url: string, store: string) {
  const database: Database = createDatabase(url)
  t.after(() => database.close())
  await migrateToLatest(database)
  const app = buildApp({ database })
  t.after(() => app.close())
  const { key } = await createApiKey(database, { store, scopes: ['read'] })
  const get = async (path: string): Promise<Record<string, any>> => {
    const response = await app.inject({
      method: 'GET',
      url: `${API}${path}`,
      headers: { authorization: `Bearer ${key}` },
    })
    checkAgainstDocument('GET', `${API}${path}`, response as LightMyRequestResponse)
    assert.equal(response.statusCode, 200, response.body)
    return response.json()
  }
  return Object.assign(get, { database })
}

describeEachDialect('catalog import: recorded, told, refused', (dialect) => {
  const envOf = async (t: TestContext) => ({ DATABASE_URL: await databaseUrlFor(t, dialect) })

  it('a CLI import is listed by GET /imports with its summary; GET /imports/:id keeps its errors and warnings', async (t) => {
    const env = await envOf(t)
    const file = await fileOf(t, 'shared.csv', SHARED_SKUS)
    const plain = await runCatalog(
      ['import', file, '--store', 'shop', '--new-store', '--json'],
      env,
    )
    assert.equal(plain.code, 1, plain.stderr)
    const first = JSON.parse(plain.stdout)
    const cleared = await runCatalog(
      ['import', file, '--store', 'shop', '--duplicate-skus=clear', '--json'],
      env,
    )
    const second = JSON.parse(cleared.stdout)
    const dry = await runCatalog(['import', file, '--store', 'shop', '--dry-run', '--json'], env)
    assert.equal(JSON.parse(dry.stdout).id, null, 'a dry run is not recorded')

    const get = await apiOn(t, env.DATABASE_URL, 'shop')
    const list = await get('/imports')
    assert.deepEqual(
      list.data.map((item: any) => item.id),
      [second.id, first.id],
      'newest first; the dry run not listed',
    )
    const [clearItem, plainItem] = list.data
    assert.equal(plainItem.source, 'cli')
    assert.equal(plainItem.status, 'succeeded')
    assert.equal(plainItem.duplicateSkus, 'fail')
    assert.equal(plainItem.errors, undefined, 'the list has no errors')
    assert.deepEqual(
      [
        plainItem.rowsProcessed,
        plainItem.productsCreated,
        plainItem.rowsFailed,
        plainItem.productsFailed,
        plainItem.productsSkippedForDuplicateSkus,
        plainItem.rowsSkippedForDuplicateSkus,
        plainItem.errorCount,
      ],
      [6, 1, 4, 3, 2, 3, 3],
    )
    assert.match(
      plainItem.hints[0],
      /2 products \(3 rows\).*catalog import.*--duplicate-skus=clear/,
    )
    assert.equal(plainItem.finishedAt !== null, true)

    const plainRecord = (await get(`/imports/${first.id}`)).data
    assert.deepEqual(plainRecord.errors, first.errors)
    assert.deepEqual(
      plainRecord.errors.map((e: any) => [e.row, e.handle, e.error]),
      [
        [4, 'second', 'duplicate_sku'],
        [6, 'third', 'duplicate_sku'],
        [7, 'bad', 'validation_failed'],
      ],
    )
    assert.deepEqual(plainRecord.hints, first.hints)

    assert.equal(clearItem.duplicateSkus, 'clear')
    assert.equal(clearItem.skusCleared, 2)
    assert.deepEqual(clearItem.hints, [], 'nothing to say about shared skus once cleared')
    const clearRecord = (await get(`/imports/${second.id}`)).data
    assert.deepEqual(clearRecord.warnings, second.warnings)
    assert.deepEqual(
      clearRecord.warnings.map((w: any) => [w.row, w.handle, w.field]),
      [
        [4, 'second', 'sku'],
        [6, 'third', 'sku'],
      ],
    )
    assert.deepEqual(
      clearRecord.errors.map((e: any) => e.handle),
      ['bad'],
    )
  })

  it('the text summary counts the products shared skus skipped and names --duplicate-skus=clear', async (t) => {
    const env = await envOf(t)
    const file = await fileOf(t, 'shared.csv', SHARED_SKUS)
    const result = await runCatalog(['import', file, '--store', 'shop', '--new-store'], env)
    assert.equal(result.code, 1)
    assert.match(result.stdout, /^Imported into store "shop" \(recorded as import [0-9a-f-]{36}\):/)
    assert.match(
      result.stdout,
      /rows failed:\s+4 \(every row of the 3 products skipped: a product with a bad row is not imported\)/,
    )
    assert.match(result.stdout, /^Errors \(3\):$/m)
    assert.match(
      result.stdout,
      /^Hint: 2 products \(3 rows\) were skipped for a sku another product keeps \(duplicate_sku\): run catalog import again with --duplicate-skus=clear/m,
    )
    const cleared = await runCatalog(
      ['import', file, '--store', 'shop', '--duplicate-skus=clear'],
      env,
    )
    assert.doesNotMatch(cleared.stdout, /Hint:/)
  })

  it('more errors than the text lists: it says how many it shows of how many, and that --json has them', async (t) => {
    const env = await envOf(t)
    const lines = ['Handle,Title,Variant Price']
    for (let i = 0; i < 60; i++) lines.push(`p-${i},P ${i},-1`, `p-${i},,1`)
    const file = await fileOf(t, 'bad.csv', csv(...lines))
    const text = await runCatalog(['import', file, '--store', 'shop', '--new-store'], env)
    assert.equal(text.code, 1)
    assert.match(text.stdout, /rows failed:\s+120 \(every row of the 60 products skipped/)
    assert.match(text.stdout, /^Errors \(the first 50 of 60; --json lists all of them\):$/m)
    assert.equal(text.stdout.match(/^ {2}row \d+, handle p-/gm)?.length, 50)
    const json = JSON.parse(
      (await runCatalog(['import', file, '--store', 'shop', '--new-store', '--json'], env)).stdout,
    )
    assert.deepEqual([json.errors.length, json.errorCount, json.productsFailed], [60, 60, 60])
  })

  it('a refused file reads as refused, exit 1, and its record is failed with the reason', async (t) => {
    const env = await envOf(t)
    const file = await fileOf(t, 'nohandle.csv', csv('Title,Variant Price', 'A,1'))
    const result = await runCatalog(['import', file, '--store', 'shop', '--new-store'], env)
    assert.equal(result.code, 1)
    assert.doesNotMatch(result.stdout, /Imported/)
    assert.match(result.stdout, /^Refused: nothing was imported into store "shop"/)
    assert.match(
      result.stdout,
      /row 1: the header row has no Handle \(or URL handle\) column \(invalid_csv\)/,
    )
    const dry = await runCatalog(
      ['import', file, '--store', 'shop', '--new-store', '--dry-run'],
      env,
    )
    assert.match(dry.stdout, /a real run would refuse the file/)
    const get = await apiOn(t, env.DATABASE_URL, 'shop')
    const [item] = (await get('/imports')).data
    assert.equal(item.source, 'cli')
    assert.equal(item.status, 'failed')
    assert.match(item.failureReason, /^The file was refused: the header row has no Handle/)
  })

  it('a store that does not exist is refused (exit 1), naming those that do; --new-store imports into it', async (t) => {
    const env = await envOf(t)
    const empty = await runCatalog(['import', SAMPLE_CLASSIC, '--store', 'shop'], env)
    assert.equal(empty.code, 1)
    assert.match(empty.stderr, /there is no store "shop".*no store yet.*--new-store/)
    // A store is one a key names, even a revoked key, or one that holds a product.
    const key = await createKey(env.DATABASE_URL, 'keyed')
    assert.equal((await runCatalog(['keys', 'revoke', key.id], env)).code, 0)
    assert.equal(
      (await runCatalog(['import', SAMPLE_CLASSIC, '--store', 'stocked', '--new-store'], env)).code,
      0,
    )
    for (const args of [
      ['import', SAMPLE_CLASSIC, '--store', 'stoked'],
      ['import', SAMPLE_CLASSIC, '--store', 'stoked', '--dry-run'],
      ['export', '--store', 'stoked'],
    ]) {
      const typo = await runCatalog(args, env)
      assert.equal(typo.code, 1, args.join(' '))
      assert.equal(typo.stdout, '', 'nothing exported or summarised')
      assert.match(
        typo.stderr,
        /^catalog (import|export): there is no store "stoked" \(no API key names it and it holds no product\)\. The stores are: keyed, stocked\. /,
      )
      assert.match(typo.stderr, /--new-store/)
    }
    const dir = await tempDir(t)
    const output = join(dir, 'out.csv')
    assert.equal(
      (await runCatalog(['export', '--store', 'stoked', '--output', output], env)).code,
      1,
    )
    assert.equal(existsSync(output), false, 'a refused export leaves no file')
    assert.equal((await runCatalog(['import', SAMPLE_CLASSIC, '--store', 'keyed'], env)).code, 0)
    const exported = await runCatalog(['export', '--store', 'stocked'], env)
    assert.equal(exported.code, 0)
    const blank = await runCatalog(['export', '--store', 'stoked', '--new-store'], env)
    assert.equal(blank.code, 0)
    assert.equal(blank.stdout.trim().split('\n').length, 1, 'only the header')
    const get = await apiOn(t, env.DATABASE_URL, 'stoked')
    assert.deepEqual((await get('/imports')).data, [], 'the refused ones left no record')
  })

  it('SIGINT part-way: the import is recorded failed with the reason, exit 1, its products whole', async (t) => {
    const env = await envOf(t)
    const total = 10_000
    const lines = ['Handle,Title,Variant Price']
    for (let i = 0; i < total; i++) lines.push(`p-${i},Product ${i},${i % 100}`)
    const file = await fileOf(t, 'big.csv', csv(...lines))
    const get = await apiOn(t, env.DATABASE_URL, 'shop')
    const child = spawn(
      process.execPath,
      [CATALOG_BIN, 'import', file, '--store', 'shop', '--json'],
      { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] },
    )
    let stdout = ''
    let stderr = ''
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk))
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve))
    t.after(() => child.kill('SIGKILL'))
    // Once it is running and has written some products: Ctrl-C, which a terminal and npm
    // each deliver (two copies a few milliseconds apart).
    let running: Record<string, any> | undefined
    for (let i = 0; i < 1200 && !running; i++) {
      const [item] = (await get('/imports')).data
      if (item?.status === 'running' && item.rowsProcessed > 0) running = item
      else await new Promise((resolve) => setTimeout(resolve, 25))
    }
    assert.ok(running, `the import never showed progress: ${stderr}`)
    child.kill('SIGINT')
    child.kill('SIGINT')
    assert.equal(await exited, 1, stderr)
    assert.match(stderr, /interrupted \(SIGINT\); import [0-9a-f-]{36} is recorded as failed/)
    const summary = JSON.parse(stdout)
    assert.equal(summary.id, running.id)
    assert.equal(summary.failureReason, interruptedReason('SIGINT'))
    const record = (await get(`/imports/${running.id}`)).data
    assert.equal(record.status, 'failed')
    assert.equal(record.failureReason, interruptedReason('SIGINT'))
    assert.notEqual(record.finishedAt, null)
    assert.ok(record.productsCreated > 0 && record.productsCreated < total, record.productsCreated)
    assert.equal(record.productsCreated, summary.productsCreated)
    const { count } = await get.database.kysely
      .selectFrom('products')
      .select((eb) => eb.fn.countAll<number>().as('count'))
      .where('store_id', '=', 'shop')
      .executeTakeFirstOrThrow()
    assert.equal(Number(count), record.productsCreated, 'the record counts what was committed')
  })
})

it('catalog import --help and catalog export --help name --new-store, the record and the interruption', async () => {
  const importHelp = await runCatalog(['import', '--help'])
  assert.equal(importHelp.code, 0)
  assert.match(importHelp.stdout, /--new-store/)
  assert.match(importHelp.stdout, /GET \/imports lists it/)
  assert.match(importHelp.stdout, /a --dry-run is not recorded/)
  assert.match(importHelp.stdout, /Ctrl-C \(SIGINT\) or SIGTERM stops it/)
  const exportHelp = await runCatalog(['export', '--help'])
  assert.match(exportHelp.stdout, /--new-store/)
  assert.match((await runCatalog(['--help'])).stdout, /recorded as an/)
})
