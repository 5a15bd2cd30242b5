// The admin page with real Shopify exports loaded, at a phone's width (390 px) and a laptop's
// (1280 px): no screen scrolls sideways, nothing goes to the console, the first product is on
// the first screen of a phone, and imported custom attributes can be made filterable.
import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { readdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { type Page } from 'playwright-core'
import {
  checkAccessibility,
  launch,
  openPage,
  screenshot,
  skip,
  suiteContext,
  type Watched,
} from './admin-browser.js'
import { buildTestApi, DIALECTS, type TestApi } from './helpers.js'
import { SHARED_SHOPIFY_SAMPLES, SHOPIFY_SAMPLES } from './import-helpers.js'

/** The real exports of ../shared (the tests' copies of Shopify's templates without it). */
const SAMPLES = existsSync(SHARED_SHOPIFY_SAMPLES) ? SHARED_SHOPIFY_SAMPLES : SHOPIFY_SAMPLES
const VIEWPORTS = [
  { name: 'phone', width: 390, height: 844 },
  { name: 'laptop', width: 1280, height: 900 },
] as const

/**
 * A description as other stores' exports write them: images that keep their width, inline
 * styles (which the page's policy refuses), a wide table.
 */
const wideDescription = (image: string) =>
  `<p style="text-align: center"><span style="color: #333333; font-size: 14px">Hand-woven wicker.</span></p>` +
  `<p><img src="${image}" alt="The sofa" width="625" height="400" style="width: 625px; float: left"></p>` +
  `<table style="width: 764px" width="764"><tbody><tr>` +
  ['Width', 'Depth', 'Height', 'Weight', 'Material', 'Cushions', 'Frame', 'Warranty']
    .map(
      (cell) => `<td style="border: 1px solid #ccc; padding: 8px">${cell}_specification_value</td>`,
    )
    .join('') +
  `</tr></tbody></table>` +
  `<p>A-very-long-unbroken-word-from-a-supplier-feed-that-never-wraps-at-all-anywhere-ever</p>`

/** What an image of Shopify's image host is answered with: as wide as a product photo. */
const PICTURE =
  '<svg xmlns="http://www.w3.org/2000/svg" width="2048" height="1536"><rect width="2048" height="1536" fill="#cde"/></svg>'

async function waitForImport(api: TestApi, id: string) {
  for (let i = 0; i < 6000; i++) {
    const record = (await api.get(`/imports/${id}`)).json().data
    if (record.status !== 'running') return record
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  throw new Error('the import did not finish')
}

/** How far the page scrolls sideways, with the elements that stick out past its right edge. */
async function sidewaysScroll(page: Page): Promise<{ excess: number; culprits: string[] }> {
  return page.evaluate(() => {
    const document = (globalThis as any).document
    const root = document.documentElement
    const width = root.clientWidth
    const culprits: string[] = []
    for (const element of document.querySelectorAll('body *') as any[]) {
      const box = element.getBoundingClientRect()
      if (box.right > width + 1 && box.width > 0) {
        // Only the outermost: a child of a culprit is not named again.
        const parent = element.parentElement?.getBoundingClientRect()
        if (parent && parent.right > width + 1) continue
        const name = `${element.tagName.toLowerCase()}.${[...element.classList].join('.')}`
        culprits.push(`${name} (right ${Math.round(box.right)})`)
      }
    }
    return { excess: root.scrollWidth - width, culprits: culprits.slice(0, 8) }
  })
}

for (const dialect of DIALECTS) {
  describe(`admin page with real exports [${dialect}]`, { skip, timeout: 300_000 }, () => {
    const cleanups: (() => unknown)[] = []
    let api: TestApi
    let base: string
    let wideProductId: string
    let realProductId: string
    let manualId: string
    let smartId: string
    let importId: string
    let endpointId: string
    const pages = new Map<string, Watched>()

    before(async () => {
      api = await buildTestApi(suiteContext(cleanups), dialect)
      base = await api.app.listen({ host: '127.0.0.1', port: 0 })
      for (const file of (await readdir(SAMPLES)).filter((name) => name.endsWith('.csv')).sort()) {
        const answer = await api.request(
          'POST',
          '/imports?duplicate_skus=clear&create_definitions=true',
          {
            body: await readFile(join(SAMPLES, file)),
            headers: { 'content-type': 'text/csv' },
          },
        )
        assert.equal(answer.statusCode, 202, answer.body)
        importId = answer.json().data.id
        const record = await waitForImport(api, importId)
        assert.equal(record.status, 'succeeded', JSON.stringify(record.errors))
      }
      const html = (await api.app.inject({ url: '/admin' })).body
      const favicon = /href="(\/admin\/assets\/favicon-[^"]+)"/.exec(html)![1]!
      const wide = await api.createProduct({
        name: 'Wicker sofa with a wide description',
        description: wideDescription(favicon),
      })
      wideProductId = wide.id
      const listed = (await api.get('/products?limit=12&q=sofa')).json().data
      assert.ok(listed.length >= 6, 'the real export has sofas')
      realProductId = listed.find((product: any) => product.id !== wide.id).id
      const manual = await api.post('/collections', {
        title: 'Summer lounge picks from the Great Outdoor collection, hand-chosen',
      })
      assert.equal(manual.statusCode, 200, manual.body)
      manualId = manual.json().data.id
      const added = await api.post(`/collections/${manualId}/products`, {
        product_ids: listed.map((product: any) => product.id),
      })
      assert.equal(added.statusCode, 200, added.body)
      const smart = await api.post('/collections', {
        title: 'Everything outdoor',
        rules: [{ field: 'name', relation: 'contains', value: 'outdoor' }],
      })
      assert.equal(smart.statusCode, 200, smart.body)
      smartId = smart.json().data.id
      const endpoint = await api.post('/webhook-endpoints', {
        url: 'https://erp.example.com/hooks/catalog/a-long-path-that-a-real-receiver-might-have',
        events: ['*'],
      })
      assert.equal(endpoint.statusCode, 200, endpoint.body)
      endpointId = endpoint.json().data.id

      // One browser, one page a width, signed in once and reused by every test.
      const browser = await launch()
      for (const viewport of VIEWPORTS) {
        const context = await browser.newContext({
          viewport: { width: viewport.width, height: viewport.height },
        })
        cleanups.push(() => context.close())
        // The exports' images live on Shopify's image host, out of this machine's reach: each
        // is answered with a large picture of the same kind, so that its width counts.
        await context.route(
          (url) => !url.href.startsWith(`${base}/`),
          (route) => route.fulfill({ contentType: 'image/svg+xml', body: PICTURE }),
        )
        const watched = await openPage(context)
        await watched.page.goto(`${base}/admin`)
        await watched.page.getByLabel('API key').fill(api.key)
        await watched.page.getByRole('button', { name: 'Sign in' }).click()
        await watched.page.getByRole('heading', { name: 'Products', level: 1 }).waitFor()
        pages.set(viewport.name, watched)
      }
    })
    after(async () => {
      for (const cleanup of cleanups.reverse()) await cleanup()
    })

    /** Goes to a screen and waits for what shows it is loaded. */
    const visit = async (page: Page, hash: string, ready: string) => {
      await page.goto(`${base}/admin${hash}`)
      await page.locator(ready).first().waitFor()
      // Images decoded and laid out: their width counts.
      await page.evaluate(() =>
        Promise.all(
          [...(globalThis as any).document.images].map((image: any) =>
            image.complete
              ? undefined
              : new Promise((done) => image.addEventListener('load', done)),
          ),
        ),
      )
    }

    for (const viewport of VIEWPORTS) {
      it(`no screen scrolls sideways at ${viewport.width} px, and nothing goes to the console`, async () => {
        const { page, problems } = pages.get(viewport.name)!
        const screens: [string, string, string][] = [
          ['products', '#/products', 'main tbody tr a'],
          ['product with a wide description', `#/products/${wideProductId}`, 'main .rich-text img'],
          ['product from the export', `#/products/${realProductId}`, 'main .variants, main h2'],
          ['collections', '#/collections', 'main tbody tr a'],
          ['manual collection', `#/collections/${manualId}`, 'main tbody tr a'],
          ['smart collection', `#/collections/${smartId}`, 'main .members'],
          ['custom attributes', '#/attributes', 'main tbody tr'],
          ['imports', '#/imports', 'main tbody tr a'],
          ['an import', `#/imports/${importId}`, 'main .import-counts'],
          ['webhooks', '#/webhooks', 'main tbody tr a'],
          ['a webhook endpoint', `#/webhooks/${endpointId}`, 'main h1'],
        ]
        const wide: string[] = []
        for (const [name, hash, ready] of screens) {
          await visit(page, hash, ready).catch((error: Error) => {
            throw new Error(`the ${name} screen: ${error.message}`)
          })
          const { excess, culprits } = await sidewaysScroll(page)
          if (excess > 0) wide.push(`${name}: ${excess} px too wide, ${culprits.join(', ')}`)
        }
        assert.deepEqual(wide, [], `screens wider than ${viewport.width} px`)
        assert.deepEqual(problems, [])
      })
    }

    it('the description keeps no inline style and its images fit the card', async () => {
      const { page } = pages.get('phone')!
      await visit(page, `#/products/${wideProductId}`, 'main .rich-text img')
      assert.equal(await page.locator('[style]').count(), 0, 'no element has a style attribute')
      const image = await page.locator('main .rich-text img').boundingBox()
      assert.ok(image && image.width <= 390, `the image is ${image?.width} px wide`)
    })

    it('on a phone the first product is on the first screen, the filters and facets folded until asked for', async () => {
      const { page } = pages.get('phone')!
      await visit(page, '#/products', 'main tbody tr a')
      const first = await page.locator('main tbody tr a').first().boundingBox()
      assert.ok(first && first.y + first.height <= 844, `the first product is at ${first?.y} px`)
      const facetValue = page
        .locator('.facet', { hasText: 'Vendor' })
        .locator('.facet-value')
        .first()
      assert.equal(await facetValue.isVisible(), false, 'the facets are folded')
      assert.equal(await page.getByLabel('Vendor', { exact: true }).isVisible(), false)
      await page.locator('summary', { hasText: 'Filters' }).click()
      await page.getByLabel('Vendor', { exact: true }).waitFor()
      await facetValue.waitFor()
      // Chosen, a facet filters the list.
      const vendor = await facetValue.textContent()
      await facetValue.click()
      await page.waitForFunction(() => (globalThis as any).location.hash.includes('vendor='))
      await page.locator('summary', { hasText: '(1 applied)' }).waitFor()
      await checkAccessibility(page, 'products at 390 px')
      assert.match(vendor!, /\(\d+\)/)
      await screenshot(page, dialect, '19-real-products-390')

      const laptop = pages.get('laptop')!.page
      await visit(laptop, '#/products', 'main tbody tr a')
      assert.equal(
        await laptop.locator('.facet-value').first().isVisible(),
        true,
        'open on a laptop',
      )
    })

    it('the product page shows the attributes that have values, and adds another on demand', async () => {
      const { page } = pages.get('laptop')!
      const product = (await api.get(`/products/${realProductId}`)).json().data
      const set = Object.keys(product.metafields)
      assert.ok(set.length > 0, 'the real product has attributes')
      await visit(page, `#/products/${realProductId}`, 'main h2')
      const inputs = page.locator('.metafields .field-metafield')
      assert.equal(await inputs.count(), set.length, 'one input per attribute set')
      // The variants come before the attributes: the page is short.
      const variants = await page.getByRole('heading', { name: /^Variants/ }).boundingBox()
      const attributes = await page.locator('.metafields').boundingBox()
      assert.ok(variants && attributes)
      assert.ok(variants.y < 2000, `the variants start at ${variants.y} px`)
      const chooser = page.getByLabel('Add attribute', { exact: true })
      const definitions = (await api.get('/metafield-definitions?owner=product&limit=200')).json()
        .data
      const unset = definitions.find(
        (definition: any) => !set.includes(`${definition.namespace}.${definition.key}`),
      )
      await chooser.selectOption({ label: unset.name })
      await page.getByRole('button', { name: 'Add', exact: true }).click()
      const field = page.getByLabel(unset.name, { exact: true })
      await field.fill('Teak')
      await page.getByRole('button', { name: 'Save', exact: true }).click()
      await page.locator('.notice', { hasText: 'Saved' }).waitFor()
      const saved = (await api.get(`/products/${realProductId}`)).json().data
      assert.equal(saved.metafields[`${unset.namespace}.${unset.key}`], 'Teak')
      await screenshot(page, dialect, '20-real-product-1280')
    })

    it('an imported attribute is made filterable and searchable in the admin, and the list takes it as a facet', async () => {
      const { page, problems } = pages.get('phone')!
      const definitions = (await api.get('/metafield-definitions?owner=product&limit=200')).json()
        .data
      const material = definitions.find((definition: any) => definition.key === 'material')
      assert.equal(material.filterable, false)
      await visit(page, '#/attributes', 'main tbody tr')
      await page.getByRole('button', { name: `Edit ${material.name}`, exact: true }).click()
      const form = page.getByRole('form', { name: `Edit ${material.name}` })
      await form.getByLabel('Name', { exact: true }).fill('Frame material')
      await form.getByLabel(/Filterable/).check()
      await form.getByLabel(/Searchable/).check()
      await form.getByRole('button', { name: 'Save', exact: true }).click()
      await page.locator('.notice', { hasText: 'Saved “Frame material”' }).waitFor()
      const saved = (await api.get(`/metafield-definitions/${material.id}`)).json().data
      assert.deepEqual(
        [saved.name, saved.filterable, saved.searchable, saved.version],
        ['Frame material', true, true, material.version + 1],
      )
      await page
        .locator('main tbody tr', { hasText: 'Frame material' })
        .getByText('filterable')
        .waitFor()
      // Filterable now: the list takes it as a facet and a filter (400 before).
      const facets = await api.get('/products?facets=metafield.custom.material&limit=1')
      assert.equal(facets.statusCode, 200, facets.body)
      assert.ok(facets.json().facets['metafield.custom.material'].length > 0)
      const { excess, culprits } = await sidewaysScroll(page)
      assert.equal(excess, 0, culprits.join(', '))
      // Not scrolled inside its card either: a phone shows each attribute whole.
      const table = await page
        .locator('main .table-card')
        .evaluate((card) => card.scrollWidth - card.clientWidth)
      assert.equal(table, 0, 'the table fits its card')
      await checkAccessibility(page, 'custom attributes at 390 px')
      assert.deepEqual(problems, [])
      await screenshot(page, dialect, '18-attributes-390')
    })

    it('the import screen offers duplicate_skus=clear and create_definitions, each said in a line', async () => {
      const { page } = pages.get('laptop')!
      await visit(page, '#/imports', 'main form')
      const clear = page.getByLabel(/^Import a variant whose SKU is taken without its SKU/)
      const create = page.getByLabel(/^Create the missing custom attributes/)
      assert.equal(await clear.isChecked(), false)
      assert.equal(await create.isChecked(), false)
      await page.getByText(/another product already uses/).waitFor()
      await page.getByText(/Label \(product\.metafields/).waitFor()
      await screenshot(page, dialect, '21-import-options', false)
      await clear.check()
      await create.check()
      await page
        .getByLabel('CSV file', { exact: true })
        .setInputFiles(join(SAMPLES, 'product_template_2025.csv'))
      const posted = page.waitForRequest(
        (request) => request.method() === 'POST' && /\/imports\?/.test(request.url()),
      )
      await page.getByRole('button', { name: 'Import', exact: true }).click()
      const query = new URL((await posted).url()).searchParams
      assert.equal(query.get('duplicate_skus'), 'clear')
      assert.equal(query.get('create_definitions'), 'true')
      await page.waitForURL(/#\/imports\/./)
      await page.locator('main .import-counts').waitFor()
    })
  })
}
