import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { promisify } from 'node:util'
import { describeEachDialect } from './helpers.js'
import { csv, SAMPLE_2025, SAMPLE_CLASSIC } from './import-helpers.js'
import { CATALOG_BIN, databaseUrlFor, runCatalog, tempDir } from './process-helpers.js'

const SUMMARY_KEYS = [
  'rowsProcessed',
  'productsCreated',
  'productsUpdated',
  'variantsCreated',
  'variantsUpdated',
  'rowsFailed',
  'columnsNotStored',
  'errors',
  'warnings',
  'skusCleared',
  // Added since (issue 44): the contract's keys first, as they were.
  'productsFailed',
  'productsSkippedForDuplicateSkus',
  'rowsSkippedForDuplicateSkus',
  'errorCount',
  'hints',
  'id',
  'failureReason',
]

describeEachDialect('catalog import and export', (dialect) => {
  it('--json: one object with the contract keys; no bar on a pipe; a second run changes nothing', async (t) => {
    const env = { DATABASE_URL: await databaseUrlFor(t, dialect) }
    const first = await runCatalog(
      ['import', SAMPLE_2025, '--store', 'shop', '--new-store', '--json'],
      env,
    )
    assert.equal(first.code, 0, first.stderr)
    assert.equal(first.stderr, '', 'no progress bar on a pipe')
    const summary = JSON.parse(first.stdout)
    assert.deepEqual(Object.keys(summary), SUMMARY_KEYS)
    assert.equal(summary.productsCreated, 2)
    assert.equal(summary.variantsCreated, 15)
    const again = JSON.parse(
      (await runCatalog(['import', SAMPLE_2025, '--store', 'shop', '--new-store', '--json'], env))
        .stdout,
    )
    assert.deepEqual(
      [again.productsCreated, again.productsUpdated, again.variantsCreated, again.variantsUpdated],
      [0, 0, 0, 0],
    )
  })

  it('a NUL character in a cell fails its row on its column: exit 1, the rest imported', async (t) => {
    const env = { DATABASE_URL: await databaseUrlFor(t, dialect) }
    const file = join(await tempDir(t), 'nul.csv')
    await writeFile(file, 'Handle,Title,Variant SKU\nz1,Nul\0here,z1\nz2,OK,z2\nz3,OK3,sku\0x\n')
    const result = await runCatalog(['import', file, '--store', 's', '--new-store', '--json'], env)
    assert.equal(result.code, 1, result.stderr)
    const summary = JSON.parse(result.stdout)
    assert.deepEqual(
      summary.errors.map((e: Record<string, unknown>) => [e.row, e.handle, e.field, e.error]),
      [
        [2, 'z1', 'Title', 'validation_failed'],
        [4, 'z3', 'Variant SKU', 'validation_failed'],
      ],
    )
    assert.deepEqual([summary.productsCreated, summary.rowsFailed], [1, 2])
  })

  it('export --output, imported into another store, exports the same file', async (t) => {
    const env = { DATABASE_URL: await databaseUrlFor(t, dialect) }
    const dir = await tempDir(t)
    assert.equal(
      (await runCatalog(['import', SAMPLE_CLASSIC, '--store', 'a', '--new-store'], env)).code,
      0,
    )
    const fileA = join(dir, 'a.csv')
    const exported = await runCatalog(['export', '--store', 'a', '--output', fileA], env)
    assert.equal(exported.code, 0, exported.stderr)
    const imported = await runCatalog(
      ['import', fileA, '--store', 'b', '--new-store', '--json'],
      env,
    )
    assert.equal(imported.code, 0, imported.stdout)
    assert.deepEqual(JSON.parse(imported.stdout).columnsNotStored, [])
    const toStdout = await runCatalog(['export', '--store', 'b'], env)
    assert.equal(toStdout.code, 0)
    assert.equal(toStdout.stdout, await readFile(fileA, 'utf8'))
  })
})

describe('catalog import: exit codes, dry run, the bar', { concurrency: 2 }, () => {
  it('a file with a bad row: exit 1, the others imported, the error in the summary', async (t) => {
    const env = { DATABASE_URL: await databaseUrlFor(t, 'sqlite') }
    const file = join(await tempDir(t), 'bad.csv')
    await writeFile(file, csv('Handle,Title,Variant Price', 'a,A,1', 'b,B,-1'))
    const result = await runCatalog(['import', file, '--store', 'shop', '--new-store'], env)
    assert.equal(result.code, 1)
    assert.match(result.stdout, /rows failed:\s+1/)
    assert.match(
      result.stdout,
      /row 3, handle b, Variant Price: must be >= 0 \(validation_failed\)/,
    )
    const json = JSON.parse(
      (await runCatalog(['import', file, '--store', 'shop', '--new-store', '--json'], env)).stdout,
    )
    assert.deepEqual(json.errors[0], {
      row: 3,
      handle: 'b',
      field: 'Variant Price',
      error: 'validation_failed',
      message: 'must be >= 0',
    })
  })

  it('a file without Handle is refused: exit 1, one invalid_csv error, nothing written', async (t) => {
    const env = { DATABASE_URL: await databaseUrlFor(t, 'sqlite') }
    const file = join(await tempDir(t), 'nohandle.csv')
    await writeFile(file, csv('Title', 'A'))
    const result = await runCatalog(
      ['import', file, '--store', 'shop', '--new-store', '--json'],
      env,
    )
    assert.equal(result.code, 1)
    assert.deepEqual(
      JSON.parse(result.stdout).errors.map((e: any) => e.error),
      ['invalid_csv'],
    )
  })

  it('--dry-run prints what a real run would do and writes nothing', async (t) => {
    const env = { DATABASE_URL: await databaseUrlFor(t, 'sqlite') }
    const dry = await runCatalog(
      ['import', SAMPLE_CLASSIC, '--store', 'shop', '--new-store', '--dry-run'],
      env,
    )
    assert.equal(dry.code, 0, dry.stderr)
    assert.match(dry.stdout, /Dry run/)
    assert.match(dry.stdout, /products created:\s+3/)
    const exported = await runCatalog(['export', '--store', 'shop', '--new-store'], env)
    assert.equal(exported.stdout.trim().split('\n').length, 1, 'only the header: nothing written')
  })

  const usage: [string, string[]][] = [
    ['without --store', ['import', SAMPLE_CLASSIC]],
    ['without a file', ['import', '--store', 'shop']],
    ['with two files', ['import', SAMPLE_CLASSIC, SAMPLE_2025, '--store', 'shop']],
    ['with an unknown flag', ['import', SAMPLE_CLASSIC, '--store', 'shop', '--fast']],
    ['with a bad store', ['import', SAMPLE_CLASSIC, '--store', '../x']],
    ['export without --store', ['export']],
  ]
  for (const [what, args] of usage) {
    it(`catalog ${args[0]} ${what}: exit 2, one line on stderr`, async (t) => {
      const result = await runCatalog(args, { DATABASE_URL: await databaseUrlFor(t, 'sqlite') })
      assert.equal(result.code, 2, result.stderr)
      assert.match(result.stderr, /^[^\n]+\n?$/)
    })
  }

  it('a file that does not exist: exit 1', async (t) => {
    const result = await runCatalog(['import', '/nonexistent.csv', '--store', 'shop'], {
      DATABASE_URL: await databaseUrlFor(t, 'sqlite'),
    })
    assert.equal(result.code, 1)
    assert.match(result.stderr, /cannot read/)
  })

  it('under a pseudo-terminal the progress bar is drawn on stderr', async (t) => {
    const dir = await tempDir(t)
    const file = join(dir, 'big.csv')
    const lines = ['Handle,Title,Variant Price']
    for (let i = 0; i < 3000; i++) lines.push(`p-${i},Product ${i},${i}`)
    await writeFile(file, csv(...lines))
    // script (util-linux) runs the command with a terminal as its stdin, stdout and stderr.
    const command = [
      process.execPath,
      CATALOG_BIN,
      'import',
      file,
      '--store',
      'shop',
      '--new-store',
    ]
      .map((arg) => `'${arg}'`)
      .join(' ')
    const { stdout } = await promisify(execFile)('script', ['-qfec', command, '/dev/null'], {
      env: { ...process.env, DATABASE_URL: `sqlite:${join(dir, 'catalog.db')}` },
    })
    assert.match(stdout, /\d+% \| \d+ rows \| \d+ rows\/s \| (\d+s|-) left/)
    assert.match(stdout, /100% \| 3000 rows/)
    assert.match(stdout, /products created:\s+3000/)
  })
})
