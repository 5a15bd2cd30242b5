import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { type BrowserContext, type Page, type Request, type Response } from 'playwright-core'
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
import { addVariant, buildTestApi, DIALECTS, POSTGRES_URL, type TestApi } from './helpers.js'

const XSS_NAME = '<img src=x onerror=alert(1)>'

/** The answers of 400 or more, as "METHOD url status". */
function refusedOf(answers: (Response | null)[]): string[] {
  return answers
    .filter((answer): answer is Response => answer !== null && answer.status() >= 400)
    .map((answer) => `${answer.request().method()} ${answer.url()} ${answer.status()}`)
}

for (const dialect of DIALECTS) {
  describe(`admin page [${dialect}]`, { skip, timeout: 180_000 }, () => {
    const cleanups: (() => unknown)[] = []
    let api: TestApi
    let base: string
    let context: BrowserContext
    let watched: Watched
    let page: Page
    let productId: string

    before(async () => {
      api = await buildTestApi(suiteContext(cleanups), dialect)
      base = await api.app.listen({ host: '127.0.0.1', port: 0 })
      context = await (await launch()).newContext({ viewport: { width: 1280, height: 900 } })
      cleanups.push(() => context.close())
      watched = await openPage(context)
      page = watched.page
    })
    after(async () => {
      for (const cleanup of cleanups.reverse()) await cleanup()
    })

    const product = async (id: string) => (await api.get(`/products/${id}`)).json().data
    const field = (label: string) => page.getByLabel(label, { exact: true })
    const button = (name: string) => page.getByRole('button', { name, exact: true })
    const notice = () => page.locator('.notice')

    it('is served with a strict policy; a wrong key shows the API message; a write key signs in, kept in sessionStorage only', async () => {
      const loaded: Response[] = []
      const onLoad = (answer: Response) => loaded.push(answer)
      page.on('response', onLoad)
      const icon = page.waitForResponse((answer) => /favicon/.test(answer.url()))
      const response = await page.goto(`${base}/admin`)
      // The favicon is one of the page's assets: an SVG from this service, never a 404.
      const favicon = await icon
      assert.match(favicon.url(), new RegExp(`^${base}/admin/assets/favicon-\\w+\\.svg$`))
      assert.equal(favicon.status(), 200)
      assert.equal(favicon.headers()['content-type'], 'image/svg+xml')
      page.off('response', onLoad)
      assert.deepEqual(refusedOf(loaded), [])
      const headers = response!.headers()
      assert.match(headers['content-security-policy']!, /default-src 'self'/)
      assert.match(headers['content-security-policy']!, /frame-ancestors 'none'/)
      assert.doesNotMatch(headers['content-security-policy']!, /unsafe/)
      assert.equal(headers['x-content-type-options'], 'nosniff')
      await field('API key').waitFor()
      await checkAccessibility(page, 'sign-in')

      await field('API key').fill('ck_not_a_key_at_all')
      await button('Sign in').click()
      await page.getByRole('alert').getByText('The API key is unknown or revoked.').waitFor()
      await screenshot(page, dialect, '1-sign-in')

      await field('API key').fill(api.key)
      // Focus is visible: the control reached by the keyboard is outlined.
      await page.keyboard.press('Tab')
      const focused = await page.evaluate(() => {
        const browser = globalThis as any
        const element = browser.document.activeElement
        return {
          text: element.textContent,
          outline: browser.getComputedStyle(element).outlineStyle,
        }
      })
      assert.deepEqual(focused, { text: 'Sign in', outline: 'solid' })
      const answers: Response[] = []
      const onResponse = (answer: Response) => answers.push(answer)
      page.on('response', onResponse)
      await page.keyboard.press('Enter')
      await page.getByRole('heading', { name: 'Products', exact: true }).waitFor()
      await page.locator('main table tbody[aria-busy="false"]').waitFor()
      page.off('response', onResponse)
      // The key's scopes come from GET /me: signing in asks nothing that is refused.
      assert.deepEqual(refusedOf(answers), [])
      assert.ok(answers.some((answer) => answer.url() === `${base}/api/commerce/v1/me`))
      const stored = await page.evaluate(() => {
        const browser = globalThis as any
        return {
          session: Object.values(browser.sessionStorage),
          local: browser.localStorage.length,
          cookie: browser.document.cookie,
          url: browser.location.href,
        }
      })
      assert.deepEqual(stored.session, [api.key])
      assert.equal(stored.local, 0)
      assert.equal(stored.cookie, '')
      assert.ok(!stored.url.includes(api.key))
      assert.deepEqual(await context.cookies(), [])
      await button('New product').waitFor()
    })

    it('creates a product from an empty form', async () => {
      await button('New product').click()
      await page.getByRole('heading', { name: 'New product' }).waitFor()
      for (const label of [
        'Name',
        'Description',
        'Status',
        'Price',
        'Compare-at price',
        'SKU',
        'Barcode',
        'Tax rate',
        'Vendor',
        'Product type',
        'Tags',
        'Slug',
      ]) {
        await field(label).waitFor()
      }
      assert.equal(await field('Name').inputValue(), '')
      await checkAccessibility(page, 'new product')
      await field('Name').fill('Linen Shirt')
      await field('Description').fill('Washed linen, relaxed fit.')
      await field('Price').fill('49.9')
      await field('Compare-at price').fill('59')
      await field('SKU').fill('LIN-SHIRT')
      await field('Tax rate').fill('20')
      await field('Vendor').fill('Atelier Lyon')
      await field('Product type').fill('Shirts')
      await field('Tags').fill('linen, summer')
      await button('Save').click()
      await page.getByRole('heading', { name: 'Linen Shirt' }).waitFor()
      productId = decodeURIComponent(new URL(page.url()).hash.replace('#/products/', ''))
      const created = await product(productId)
      assert.equal(created.name, 'Linen Shirt')
      assert.equal(created.price, 49.9)
      assert.equal(created.compareAtPrice, 59)
      assert.equal(created.taxRate, 20)
      assert.equal(created.vendor, 'Atelier Lyon')
      assert.equal(created.productType, 'Shirts')
      assert.deepEqual(created.tags, ['linen', 'summer'])
      assert.equal(created.status, 'draft')
      assert.equal(await field('Slug').inputValue(), 'linen-shirt')
    })

    it('the product page is bookmarkable, and a save sends only the changed fields as a merge patch with If-Match', async () => {
      await page.goto(`${base}/admin#/products/${productId}`)
      await page.getByRole('heading', { name: 'Linen Shirt' }).waitFor()
      await checkAccessibility(page, 'product')
      const patches: Request[] = []
      const onRequest = (request: Request) => {
        if (request.method() === 'PATCH') patches.push(request)
      }
      page.on('request', onRequest)
      await field('Vendor').fill('Atelier Paris')
      await field('Price').fill('45')
      await button('Save').click()
      await notice().getByText('Saved.').waitFor()
      page.off('request', onRequest)
      assert.equal(patches.length, 1)
      const headers = patches[0]!.headers()
      assert.equal(headers['content-type'], 'application/merge-patch+json')
      assert.equal(headers['if-match'], '"1"')
      assert.deepEqual(JSON.parse(patches[0]!.postData()!), { vendor: 'Atelier Paris', price: 45 })
      const saved = await product(productId)
      assert.equal(saved.vendor, 'Atelier Paris')
      assert.equal(saved.price, 45)
      assert.equal(saved.version, 2)
    })

    it('shows each API error next to its field', async () => {
      await field('Tax rate').fill('101')
      await field('Slug').fill('Not A Slug')
      await button('Save').click()
      const taxError = page.locator('#product-tax_rate-error')
      await taxError.waitFor()
      assert.match((await taxError.textContent())!, /100/)
      assert.equal(await field('Tax rate').getAttribute('aria-invalid'), 'true')
      await page.locator('#product-slug-error').waitFor()
      await screenshot(page, dialect, '4-field-errors')
      assert.equal((await product(productId)).version, 2, 'nothing was saved')
      await page.reload()
      await page.getByRole('heading', { name: 'Linen Shirt' }).waitFor()
    })

    it('says so when someone else changed the product, saves nothing, and reloads on request', async () => {
      const behind = await api.patch(
        `/products/${productId}`,
        { description: 'Changed elsewhere.' },
        { headers: { 'if-match': '"2"' } },
      )
      assert.equal(behind.statusCode, 200)
      await field('Name').fill('Linen Shirt, mine')
      await button('Save').click()
      const warning = page
        .getByRole('alert')
        .filter({ hasText: 'Someone else changed this product' })
      await warning.waitFor()
      await screenshot(page, dialect, '5-conflict')
      const stored = await product(productId)
      assert.equal(stored.name, 'Linen Shirt')
      assert.equal(stored.description, 'Changed elsewhere.')
      await warning.getByRole('button', { name: 'Reload' }).click()
      await warning.waitFor({ state: 'detached' })
      assert.equal(await field('Description').inputValue(), 'Changed elsewhere.')
      assert.equal(await field('Name').inputValue(), 'Linen Shirt')
    })

    it('adds, edits and deletes variants, with options as name/value pairs', async () => {
      const variants = page.locator('section.variants')
      await button('Add variant').click()
      await field('Variant name').fill('M / Blue')
      await field('Variant SKU').fill('LIN-M-BLUE')
      await field('Variant price').fill('47.5')
      await button('Add option').click()
      await field('Option 1 name').fill('size')
      await field('Option 1 value').fill('M')
      await button('Add option').click()
      await field('Option 2 name').fill('color')
      await field('Option 2 value').fill('blue')
      await checkAccessibility(page, 'variant editing')
      await screenshot(page, dialect, '6-variant-edit')
      await variants.getByRole('button', { name: 'Save' }).click()
      await variants.getByText('Added variant “M / Blue”.').waitFor()
      let stored = (await product(productId)).variants
      assert.equal(stored.length, 1)
      assert.equal(stored[0].sku, 'LIN-M-BLUE')
      assert.equal(stored[0].price, 47.5)
      assert.deepEqual(stored[0].options, { size: 'M', color: 'blue' })

      // The product's version moved with the variant; the form follows, so a save still works.
      await page.getByRole('button', { name: 'Edit variant M / Blue' }).click()
      await field('Variant SKU').fill('LIN-M-NAVY')
      await field('Option 2 value').fill('navy')
      await variants.getByRole('button', { name: 'Save' }).click()
      await variants.getByText('Saved variant “M / Blue”.').waitFor()
      stored = (await product(productId)).variants
      assert.equal(stored[0].sku, 'LIN-M-NAVY')
      assert.deepEqual(stored[0].options, { size: 'M', color: 'navy' })
      assert.equal(stored[0].version, 2)
      await screenshot(page, dialect, '3-product')

      await button('Add variant').click()
      await field('Variant name').fill('L / Blue')
      await field('Variant SKU').fill('LIN-M-NAVY')
      await variants.getByRole('button', { name: 'Save' }).click()
      await page.locator('#variant-sku-error').waitFor()
      await variants.getByRole('button', { name: 'Cancel' }).click()

      // Deleting asks first; Cancel keeps the variant.
      await variants.getByRole('table').getByRole('button', { name: 'Delete variant' }).click()
      const dialog = page.getByRole('dialog', { name: 'Delete this variant?' })
      await dialog.waitFor()
      await checkAccessibility(page, 'delete confirmation')
      await dialog.getByRole('button', { name: 'Cancel' }).click()
      assert.equal((await product(productId)).variants.length, 1)
      await variants.getByRole('table').getByRole('button', { name: 'Delete variant' }).click()
      await dialog.getByRole('button', { name: 'Delete variant' }).click()
      await variants.getByText('Deleted variant “M / Blue”.').waitFor()
      assert.equal((await product(productId)).variants.length, 0)

      await field('Barcode').fill('3000000000017')
      await button('Save').click()
      await notice().getByText('Saved.').waitFor()
      assert.equal((await product(productId)).barcode, '3000000000017')
    })

    it('archives, offers no Active on an archived product, and unarchives to draft', async () => {
      await button('Archive').click()
      await notice().getByText('Archived.').waitFor()
      assert.equal((await product(productId)).status, 'archived')
      const choices = await field('Status').locator('option').allTextContents()
      assert.deepEqual(choices, ['Archived', 'Draft (unarchive)'])
      await button('Unarchive').click()
      await notice().getByText('Unarchived').waitFor()
      assert.equal((await product(productId)).status, 'draft')
      assert.deepEqual(await field('Status').locator('option').allTextContents(), [
        'Draft',
        'Active',
        'Archived',
      ])
      await field('Status').selectOption('active')
      await button('Save').click()
      await notice().getByText('Saved.').waitFor()
      assert.equal((await product(productId)).status, 'active')
    })

    it('lists newest first with filters and Next / Previous pages', async () => {
      for (let i = 1; i <= 21; i++) {
        const status = i % 3 === 0 ? 'active' : i % 7 === 0 ? 'archived' : 'draft'
        await api.createProduct({ name: `Bulk ${i}`, tags: ['Bulk'], price: i + 0.99, status })
      }
      await page.getByRole('link', { name: '← Products' }).click()
      await page.getByRole('heading', { name: 'Products', exact: true }).waitFor()
      const rows = page.locator('main table tbody tr')
      await rows.first().getByText('Bulk 21').waitFor()
      await screenshot(page, dialect, '2-products')
      await checkAccessibility(page, 'products')
      /** Clicks, and waits for the list's answer to the query that click sends. */
      const listed = async (name: string, query: string) => {
        const answered = page.waitForResponse(
          (response) => response.url().includes('/products?') && response.url().includes(query),
        )
        await button(name).click()
        await answered
      }
      await field('Tag').fill('bulk')
      await listed('Filter', 'tag=bulk')
      await page.getByText('Page 1').waitFor()
      await rows.nth(19).waitFor()
      assert.equal(await rows.count(), 20)
      assert.equal(await rows.first().locator('a').textContent(), 'Bulk 21')
      await listed('Next', 'cursor=')
      await page.getByText('Page 2').waitFor()
      await rows.first().getByText('Bulk 1', { exact: true }).waitFor()
      assert.equal(await rows.count(), 1)
      assert.ok(await button('Next').isDisabled())
      await listed('Previous', 'tag=bulk')
      await rows.first().getByText('Bulk 21').waitFor()
      await listed('Clear', 'limit=')
      await field('Vendor').fill('Atelier Paris')
      await field('Status').selectOption('active')
      await listed('Filter', 'status=active')
      await rows.first().getByText('Linen Shirt').waitFor()
      assert.equal(await rows.count(), 1)
      await field('Slug').fill('bulk-3')
      await field('Vendor').fill('')
      await field('Status').selectOption('')
      await listed('Filter', 'slug=bulk-3')
      await rows.first().getByText('Bulk 3').waitFor()
      assert.equal(await rows.count(), 1)
      await button('Clear').click()
      await rows.nth(19).waitFor()
      // The search box, and a facet's value chosen from its counts.
      await field('Search').fill('bulk 21')
      await listed('Filter', 'q=bulk+21')
      await rows.first().getByText('Bulk 21').waitFor()
      assert.equal(await rows.count(), 1)
      await listed('Clear', 'limit=')
      const facet = page.getByRole('navigation', { name: 'Refine by' })
      const active = facet.getByRole('button', { name: /^active \(\d+\)$/ })
      const answered = page.waitForResponse((response) => response.url().includes('status=active'))
      await active.click()
      await answered
      assert.equal(await active.getAttribute('aria-pressed'), 'true')
      for (const status of await rows.locator('td:nth-child(3)').allTextContents()) {
        assert.match(status, /active/i)
      }
      await checkAccessibility(page, 'products with facets')
      await listed('Clear', 'limit=')
    })

    it('keeps the filters, the search and the page in the address: Back, a reload and "← Products" restore them', async () => {
      const rows = page.locator('main table tbody tr')
      const hash = () => new URL(page.url()).hash
      /** Waits for the list's answer to a query with `query` in it, after `act`. */
      const listed = async (query: string, act: () => Promise<unknown>) => {
        const answered = page.waitForResponse(
          (response) => response.url().includes('/products?') && response.url().includes(query),
        )
        await act()
        await answered
      }
      await page.goto(`${base}/admin#/products`)
      await listed('limit=', () => page.reload())
      await field('Search').fill('bulk')
      await field('Tag').fill('bulk')
      await listed('tag=bulk', () => button('Filter').click())
      assert.equal(hash(), '#/products?q=bulk&tag=bulk')
      await listed('cursor=', () => button('Next').click())
      await page.getByText('Page 2').waitFor()
      assert.match(hash(), /^#\/products\?q=bulk&tag=bulk&cursor=[\w-]+$/)
      const secondPage = await rows.locator('td:first-child').allTextContents()

      // Into a product and back with the browser's Back: the same page of the same search.
      await rows.first().locator('a').click()
      await page.getByRole('link', { name: '← Products' }).waitFor()
      await listed('cursor=', () => page.goBack())
      await page.getByText('Page 2').waitFor()
      assert.equal(await field('Search').inputValue(), 'bulk')
      assert.equal(await field('Tag').inputValue(), 'bulk')
      assert.deepEqual(await rows.locator('td:first-child').allTextContents(), secondPage)
      // Back again: page 1 of the search; once more: the list before any filter.
      await listed('tag=bulk', () => page.goBack())
      await page.getByText('Page 1').waitFor()
      assert.equal(await rows.count(), 20)
      await listed('limit=', () => page.goBack())
      assert.equal(await field('Tag').inputValue(), '')
      assert.equal(await field('Search').inputValue(), '')
      await page.goForward()
      await page.goForward()
      await page.getByText('Page 2').waitFor()

      // A reload, and the product page's way back, keep the place too.
      await listed('cursor=', () => page.reload())
      await page.getByText('Page 2').waitFor()
      assert.equal(await field('Tag').inputValue(), 'bulk')
      await rows.first().locator('a').click()
      await listed('cursor=', () => page.getByRole('link', { name: '← Products' }).click())
      await page.getByText('Page 2').waitFor()
      assert.deepEqual(await rows.locator('td:first-child').allTextContents(), secondPage)
      await listed('limit=', () =>
        page.getByRole('link', { name: 'Products', exact: true }).click(),
      )
      assert.equal(hash(), '#/products')
      assert.equal(await field('Tag').inputValue(), '')
    })

    it('renders a name full of HTML as text', async () => {
      const xss = await api.createProduct({ name: XSS_NAME, vendor: '<b>bold</b>' })
      await page.goto(`${base}/admin#/products/${xss.id}`)
      await page.getByRole('heading', { name: XSS_NAME }).waitFor()
      assert.equal(await page.locator('h1').textContent(), XSS_NAME)
      assert.equal(await field('Vendor').inputValue(), '<b>bold</b>')
      assert.equal(await page.locator('main img, main b').count(), 0)
      await page.getByRole('link', { name: '← Products' }).click()
      await page.getByRole('link', { name: XSS_NAME }).waitFor()
      assert.equal(await page.locator('main img, main b').count(), 0)
      assert.deepEqual(watched.dialogs, [])
    })

    it('renders a description as sanitized HTML, edited in an HTML box with a preview', async () => {
      const problemsBefore = watched.problems.length
      const described = await api.createProduct({
        name: 'Described Shirt',
        description:
          '<p onclick="alert(1)" style="color:red" class="notice">Washed <strong>linen</strong>.</p>' +
          '<ul><li>Relaxed fit</li><li>Made in <a href="javascript:alert(2)">Lyon</a></li></ul>' +
          '<script>alert(3)</script><iframe src="/admin"></iframe><style>body{display:none}</style>',
      })
      await page.goto(`${base}/admin#/products/${described.id}`)
      await page.getByRole('heading', { name: 'Described Shirt' }).waitFor()
      const preview = page.getByRole('region', { name: 'Description preview' })
      await preview.locator('strong').getByText('linen').waitFor()
      assert.deepEqual(await preview.locator('li').allTextContents(), [
        'Relaxed fit',
        'Made in Lyon',
      ])
      assert.equal(await preview.locator('script, iframe, style, .notice').count(), 0)
      const kept = await preview.evaluate((box) =>
        [...box.querySelectorAll('*')].flatMap((element) =>
          [...element.attributes].map((attribute) => `${element.tagName}.${attribute.name}`),
        ),
      )
      assert.deepEqual(kept, [], 'no handler, style, class or javascript: link is kept')
      assert.match(await field('Description').inputValue(), /^<p onclick=/)
      // DOMPurify parses in a document of this page, so the policy refuses (and reports) the
      // inline handler and style before DOMPurify removes them: expected, and nothing else.
      const reported = watched.problems.splice(problemsBefore)
      assert.ok(reported.length > 0)
      for (const report of reported) {
        assert.match(
          report,
          /^console error: (Executing inline event handler|Applying inline style) violates the following Content Security Policy directive .* The action has been blocked\.$/,
        )
      }
      await checkAccessibility(page, 'description preview')

      await field('Description').fill('<p>New <em onmouseover="alert(4)">text</em></p>')
      await preview.locator('em').getByText('text').waitFor()
      assert.equal(await preview.locator('em').getAttribute('onmouseover'), null)
      for (const report of watched.problems.splice(problemsBefore)) {
        assert.match(report, /^console error: Executing inline event handler violates/)
      }
      await button('Save').click()
      await notice().getByText('Saved.').waitFor()
      assert.equal(
        (await product(described.id)).description,
        '<p>New <em onmouseover="alert(4)">text</em></p>',
        'the HTML is kept as typed; only its rendering is sanitized',
      )
      assert.deepEqual(watched.dialogs, [])

      // The policy still refuses any other way to HTML: a string to innerHTML, a new policy.
      const other = await pageOfItsOwn(base, cleanups)
      await other.page.getByLabel('API key').waitFor()
      // A string script: the test's compiler would wrap a named function in a helper the page lacks.
      const refusals = await other.page.evaluate(`[
        () => { document.body.innerHTML = '<b>x</b>' },
        () => trustedTypes.createPolicy('other', { createHTML: (x) => x }),
        () => trustedTypes.createPolicy('dompurify', { createHTML: (x) => x }),
      ].map((work) => { try { work(); return 'allowed' } catch (error) { return error.name } })`)
      assert.deepEqual(refusals, ['TypeError', 'TypeError', 'TypeError'])
    })

    it('shows images as thumbnails, and adds, reorders and removes them', async () => {
      // Images this service serves (the favicon), so the thumbnails load under the policy.
      const icon = /href="(\/admin\/assets\/favicon-\w+\.svg)"/.exec(
        (await api.app.inject({ url: '/admin' })).body,
      )![1]!
      const url = (name: string) => `${base}${icon}?${name}`
      const pictured = await api.createProduct({
        name: 'Pictured Shirt',
        images: [
          { url: url('front'), alt: 'Front' },
          { url: url('back'), alt: 'Back' },
        ],
      })
      await page.goto(`${base}/admin#/products/${pictured.id}`)
      await page.getByRole('heading', { name: 'Pictured Shirt' }).waitFor()
      const thumbs = page.getByRole('group', { name: 'Images' }).locator('img.thumb')
      await thumbs.nth(1).waitFor()
      // A function, not a string: a string is eval'd in the page at every check after the
      // first (when the images are slow to load), which the page's CSP refuses.
      await page.waitForFunction(() =>
        [...(globalThis as any).document.querySelectorAll('img.thumb')].every(
          (img) => img.complete && img.naturalWidth > 0,
        ),
      )
      assert.deepEqual(
        await thumbs.evaluateAll((imgs) => imgs.map((img) => img.getAttribute('alt'))),
        ['Front', 'Back'],
      )

      await field('Image URL').fill(url('side'))
      await field('Alt text').fill('Side')
      await field('Alt text').press('Enter')
      await thumbs.nth(2).waitFor()
      assert.equal(await notice().count(), 0, 'Enter added the image; it did not save')
      await button('Move image 3 up').click()
      await button('Remove image 1').click()
      await field('Alt text of image 2').fill('Back, washed')
      await checkAccessibility(page, 'images')
      const patched = page.waitForRequest((request) => request.method() === 'PATCH')
      await button('Save').click()
      await notice().getByText('Saved.').waitFor()
      const images = [
        { url: url('side'), alt: 'Side' },
        { url: url('back'), alt: 'Back, washed' },
      ]
      assert.deepEqual(JSON.parse((await patched).postData()!), { images })
      assert.deepEqual((await product(pictured.id)).images, images)

      // An address the API refuses: no thumbnail is tried, and the refusal shows by the images.
      await field('Image URL').fill('ftp://example.com/shirt.png')
      await button('Add image').click()
      await page.getByText('No preview').waitFor()
      await button('Save').click()
      await page.locator('#product-images-error').waitFor()
      assert.deepEqual((await product(pictured.id)).images, images)
    })

    it('deletes a product after asking', async () => {
      await page.goto(`${base}/admin#/products/${productId}`)
      await page.getByRole('heading', { name: 'Linen Shirt' }).waitFor()
      await button('Delete product').click()
      const dialog = page.getByRole('dialog', { name: 'Delete this product?' })
      await dialog.waitFor()
      await screenshot(page, dialect, '7-delete', false)
      await dialog.getByRole('button', { name: 'Delete product' }).click()
      await page.getByRole('heading', { name: 'Products', exact: true }).waitFor()
      await notice().getByText('Deleted “Linen Shirt”.').waitFor()
      assert.equal((await api.get(`/products/${productId}`)).statusCode, 404)
    })

    it('shows prices the same way everywhere: 69.90 in lists and inputs alike', async () => {
      const priced = await api.createProduct({
        name: 'Priced Scarf',
        price: 69.9,
        compare_at_price: 79,
        tags: ['priced'],
      })
      await addVariant(api, priced.id, { name: 'Wool', sku: 'SCARF-WOOL', price: 74.5 })
      await page.goto(`${base}/admin#/products`)
      await field('Tag').fill('priced')
      await button('Filter').click()
      const row = page.locator('main table tbody tr').filter({ hasText: 'Priced Scarf' })
      await row.waitFor()
      assert.equal(await row.locator('td.number').textContent(), '69.90')
      await row.getByRole('link', { name: 'Priced Scarf' }).click()
      await page.getByRole('heading', { name: 'Priced Scarf' }).waitFor()
      assert.equal(await field('Price').inputValue(), '69.90')
      assert.equal(await field('Compare-at price').inputValue(), '79.00')
      const variants = page.locator('section.variants')
      assert.equal(await variants.locator('tbody td.number').first().textContent(), '74.50')
      await page.getByRole('button', { name: 'Edit variant Wool' }).click()
      assert.equal(await field('Variant price').inputValue(), '74.50')
      await variants.getByRole('button', { name: 'Cancel' }).click()
      // A formatted price is not a change: Save sends nothing.
      await button('Save').click()
      await notice().getByText('Nothing changed.').waitFor()
    })

    it('holds its layout at 390, 768 and 1280 px wide', async () => {
      const long = await api.createProduct({
        name: 'Heavyweight Organic Cotton Hooded Sweatshirt',
        description: '<p>Brushed <strong>organic cotton</strong>, 480 g/m².</p>',
        price: 69.9,
        vendor: 'Atelier Lyon',
        tags: ['cotton', 'winter'],
      })
      await addVariant(api, long.id, {
        name: 'Extra Large / Heather Grey',
        sku: 'HW-HOOD-XL-HEATHER-GREY',
        price: 74.9,
        options: { size: 'XL', color: 'heather grey' },
      })
      /** Fails when the page scrolls sideways, or when an element's text takes over 2 lines. */
      const assertHolds = async (at: Page, width: number, screen: string, selector: string) => {
        const layout = await at.evaluate(
          `(() => {
            const lines = [...document.querySelectorAll(${JSON.stringify(selector)})].map((element) => {
              // The lines its text takes: one box per line, whatever the height of its cell.
              const range = document.createRange()
              range.selectNodeContents(element)
              return new Set([...range.getClientRects()].map((box) => Math.round(box.top))).size
            })
            return { scrollWidth: document.documentElement.scrollWidth, lines }
          })()`,
        )
        const { scrollWidth, lines } = layout as { scrollWidth: number; lines: number[] }
        assert.ok(
          scrollWidth <= width,
          `${screen} at ${width} px: the page is ${scrollWidth} px wide`,
        )
        assert.ok(lines.length > 0, `${screen} at ${width} px: ${selector} is there`)
        assert.ok(
          Math.max(...lines) <= 2,
          `${screen} at ${width} px: ${selector} takes ${Math.max(...lines)} lines`,
        )
      }
      for (const width of [390, 768, 1280]) {
        const at = await pageOfItsOwn(base, cleanups, api.key, { width, height: 844 })
        await at.page.getByRole('heading', { name: 'Products', exact: true }).waitFor()
        await at.page.getByRole('link', { name: long.name }).waitFor()
        await screenshot(at.page, dialect, `16-products-${width}`)
        await assertHolds(at.page, width, 'products', 'main table tbody td:first-child a')
        await at.page.getByRole('link', { name: long.name }).click()
        await at.page.getByRole('heading', { name: long.name }).waitFor()
        await at.page
          .getByRole('cell', { name: 'Extra Large / Heather Grey', exact: true })
          .waitFor()
        await screenshot(at.page, dialect, `17-product-${width}`)
        await assertHolds(at.page, width, 'product', 'main h1')
        await assertHolds(at.page, width, 'product', 'section.variants tbody td:first-child')
        assert.deepEqual(at.problems, [])
      }
    })

    it('a read key sees everything and no edit control', async () => {
      const readKey = await api.newKey({ scopes: ['read'] })
      const shown = await api.createProduct({
        name: 'Read Only Tee',
        description: 'Organic cotton, regular fit.',
        price: 24,
        compare_at_price: 29,
        sku: 'RO-TEE',
        tax_rate: 20,
        vendor: 'Atelier Lyon',
        product_type: 'T-Shirts',
        tags: ['cotton', 'basics'],
        status: 'active',
      })
      await addVariant(api, shown.id, { name: 'One size', sku: 'RO-TEE-OS' })
      await addVariant(api, shown.id, {
        name: 'XL',
        sku: 'RO-TEE-XL',
        price: 26,
        options: { size: 'XL' },
      })
      const reader = await pageOfItsOwn(base, cleanups, readKey)
      const readPage = reader.page
      await readPage.getByRole('heading', { name: 'Products', exact: true }).waitFor()
      await readPage.getByText('Read only', { exact: true }).waitFor()
      const readAnswers = await Promise.all(reader.requests.map((request) => request.response()))
      assert.deepEqual(refusedOf(readAnswers), [], 'a read key learns its scopes without a 403')
      assert.equal(await readPage.getByRole('button', { name: 'New product' }).count(), 0)
      await readPage.getByRole('link', { name: 'Read Only Tee' }).click()
      await readPage.getByRole('heading', { name: 'Read Only Tee' }).waitFor()
      await readPage.getByRole('cell', { name: 'One size' }).waitFor()
      assert.equal(await readPage.locator('main input, main select, main textarea').count(), 0)
      assert.deepEqual(await readPage.locator('main button').allTextContents(), [])
      await checkAccessibility(readPage, 'read-only product')
      await screenshot(readPage, dialect, '8-read-only')

      await readPage.getByRole('button', { name: 'Sign out' }).click()
      await readPage.getByLabel('API key').waitFor()
      assert.equal(await readPage.evaluate(() => (globalThis as any).sessionStorage.length), 0)
      assert.deepEqual(reader.problems, [])
      assertOnlyTheService(reader.requests, base)
    })

    it('the page asked nothing of any host but the service, and nothing went wrong in it', () => {
      assert.deepEqual(watched.problems, [])
      assertOnlyTheService(watched.requests, base)
    })
  })
}

if (!POSTGRES_URL) {
  describe('admin page [postgres]', () => {
    it('needs TEST_POSTGRES_URL', { skip: 'TEST_POSTGRES_URL is not set' }, () => {})
  })
}
