import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { type BrowserContext, type Page, type Request } from 'playwright-core'
import { newId } from '../src/db/values.js'
import {
  finishImport,
  insertImport,
  updateImportCounts,
  type ImportCounts,
} from '../src/import/import-job.repository.js'
import {
  assertOnlyTheService,
  checkAccessibility,
  launch,
  openPage,
  pageOfItsOwn,
  screenshot,
  skip,
  suiteContext,
  type Watched,
} from './admin-browser.js'
import { buildTestApi, DIALECTS, POSTGRES_URL, type TestApi } from './helpers.js'
import { SHARED_SHOPIFY_SAMPLES, SHOPIFY_SAMPLES } from './import-helpers.js'

/** Shopify's template, from ../shared beside the repository (the tests' byte-equal copy without it). */
const SAMPLE = join(
  existsSync(SHARED_SHOPIFY_SAMPLES) ? SHARED_SHOPIFY_SAMPLES : SHOPIFY_SAMPLES,
  'product_template_classic.csv',
)
const SAMPLE_HANDLES = ['example-shirt', 'example-pants', 'example-hat']
/** A small limit, so that a file over it is quick to make. */
const MAX_BYTES = 64 * 1024
const BOLD_HANDLE = '<b>bold</b>'
const COUNT_LABELS = {
  'Rows processed': 'rowsProcessed',
  'Products created': 'productsCreated',
  'Products updated': 'productsUpdated',
  'Variants created': 'variantsCreated',
  'Variants updated': 'variantsUpdated',
  'Rows failed': 'rowsFailed',
} as const

for (const dialect of DIALECTS) {
  describe(`admin page, import & export [${dialect}]`, { skip, timeout: 180_000 }, () => {
    const cleanups: (() => unknown)[] = []
    let api: TestApi
    let base: string
    let context: BrowserContext
    let watched: Watched
    let page: Page
    let files: string

    before(async () => {
      api = await buildTestApi(suiteContext(cleanups), dialect, { importMaxBytes: MAX_BYTES })
      base = await api.app.listen({ host: '127.0.0.1', port: 0 })
      files = await mkdtemp(join(tmpdir(), 'admin-imports-'))
      cleanups.push(() => rm(files, { recursive: true, force: true }))
      context = await (await launch()).newContext({ viewport: { width: 1280, height: 900 } })
      cleanups.push(() => context.close())
      watched = await openPage(context)
      page = watched.page
    })
    after(async () => {
      for (const cleanup of cleanups.reverse()) await cleanup()
    })

    const field = (label: string) => page.getByLabel(label, { exact: true })
    const button = (name: string) => page.getByRole('button', { name, exact: true })
    const badge = (status: string) => page.locator('main .badge', { hasText: status })
    const importRecord = async (id: string, key = api.key) => {
      const response = await api.get(`/imports/${id}`, key)
      assert.equal(response.statusCode, 200, response.body)
      return response.json().data
    }
    const productBySlug = async (slug: string) =>
      (await api.get(`/products?slug=${encodeURIComponent(slug)}`)).json().data[0]
    /** A CSV of the test's own, in its temp dir. */
    const writeCsv = async (name: string, ...lines: string[]) => {
      const path = join(files, name)
      await writeFile(path, lines.join('\r\n') + '\r\n')
      return path
    }
    /** The import id the page's address names. */
    const shownId = () => decodeURIComponent(new URL(page.url()).hash.replace('#/imports/', ''))
    /** The counts as the page shows them, by label. */
    const shownCounts = async () =>
      Object.fromEntries(
        await page
          .locator('.import-counts > div')
          .evaluateAll((items) =>
            items.map((item) => [
              item.querySelector('dt')!.textContent,
              item.querySelector('dd')!.textContent,
            ]),
          ),
      )
    const countsOf = (record: Record<string, any>) =>
      Object.fromEntries(
        Object.entries(COUNT_LABELS).map(([label, key]) => [
          label,
          record[key].toLocaleString('en-GB'),
        ]),
      )
    const shownErrors = () =>
      page
        .getByRole('table')
        .locator('tbody tr')
        .evaluateAll((rows) =>
          rows.map((row) => [...row.querySelectorAll('td')].map((cell) => cell.textContent)),
        )
    /** Chooses the file, presses Import, and waits for the import's own screen; its id. */
    const importFile = async (path: string): Promise<{ id: string; post: Request }> => {
      const posted = page.waitForRequest(
        (request) => request.method() === 'POST' && request.url().endsWith('/imports'),
      )
      await field('CSV file').setInputFiles(path)
      await button('Import').click()
      const post = await posted
      await page.waitForURL(/#\/imports\/[0-9a-f-]{36}$/)
      await page.getByRole('heading', { name: 'Import & export', exact: true }).waitFor()
      return { id: shownId(), post }
    }
    const anotherFile = async () => {
      await page.getByRole('link', { name: 'Import another file' }).click()
      await page.waitForURL(/#\/imports$/)
      await field('CSV file').waitFor()
    }

    it('a write key reaches the screen from the top bar, its heading focused, Import disabled until a file is chosen', async () => {
      await page.goto(`${base}/admin`)
      await field('API key').fill(api.key)
      await button('Sign in').click()
      await page.getByRole('heading', { name: 'Products', exact: true }).waitFor()
      const link = page
        .getByRole('navigation', { name: 'Sections' })
        .getByRole('link', { name: 'Import & export' })
      await link.click()
      await page.getByRole('heading', { name: 'Import & export', exact: true }).waitFor()
      assert.equal(new URL(page.url()).hash, '#/imports')
      assert.equal(await link.getAttribute('aria-current'), 'page')
      assert.equal(
        await page.evaluate(() => (globalThis as any).document.activeElement.textContent),
        'Import & export',
      )
      await page.getByRole('heading', { name: 'Import products' }).waitFor()
      await page.getByRole('heading', { name: 'Export', exact: true }).waitFor()
      assert.equal(await field('CSV file').getAttribute('type'), 'file')
      assert.equal(await field('CSV file').getAttribute('accept'), '.csv,text/csv')
      assert.ok(await button('Import').isDisabled())
      await button('Download CSV').waitFor()
      await checkAccessibility(page, 'import & export')
    })

    it("imports Shopify's template: the file's bytes go as text/csv, and the page follows the import to Succeeded with the API's counts", async () => {
      const bytes = await readFile(SAMPLE)
      // A File body is not in the request's event; a route sees what the browser sends.
      let sent: Buffer | null = null
      await page.route('**/api/commerce/v1/imports', async (route) => {
        sent = route.request().postDataBuffer()
        await route.continue()
      })
      await field('CSV file').setInputFiles(SAMPLE)
      assert.ok(await button('Import').isEnabled())
      const { id, post } = await importFile(SAMPLE)
      assert.equal(post.headers()['content-type'], 'text/csv')
      await page.unroute('**/api/commerce/v1/imports')
      assert.ok(sent !== null && bytes.equals(sent), 'the body is the file, byte for byte')
      await badge('Succeeded').waitFor()
      const record = await importRecord(id)
      assert.equal(record.status, 'succeeded')
      assert.equal(record.productsCreated, 3)
      assert.deepEqual(await shownCounts(), countsOf(record))
      assert.deepEqual(
        await page.locator('.columns-not-stored li').allTextContents(),
        record.columnsNotStored,
      )
      assert.equal(await page.getByRole('table').count(), 0, 'no errors, no table')
      await page.locator('main time').nth(1).waitFor()
      for (const handle of SAMPLE_HANDLES) {
        assert.ok(await productBySlug(handle), `${handle} was imported`)
      }
      await checkAccessibility(page, 'finished import')
    })

    it('a bad row is listed with its errors and the rest imported; an unknown column is named; markup in a handle shows as text', async () => {
      await anotherFile()
      const path = await writeCsv(
        'with-errors.csv',
        'Handle,Title,Variant SKU,Variant Price,Warehouse Shelf',
        'stoneware-mug,Stoneware Mug,MUG-1,12.5,A1',
        'stoneware-mug,,MUG-2,13,A2',
        `"${BOLD_HANDLE}",Bold Cap,CAP-1,-5,B1`,
        'linen-apron,Linen Apron,APRON-1,24,C1',
        'wool-hat,Wool Hat,MUG-1,18,C2',
      )
      const { id } = await importFile(path)
      // Finished, but not all imported: amber and saying so, never a green "Succeeded".
      await badge('Finished with 2 failed rows').waitFor()
      assert.equal(await badge('Succeeded').count(), 0)
      assert.equal(
        await badge('Finished with 2 failed rows').evaluate(
          (element) => (globalThis as any).getComputedStyle(element).backgroundColor,
        ),
        'rgb(255, 248, 197)',
      )
      const record = await importRecord(id)
      assert.equal(record.status, 'succeeded')
      assert.equal(record.productsCreated, 2)
      assert.equal(record.rowsFailed, 2)
      assert.deepEqual(await shownCounts(), countsOf(record))
      assert.deepEqual(await page.locator('.columns-not-stored li').allTextContents(), [
        'Warehouse Shelf',
      ])
      const errors = page.getByRole('table')
      assert.deepEqual(await errors.getByRole('columnheader').allTextContents(), [
        'Row',
        'Handle',
        'Field',
        'Error',
        'Message',
      ])
      assert.deepEqual(
        await shownErrors(),
        record.errors.map((error: Record<string, any>) => [
          String(error.row),
          error.handle,
          error.field ?? '—',
          error.error,
          error.message,
        ]),
      )
      assert.deepEqual(
        (await shownErrors()).map((row) => row.slice(0, 4)),
        [
          ['4', BOLD_HANDLE, 'Variant Price', 'validation_failed'],
          ['6', 'wool-hat', 'Variant SKU', 'duplicate_sku'],
        ],
      )
      assert.equal(await page.locator('main b').count(), 0)
      await page.getByRole('alert').filter({ hasText: '2 rows were not imported' }).waitFor()
      assert.equal(await page.getByText('keeps the first 1,000 errors').count(), 0)
      assert.equal((await productBySlug('stoneware-mug')).name, 'Stoneware Mug')
      assert.ok(await productBySlug('linen-apron'))
      assert.equal(await productBySlug('wool-hat'), undefined)
      await checkAccessibility(page, 'import with errors')
      await screenshot(page, dialect, '9-import')
    })

    it('a file without a Handle column fails whole, with the reason', async () => {
      await anotherFile()
      const path = await writeCsv('no-handle.csv', 'Title,Variant Price', 'Mug,12')
      const { id } = await importFile(path)
      await badge('Failed').waitFor()
      const record = await importRecord(id)
      assert.equal(record.status, 'failed')
      assert.match(record.failureReason, /Handle/)
      await page.getByRole('alert').filter({ hasText: record.failureReason }).waitFor()
      assert.deepEqual(await shownCounts(), countsOf(record))
    })

    it('importing the same file again creates nothing and updates nothing', async () => {
      await anotherFile()
      const { id } = await importFile(SAMPLE)
      await badge('Succeeded').waitFor()
      const record = await importRecord(id)
      assert.ok(record.rowsProcessed > 0)
      const shown = await shownCounts()
      assert.deepEqual(shown, countsOf(record))
      assert.equal(shown['Products created'], '0')
      assert.equal(shown['Products updated'], '0')
      assert.equal(shown['Variants created'], '0')
      assert.equal(shown['Variants updated'], '0')
    })

    it("a file over the service's limit is refused with the API's message, and nothing starts", async () => {
      await anotherFile()
      const row = 'big-file,Big File,BIG-1,1,' + 'x'.repeat(1000)
      const path = await writeCsv(
        'too-big.csv',
        'Handle,Title,Variant SKU,Variant Price,Notes',
        ...Array.from({ length: 70 }, () => row),
      )
      await field('CSV file').setInputFiles(path)
      await button('Import').click()
      await page
        .getByRole('alert')
        .filter({ hasText: `The file is larger than the ${MAX_BYTES} bytes an import accepts` })
        .waitFor()
      assert.equal(new URL(page.url()).hash, '#/imports')
      assert.ok(await button('Import').isEnabled(), 'it can be tried again')
      assert.equal(await field('CSV file').getAttribute('aria-invalid'), 'true')
      const describedBy = (await field('CSV file').getAttribute('aria-describedby'))!.split(' ')
      assert.match(
        (await page.locator(`#${describedBy[0]}`).textContent())!,
        /The file is larger than/,
        "the input's description is the refusal",
      )
      assert.equal(await productBySlug('big-file'), undefined)
      await checkAccessibility(page, 'refused file')
    })

    /**
     * An import left running (its record written as a job would), its page open, and the
     * page's requests for it counted from then on.
     */
    const openRunningImport = async () => {
      const id = newId()
      await api.database.writeAtomic((db) =>
        insertImport(db, {
          store_id: 'store-a',
          id,
          instance_id: 'admin-test',
          created_at: new Date().toISOString(),
        }),
      )
      const asked: string[] = []
      const onRequest = (request: Request) => {
        if (request.url().endsWith(`/imports/${id}`)) asked.push(request.url())
      }
      page.on('request', onRequest)
      await page.goto(`${base}/admin#/imports/${id}`)
      await badge('Running').waitFor()
      return { id, asked, stopWatching: () => page.off('request', onRequest) }
    }

    it('follows a running import every second, shows its progress, announces its end, and says when only the first 1,000 errors are kept', async () => {
      const { id, asked, stopWatching } = await openRunningImport()
      assert.equal(await page.getByLabel('CSV file').count(), 0, 'no form beside an import')
      await page.getByRole('heading', { name: 'Export', exact: true }).waitFor()
      // Counts all different, so that one shown in another's place is seen.
      const counts = (processed: number, failed: number, errors: unknown[]): ImportCounts => ({
        rows_processed: processed,
        products_created: Math.floor(processed / 5),
        products_updated: Math.floor(processed / 7),
        variants_created: Math.floor(processed / 3),
        variants_updated: Math.floor(processed / 11),
        rows_failed: failed,
        columns_not_stored: '[]',
        errors: JSON.stringify(errors),
      })
      await api.database.writeAtomic((db) =>
        updateImportCounts(db, 'store-a', id, counts(500, 0, []), new Date().toISOString()),
      )
      await page.locator('.import-counts dd').first().getByText('500').waitFor()
      assert.ok(asked.length >= 2, 'asked again')
      assert.deepEqual(await shownCounts(), countsOf(await importRecord(id)))
      const errors = Array.from({ length: 1000 }, (_, i) => ({
        row: i + 2,
        handle: `product-${i}`,
        field: 'Variant Price',
        error: 'validation_failed',
        message: 'must be >= 0',
      }))
      await api.database.writeAtomic((db) =>
        finishImport(
          db,
          'store-a',
          id,
          { status: 'succeeded', failure_reason: null, finished_at: new Date().toISOString() },
          counts(1500, 1200, errors),
        ),
      )
      await badge('Finished with 1,200 failed rows').waitFor()
      const finished = await importRecord(id)
      assert.equal(finished.productsUpdated, 214)
      assert.deepEqual(await shownCounts(), countsOf(finished))
      await page
        .getByRole('status')
        .getByText('The import finished with 1,200 rows failed: 1,500 rows processed.')
        .waitFor()
      await page.getByText('keeps the first 1,000 errors of an import').waitFor()
      assert.equal(await page.getByRole('table').locator('tbody tr').count(), 1000)
      // Finished: no more asking.
      const seen = asked.length
      await page.waitForTimeout(1500)
      assert.equal(asked.length, seen, 'stopped once finished')
      stopWatching()
    })

    it('stops asking about a running import once the screen is left', async () => {
      const { asked, stopWatching } = await openRunningImport()
      for (let waited = 0; asked.length < 2 && waited < 5000; waited += 100) {
        await page.waitForTimeout(100)
      }
      assert.ok(asked.length >= 2, 'asked again while it runs')
      await page.getByRole('link', { name: 'Products', exact: true }).click()
      await page.getByRole('heading', { name: 'Products', exact: true }).waitFor()
      const seen = asked.length
      await page.waitForTimeout(2500)
      stopWatching()
      assert.equal(asked.length, seen)
    })

    it("an unknown import shows the API's message", async () => {
      await page.goto(`${base}/admin#/imports/${newId()}`)
      await page
        .getByRole('alert')
        .filter({ hasText: 'No import with this id exists in your store.' })
        .waitFor()
      await page.getByRole('link', { name: 'Import another file' }).waitFor()
      await checkAccessibility(page, 'unknown import')
    })

    it('downloads the catalogue with the key in a header, never in an address', async () => {
      await page.goto(`${base}/admin#/imports`)
      await button('Download CSV').waitFor()
      const asked = page.waitForRequest((request) =>
        request.url().endsWith('/exports/products.csv'),
      )
      const downloading = page.waitForEvent('download')
      await button('Download CSV').click()
      const download = await downloading
      const request = await asked
      assert.equal(request.headers().authorization, `Bearer ${api.key}`)
      assert.equal(download.suggestedFilename(), 'products.csv')
      const text = await readFile((await download.path())!, 'utf8')
      assert.match(text.split(/\r?\n/, 1)[0]!, /^Handle,Title,/)
      for (const handle of [...SAMPLE_HANDLES, 'stoneware-mug', 'linen-apron']) {
        assert.match(text, new RegExp(`^${handle},`, 'm'), `${handle} is in the export`)
      }
      await page.getByRole('status').filter({ hasText: 'Downloaded products.csv' }).waitFor()
      assert.deepEqual(
        watched.requests.map((request) => request.url()).filter((url) => url.includes(api.key)),
        [],
      )
      await checkAccessibility(page, 'export')
      await screenshot(page, dialect, '10-export')
    })

    it("lists the store's imports newest first under Recent imports, each a link to its page", async () => {
      await page.goto(`${base}/admin#/imports`)
      await page.getByRole('heading', { name: 'Recent imports' }).waitFor()
      const listed = (await api.get('/imports?limit=10')).json().data as Record<string, any>[]
      assert.ok(listed.length >= 4, 'the imports of the tests above')
      const recent = page.getByRole('table', { name: "The store's imports, newest first" })
      await recent.locator('tbody tr').first().waitFor()
      const links = await recent
        .locator('tbody tr td:first-child a')
        .evaluateAll((anchors) => anchors.map((anchor) => anchor.getAttribute('href')))
      assert.deepEqual(
        links,
        listed.map((item) => `#/imports/${item.id}`),
      )
      const firstRow = await recent
        .locator('tbody tr')
        .first()
        .locator('td')
        .evaluateAll((cells) => cells.slice(1).map((cell) => cell.textContent))
      const newest = listed[0]!
      const statusWords =
        newest.status === 'succeeded' && newest.rowsFailed > 0
          ? `Finished with ${newest.rowsFailed.toLocaleString('en-GB')} failed rows`
          : { running: 'Running', succeeded: 'Succeeded', failed: 'Failed' }[
              newest.status as string
            ]
      assert.deepEqual(firstRow, [statusWords, ...Object.values(countsOf(newest))])
      await checkAccessibility(page, 'recent imports')
      await recent.locator('tbody tr td:first-child a').first().click()
      await page.waitForURL(new RegExp(`#/imports/${newest.id}$`))
      await page.getByRole('heading', { name: 'Import', exact: true }).waitFor()
    })

    it('a read key sees no file input and no Import button, and can download', async () => {
      const readKey = await api.newKey({ scopes: ['read'] })
      const reader = await pageOfItsOwn(base, cleanups, readKey)
      const readPage = reader.page
      await readPage.getByText('Read only', { exact: true }).waitFor()
      await readPage.getByRole('link', { name: 'Import & export' }).click()
      await readPage.getByRole('heading', { name: 'Import & export', exact: true }).waitFor()
      await readPage.getByText('Importing needs an API key that can write').waitFor()
      await readPage.getByRole('heading', { name: 'Recent imports' }).waitFor()
      assert.equal(await readPage.locator('main input').count(), 0)
      assert.equal(await readPage.getByRole('button', { name: 'Import' }).count(), 0)
      const downloading = readPage.waitForEvent('download')
      await readPage.getByRole('button', { name: 'Download CSV' }).click()
      const text = await readFile((await (await downloading).path())!, 'utf8')
      assert.match(text, /^Handle,Title,/)
      assert.match(text, /^example-shirt,/m)
      await checkAccessibility(readPage, 'read-only import & export')
      assert.deepEqual(reader.problems, [])
      assertOnlyTheService(reader.requests, base)
    })

    it('the page asked nothing of any host but the service, and nothing went wrong in it', () => {
      assert.deepEqual(watched.problems, [])
      assert.deepEqual(watched.dialogs, [])
      assertOnlyTheService(watched.requests, base)
    })
  })
}

if (!POSTGRES_URL) {
  describe('admin page, import & export [postgres]', () => {
    it('needs TEST_POSTGRES_URL', { skip: 'TEST_POSTGRES_URL is not set' }, () => {})
  })
}
