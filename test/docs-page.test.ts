import assert from 'node:assert/strict'
import { mkdir } from 'node:fs/promises'
import { it } from 'node:test'
import { fileURLToPath } from 'node:url'
import { chromiumMissing, launchChromium } from './chromium.js'
import { buildTestApi } from './helpers.js'

const SCREENSHOT = fileURLToPath(new URL('../artifacts/docs-page.png', import.meta.url))
const TIMEOUT_MS = 30_000

it(
  'the docs page loads in Chromium without errors, from the service alone, and shows both creation endpoints',
  { skip: chromiumMissing, timeout: 4 * TIMEOUT_MS },
  async (t) => {
    const { app } = await buildTestApi(t, 'sqlite')
    const base = await app.listen({ host: '127.0.0.1', port: 0 })
    const browser = await launchChromium(TIMEOUT_MS)
    t.after(() => browser.close())
    const page = await browser.newPage({ viewport: { width: 1280, height: 1600 } })
    page.setDefaultTimeout(TIMEOUT_MS)

    const problems: string[] = []
    const requested: string[] = []
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(`console error: ${message.text()}`)
    })
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`))
    page.on('request', (request) => requested.push(request.url()))
    page.on('requestfailed', (request) =>
      problems.push(`failed: ${request.url()} ${request.failure()?.errorText}`),
    )
    page.on('response', (response) => {
      if (response.status() >= 400) problems.push(`${response.status()}: ${response.url()}`)
    })

    await page.goto(`${base}/docs`, { waitUntil: 'networkidle' })
    assert.equal(await page.title(), 'Catalogue service: API reference')
    const operation = (method: string, path: string) =>
      page.locator(`.opblock-${method} .opblock-summary-path[data-path="${path}"]`)
    const createProduct = operation('post', '/api/commerce/v1/products')
    const addVariant = operation('post', '/api/commerce/v1/products/{id}/variants')
    await createProduct.waitFor({ state: 'visible' })
    await addVariant.waitFor({ state: 'visible' })

    // The request example of the document shows when the operation is opened.
    await createProduct.click()
    await page.getByText('Crème Brûlée T-Shirt').first().waitFor({ state: 'visible' })
    await page.waitForLoadState('networkidle')

    await mkdir(fileURLToPath(new URL('.', `file://${SCREENSHOT}`)), { recursive: true })
    await page.screenshot({ path: SCREENSHOT, fullPage: true })

    assert.deepEqual(problems, [])
    const elsewhere = requested.filter((url) => !url.startsWith(`${base}/`))
    assert.deepEqual(elsewhere, [], 'the page fetches nothing from anywhere but the service')
    assert.ok(requested.includes(`${base}/docs/json`), requested.join('\n'))
  },
)
