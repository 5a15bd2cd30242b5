import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { BrowserContext, Page } from 'playwright-core'
import { checkAccessibility, launch, openPage, skip, suiteContext } from './admin-browser.js'
import { buildTestApi, DIALECTS, type TestApi } from './helpers.js'

for (const dialect of DIALECTS) {
  describe(`admin page: custom attributes [${dialect}]`, { skip, timeout: 180_000 }, () => {
    const cleanups: (() => unknown)[] = []
    let api: TestApi
    let base: string
    let context: BrowserContext
    let page: Page

    before(async () => {
      const t = suiteContext(cleanups)
      api = await buildTestApi(t, dialect)
      base = await api.app.listen({ host: '127.0.0.1', port: 0 })
      context = await (await launch()).newContext({ viewport: { width: 1280, height: 900 } })
      cleanups.push(() => context.close())
      page = (await openPage(context)).page
    })
    after(async () => {
      for (const cleanup of cleanups.reverse()) await cleanup()
    })

    const field = (label: string) => page.getByLabel(label, { exact: true })
    const button = (name: string) => page.getByRole('button', { name, exact: true })

    it('creates definitions on their screen, with the API error beside the field', async () => {
      await page.goto(`${base}/admin`)
      await field('API key').fill(api.key)
      await button('Sign in').click()
      await page.getByRole('heading', { name: 'Products', exact: true }).waitFor()
      await page
        .getByRole('navigation', { name: 'Sections' })
        .getByRole('link', { name: 'Custom attributes' })
        .click()
      await page.getByRole('heading', { name: 'Custom attributes', level: 1 }).waitFor()
      await field('Namespace').fill('custom')
      await field('Key').fill('X')
      await field('Name').fill('Recycled')
      await field('Type').selectOption('boolean')
      await button('Create').click()
      await page.locator('#definition-key-error').waitFor()
      await field('Key').fill('recycled')
      await button('Create').click()
      await page.getByText('Created “Recycled”.').waitFor()
      await field('Namespace').fill('custom')
      await field('Key').fill('seats')
      await field('Name').fill('Seats')
      await field('Type').selectOption('number_integer')
      await button('Create').click()
      await page.getByText('Created “Seats”.').waitFor()
      await page.getByRole('cell', { name: 'custom.seats' }).waitFor()
      await checkAccessibility(page, 'custom attributes')
      const definitions = (await api.get('/metafield-definitions')).json().data
      assert.deepEqual(definitions.map((d: { key: string }) => d.key).sort(), ['recycled', 'seats'])
    })

    it('the product form adds an input per attribute chosen: a checkbox for a boolean, errors beside', async () => {
      const product = await api.createProduct({ name: 'Bench' })
      await page.goto(`${base}/admin#/products/${product.id}`)
      await page.getByRole('heading', { name: 'Bench', level: 1 }).waitFor()
      // Only the attributes set have an input; the others are added by name.
      assert.equal(await page.locator('.field-metafield').count(), 0)
      for (const name of ['Recycled', 'Seats']) {
        await field('Add attribute').selectOption({ label: name })
        await button('Add').click()
      }
      const recycled = field('Recycled')
      assert.equal(await recycled.getAttribute('type'), 'checkbox')
      await recycled.check()
      await field('Seats').fill('-1.5')
      await button('Save').click()
      await page.locator('[id="product-mf-custom.seats-error"]').waitFor()
      await field('Seats').fill('4')
      await button('Save').click()
      await page.getByText('Saved.').waitFor()
      const read = (await api.get(`/products/${product.id}`)).json().data
      assert.deepEqual(read.metafields, { 'custom.recycled': true, 'custom.seats': 4 })
      await checkAccessibility(page, 'product with custom attributes')
    })
  })
}
