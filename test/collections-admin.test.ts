import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { Page } from 'playwright-core'
import {
  assertOnlyTheService,
  checkAccessibility,
  pageOfItsOwn,
  screenshot,
  skip,
  suiteContext,
  type Watched,
} from './admin-browser.js'
import { addVariant, buildTestApi, DIALECTS, type TestApi } from './helpers.js'

/** The admin page's Collections screens, in Chromium, on each database. */

const matches = (count: number) =>
  `${count} ${count === 1 ? 'product matches' : 'products match'} these conditions now.`

for (const dialect of DIALECTS) {
  describe(`admin page: collections [${dialect}]`, { skip, timeout: 240_000 }, () => {
    const cleanups: (() => unknown)[] = []
    let api: TestApi
    let base: string
    let watched: Watched
    let page: Page
    const products: Record<string, string> = {}

    before(async () => {
      api = await buildTestApi(suiteContext(cleanups), dialect)
      base = await api.app.listen({ host: '127.0.0.1', port: 0 })
      const definition = await api.post('/metafield-definitions', {
        owner: 'product',
        namespace: 'custom',
        key: 'fabric',
        type: 'single_line_text_field',
        name: 'Fabric',
        filterable: true,
      })
      assert.equal(definition.statusCode, 200, definition.body)
      const seed: Record<string, unknown>[] = [
        { name: 'Sun cream', price: 8 },
        { name: 'Straw hat', price: 12, product_type: 'Hats', status: 'active' },
        { name: 'Wool Scarf', price: 19.5, vendor: 'Globex', tags: ['winter'] },
        {
          name: 'Linen Shirt',
          price: 45,
          vendor: 'Acme',
          tags: ['Summer'],
          status: 'active',
          metafields: { 'custom.fabric': 'Linen' },
        },
      ]
      for (const body of seed) {
        products[body.name as string] = (await api.createProduct(body)).id
      }
      await addVariant(api, products['Linen Shirt']!, { name: 'Blue', options: { Color: 'Blue' } })
      watched = await pageOfItsOwn(base, cleanups, api.key)
      page = watched.page
      await page.getByRole('heading', { name: 'Products', level: 1 }).waitFor()
    })
    after(async () => {
      for (const cleanup of cleanups.reverse()) await cleanup()
    })

    const field = (label: string) => page.getByLabel(label, { exact: true })
    const button = (name: string) => page.getByRole('button', { name, exact: true })
    const collections = async () => (await api.get('/collections?limit=200')).json().data
    const rule = (n: number, part: string) => field(`Condition ${n}: ${part}`)

    /** The count the page shows once its preview of `rules` is answered, the API's own. */
    async function countShown(rules: unknown[], disjunctive: boolean, act: () => Promise<void>) {
      const answered = page.waitForResponse(
        (response) =>
          response.url().endsWith('/collections/preview') &&
          JSON.stringify(JSON.parse(response.request().postData() ?? 'null')) ===
            JSON.stringify({ rules, disjunctive }),
      )
      await act()
      const response = await answered
      assert.equal(response.status(), 200)
      const { productsCount } = (await response.json()).data
      const expected = (await api.post('/collections/preview', { rules, disjunctive })).json()
      assert.equal(productsCount, expected.data.productsCount)
      await page.locator('.match-count', { hasText: matches(productsCount) }).waitFor()
      return productsCount as number
    }

    it('lists collections with their kind and product count, a page at a time', async () => {
      for (let i = 1; i <= 21; i++) {
        const body =
          i % 2 === 0
            ? { title: `Smart ${i}`, rules: [{ field: 'price', relation: 'less_than', value: 20 }] }
            : { title: `Manual ${i}` }
        assert.equal((await api.post('/collections', body)).statusCode, 200)
      }
      await page
        .getByRole('navigation', { name: 'Sections' })
        .getByRole('link', { name: 'Collections' })
        .click()
      await page.getByRole('heading', { name: 'Collections', level: 1 }).waitFor()
      const newest = page.getByRole('row').filter({ hasText: 'Manual 21' })
      await newest.waitFor()
      assert.deepEqual(
        await newest
          .getByRole('cell')
          .allInnerTexts()
          .then((c) => c.slice(0, 4)),
        ['Manual 21', 'manual-21', 'Manual', '0'],
      )
      const smart = page.getByRole('row').filter({ hasText: 'Smart 20' })
      assert.deepEqual(
        await smart
          .getByRole('cell')
          .allInnerTexts()
          .then((c) => c.slice(0, 4)),
        ['Smart 20', 'smart-20', 'Smart', '3'],
      )
      assert.equal(await page.locator('tbody tr').count(), 20)
      await checkAccessibility(page, 'collections')
      await screenshot(page, dialect, '13-collections')
      await button('Next').click()
      await page.getByRole('link', { name: 'Manual 1', exact: true }).waitFor()
      assert.equal(await page.locator('tbody tr').count(), 1)
      await button('Previous').click()
      await page.getByRole('link', { name: 'Manual 21' }).waitFor()
      for (const c of await collections()) {
        assert.equal((await api.delete(`/collections/${c.id}`)).statusCode, 200)
      }
    })

    it('the rule editor counts the matches of every field and relation before saving', async () => {
      await page.goto(`${base}/admin#/collections/new`)
      await page.getByRole('heading', { name: 'New collection', level: 1 }).waitFor()
      await page.getByLabel('Smart: every product that matches conditions').check()
      await field('Title').fill('Under 20')
      const cases: [string, string, string, string | number][] = [
        ['name', '', 'equals', 'sun cream'],
        ['name', '', 'not_equals', 'Sun Cream'],
        ['name', '', 'contains', 'S'],
        ['name', '', 'not_contains', 'shirt'],
        ['name', '', 'starts_with', 'st'],
        ['name', '', 'ends_with', 'HAT'],
        ['vendor', '', 'not_contains', 'acm'],
        ['product_type', '', 'equals', 'hats'],
        ['tag', '', 'equals', 'summer'],
        ['tag', '', 'not_equals', 'summer'],
        ['price', '', 'equals', 12],
        ['price', '', 'greater_than', 19.5],
        ['price', '', 'less_than', 20],
        ['status', '', 'equals', 'draft'],
        ['status', '', 'not_equals', 'draft'],
        ['option', 'Color', 'equals', 'blue'],
        ['metafield', 'custom.fabric', 'equals', 'LINEN'],
      ]
      let count = 0
      for (const [kind, name, relation, value] of cases) {
        const fieldName = name ? `${kind}.${name}` : kind
        const rules = [{ field: fieldName, relation, value }]
        count = await countShown(rules, false, async () => {
          await rule(1, 'field').selectOption(kind)
          if (kind === 'option') await rule(1, 'option name').fill(name)
          if (kind === 'metafield') await rule(1, 'attribute').selectOption(name)
          await rule(1, 'relation').selectOption(relation)
          if (kind === 'status') await rule(1, 'value').selectOption(String(value))
          else await rule(1, 'value').fill(String(value))
        })
      }
      assert.equal(count, 1, 'the linen shirt')
      assert.deepEqual(await collections(), [], 'nothing saved while editing')

      // Two conditions, all of them, then any of them.
      await rule(1, 'field').selectOption('price')
      await rule(1, 'relation').selectOption('less_than')
      await button('Add condition').click()
      const two = [
        { field: 'price', relation: 'less_than', value: 20 },
        { field: 'status', relation: 'equals', value: 'active' },
      ]
      const all = await countShown(two, false, async () => {
        await rule(1, 'value').fill('20')
        await rule(2, 'field').selectOption('status')
      })
      assert.equal(all, 1)
      const any = await countShown(two, true, () =>
        page.getByLabel('any condition', { exact: true }).check(),
      )
      assert.equal(any, 4)
      await field('Sort order').selectOption('price')
      await checkAccessibility(page, 'rule editor')
      await screenshot(page, dialect, '14-rule-editor')
      await button('Save').click()
      await page.getByText('Created “Under 20”.').waitFor()
      const [saved] = await collections()
      assert.equal(saved.kind, 'smart')
      assert.deepEqual(saved.rules, two)
      assert.equal(saved.disjunctive, true)
      assert.equal(saved.sortOrder, 'price')
      assert.equal(saved.productsCount, 4)
      // Its products, in its order (price, lowest first), without controls.
      const names = page.locator('.member-table tbody td:nth-child(2)')
      await page.locator('.member-table tbody tr').nth(3).waitFor()
      assert.deepEqual(await names.allInnerTexts(), [
        'Sun cream',
        'Straw hat',
        'Wool Scarf',
        'Linen Shirt',
      ])
      assert.equal(await page.getByRole('button', { name: /^Move/ }).count(), 0)
    })

    it('shows the API errors beside their field: a rule, the title, a taken handle', async () => {
      await page.goto(`${base}/admin#/collections/new`)
      await page.getByRole('heading', { name: 'New collection', level: 1 }).waitFor()
      await page.getByLabel('Smart: every product that matches conditions').check()
      await rule(1, 'field').selectOption('price')
      await rule(1, 'relation').selectOption('less_than')
      await rule(1, 'value').fill('cheap')
      // The preview refuses it before any save.
      await page.locator('#rule-0-error', { hasText: 'must be a number' }).waitFor()
      assert.equal(await rule(1, 'value').getAttribute('aria-invalid'), 'true')
      await button('Save').click()
      await page.locator('#collection-title-error').waitFor()
      await page.locator('#rule-0-error', { hasText: 'must be a number' }).waitFor()
      await field('Title').fill('Cheap')
      await field('Handle').fill('under-20')
      await rule(1, 'value').fill('15')
      await page.locator('.match-count', { hasText: matches(2) }).waitFor()
      await button('Save').click()
      await page
        .locator('#collection-handle-error', { hasText: 'Another collection in your store' })
        .waitFor()
      assert.equal(await field('Handle').getAttribute('aria-invalid'), 'true')
      await checkAccessibility(page, 'collection errors')
      assert.equal((await collections()).length, 1, 'nothing saved')
    })

    it('edits with If-Match, sending only the changes, and says so on a 412', async () => {
      const [saved] = await collections()
      await page.goto(`${base}/admin#/collections/${saved.id}`)
      await page.getByRole('heading', { name: 'Under 20', level: 1 }).waitFor()
      await page.locator('.match-count', { hasText: matches(4) }).waitFor()
      const behind = await api.patch(
        `/collections/${saved.id}`,
        { description: 'Changed elsewhere.' },
        { headers: { 'if-match': '"1"' } },
      )
      assert.equal(behind.statusCode, 200, behind.body)
      await field('Title').fill('Under 20, mine')
      await button('Save').click()
      const warning = page
        .getByRole('alert')
        .filter({ hasText: 'Someone else changed this collection' })
      await warning.waitFor()
      assert.equal((await api.get(`/collections/${saved.id}`)).json().data.title, 'Under 20')
      await warning.getByRole('button', { name: 'Reload' }).click()
      await warning.waitFor({ state: 'detached' })
      assert.equal(await field('Description').inputValue(), 'Changed elsewhere.')

      await field('Title').fill('Cheap and active')
      await page.getByLabel('all conditions', { exact: true }).check()
      await page.locator('.match-count', { hasText: matches(1) }).waitFor()
      const sent = page.waitForRequest(
        (request) => request.method() === 'PATCH' && request.url().endsWith(saved.id),
      )
      await button('Save').click()
      const request = await sent
      assert.equal(request.headers()['if-match'], '"2"')
      assert.equal(request.headers()['content-type'], 'application/merge-patch+json')
      assert.deepEqual(JSON.parse(request.postData()!), {
        title: 'Cheap and active',
        disjunctive: false,
      })
      await page.getByText('Saved.').waitFor()
      const stored = (await api.get(`/collections/${saved.id}`)).json().data
      assert.equal(stored.productsCount, 1)
      assert.equal(stored.version, 3)
      await page.locator('.member-table tbody tr', { hasText: 'Straw hat' }).waitFor()
      assert.equal(await page.locator('.member-table tbody tr').count(), 1)
    })

    it('deletes after a confirmation, with If-Match; the products stay', async () => {
      const [saved] = await collections()
      await page.goto(`${base}/admin#/collections/${saved.id}`)
      await page.getByRole('heading', { name: 'Cheap and active', level: 1 }).waitFor()
      await button('Delete collection').click()
      const dialog = page.getByRole('dialog', { name: 'Delete this collection?' })
      await dialog.waitFor()
      const sent = page.waitForRequest((request) => request.method() === 'DELETE')
      await dialog.getByRole('button', { name: 'Delete collection' }).click()
      assert.equal((await sent).headers()['if-match'], '"3"')
      await page.getByText('Deleted “Cheap and active”.').waitFor()
      await page.getByRole('heading', { name: 'Collections', level: 1 }).waitFor()
      assert.equal((await api.get(`/collections/${saved.id}`)).statusCode, 404)
      assert.equal((await api.get(`/products/${products['Straw hat']}`)).statusCode, 200)
    })

    it('a manual collection: products found by search, added, moved and removed', async () => {
      await page.goto(`${base}/admin#/collections/new`)
      await page.getByRole('heading', { name: 'New collection', level: 1 }).waitFor()
      assert.equal(await page.locator('.rule-editor').count(), 0)
      await field('Title').fill('Staff picks')
      await button('Save').click()
      await page.getByText('Created “Staff picks”.').waitFor()
      const [picks] = await collections()
      assert.equal(picks.kind, 'manual')
      assert.equal(picks.sortOrder, 'manual')
      const search = async (q: string) => {
        await field('Find products to add').fill(q)
        await button('Search').click()
      }
      await search('!!')
      await page.locator('#member-q-error').waitFor()
      for (const [q, name] of [
        ['linen', 'Linen Shirt'],
        ['straw', 'Straw hat'],
        ['scarf', 'Wool Scarf'],
      ] as const) {
        await search(q)
        await button(`Add “${name}”`).click()
        await page.getByText(`Added “${name}”.`).waitFor()
      }
      await button('Add “Wool Scarf”').click()
      await page.getByText('“Wool Scarf” is already in this collection.').waitFor()
      const order = async () =>
        (await api.get(`/collections/${picks.id}/products`)).json().data.map((p: any) => p.name)
      assert.deepEqual(await order(), ['Linen Shirt', 'Straw hat', 'Wool Scarf'])
      await page.locator('.meta', { hasText: '3 products' }).waitFor()
      await button('Move “Wool Scarf” up').click()
      await page.getByText('Moved “Wool Scarf” to position 2.').waitFor()
      await button('Move “Linen Shirt” down').click()
      await page.getByText('Moved “Linen Shirt” to position 2.').waitFor()
      assert.deepEqual(await order(), ['Wool Scarf', 'Linen Shirt', 'Straw hat'])
      const names = page.locator('.member-table tbody td:nth-child(2)')
      assert.deepEqual(await names.allInnerTexts(), ['Wool Scarf', 'Linen Shirt', 'Straw hat'])
      await checkAccessibility(page, 'manual collection')
      await screenshot(page, dialect, '15-manual-collection')
      await button('Remove “Linen Shirt”').click()
      await page.getByText('Removed “Linen Shirt”.').waitFor()
      assert.deepEqual(await order(), ['Wool Scarf', 'Straw hat'])
      await page.locator('.meta', { hasText: '2 products' }).waitFor()
      assert.deepEqual(watched.problems, [])
      assertOnlyTheService(watched.requests, base)
    })

    it('a read key sees the collections and their products, without an edit control', async () => {
      const readKey = await api.newKey({ scopes: ['read'] })
      const reader = await pageOfItsOwn(base, cleanups, readKey)
      const readPage = reader.page
      await readPage.getByRole('heading', { name: 'Products', level: 1 }).waitFor()
      await readPage.goto(`${base}/admin#/collections`)
      await readPage.getByRole('link', { name: 'Staff picks' }).click()
      await readPage.getByRole('heading', { name: 'Staff picks', level: 1 }).waitFor()
      await readPage.locator('.member-table tbody tr', { hasText: 'Straw hat' }).waitFor()
      assert.equal(await readPage.getByRole('button', { name: 'Save' }).count(), 0)
      assert.equal(await readPage.getByRole('button', { name: /^(Move|Remove|Add)/ }).count(), 0)
      assert.equal(await readPage.getByLabel('Find products to add').count(), 0)
      await readPage.goto(`${base}/admin#/collections`)
      await readPage.getByRole('heading', { name: 'Collections', level: 1 }).waitFor()
      assert.equal(await readPage.getByRole('button', { name: 'New collection' }).count(), 0)
      await checkAccessibility(readPage, 'collections, read only')
      assert.deepEqual(reader.problems, [])
    })
  })
}
