// What the admin page's browser tests share: Chromium, a watched page, axe-core, screenshots.
import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { mkdir } from 'node:fs/promises'
import { after, type TestContext } from 'node:test'
import { fileURLToPath } from 'node:url'
import axe from 'axe-core'
import { type Browser, type BrowserContext, type Page, type Request } from 'playwright-core'
import { ADMIN_BUILD_DIR } from '../src/admin/admin.routes.js'
import { chromiumMissing, launchChromium } from './chromium.js'

export const TIMEOUT_MS = 15_000
/** With ADMIN_SCREENSHOTS=1, the SQLite run writes a screenshot of each screen to docs/admin/. */
const SCREENSHOTS = process.env.ADMIN_SCREENSHOTS === '1'
const SCREENSHOT_DIR = fileURLToPath(new URL('../docs/admin/', import.meta.url))

export const skip = chromiumMissing
  ? chromiumMissing
  : !existsSync(`${ADMIN_BUILD_DIR}/index.html`)
    ? 'the admin page is not built: npm run build'
    : false

let browser: Browser | undefined
export async function launch(): Promise<Browser> {
  browser ??= await launchChromium()
  return browser
}
after(() => browser?.close())

/** What a page did that a test must see: every URL it asked for, and anything that went wrong. */
export interface Watched {
  page: Page
  requests: Request[]
  problems: string[]
  dialogs: string[]
}

export async function openPage(context: BrowserContext): Promise<Watched> {
  const page = await context.newPage()
  page.setDefaultTimeout(TIMEOUT_MS)
  const watched: Watched = { page, requests: [], problems: [], dialogs: [] }
  page.on('request', (request) => watched.requests.push(request))
  page.on('console', (message) => {
    // A refused request is the API's answer, shown by the page; anything else is a problem.
    if (message.type() === 'error' && !/status of 4\d\d/.test(message.text())) {
      watched.problems.push(`console error: ${message.text()}`)
    }
  })
  page.on('pageerror', (error) => watched.problems.push(`page error: ${error.message}`))
  page.on('dialog', (dialog) => {
    watched.dialogs.push(dialog.message())
    void dialog.dismiss()
  })
  return watched
}

/**
 * A page in a browser context of its own (cleaned up with the suite), at the sign-in form of
 * `base`; with `key`, signed in with it (the form sent: wait for the screen that follows).
 */
export async function pageOfItsOwn(
  base: string,
  cleanups: (() => unknown)[],
  key?: string,
  viewport = { width: 1280, height: 900 },
): Promise<Watched> {
  const context = await (await launch()).newContext({ viewport })
  cleanups.push(() => context.close())
  const watched = await openPage(context)
  await watched.page.goto(`${base}/admin`)
  if (key !== undefined) {
    await watched.page.getByLabel('API key').fill(key)
    await watched.page.getByRole('button', { name: 'Sign in' }).click()
  }
  return watched
}

/** Runs axe-core in the page; fails on any serious or critical violation. */
export async function checkAccessibility(page: Page, screen: string): Promise<void> {
  await page.evaluate(axe.source)
  const { passed, violations } = await page.evaluate(async () => {
    const browser = globalThis as any
    const result = await browser.axe.run(browser.document, { resultTypes: ['violations'] })
    return {
      passed: result.passes.length,
      violations: result.violations.map((violation: any) => ({
        id: violation.id,
        impact: violation.impact,
        help: violation.help,
        nodes: violation.nodes.map((node: any) => node.target.join(' ')),
      })),
    }
  })
  assert.ok(passed > 10, `axe-core ran its checks on the ${screen} screen`)
  const serious = violations.filter((v: any) => v.impact === 'serious' || v.impact === 'critical')
  assert.deepEqual(serious, [], `axe-core on the ${screen} screen`)
}

export async function screenshot(page: Page, dialect: string, name: string, fullPage = true) {
  if (!SCREENSHOTS || dialect !== 'sqlite') return
  await mkdir(SCREENSHOT_DIR, { recursive: true })
  await page.screenshot({ path: `${SCREENSHOT_DIR}${name}.png`, fullPage })
}

/** A TestContext for what lives as long as a suite: its clean-ups run after the suite. */
export function suiteContext(cleanups: (() => unknown)[]): TestContext {
  return { after: (fn: () => unknown) => cleanups.push(fn) } as unknown as TestContext
}

export function assertOnlyTheService(requests: Request[], base: string): void {
  const elsewhere = requests
    .map((request) => request.url())
    .filter((url) => !url.startsWith(`${base}/`))
  assert.deepEqual(elsewhere, [])
  assert.ok(requests.length > 3, 'the page was watched')
}
