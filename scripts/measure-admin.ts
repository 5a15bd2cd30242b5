// npx tsx scripts/measure-admin.ts (after npm run build): the admin page's size on the wire
// and its first load in Debian's Chromium, cold (a new browser context: empty cache) each run.
import { cpus, loadavg } from 'node:os'
import { chromium } from 'playwright-core'
import { buildApp } from '../src/app.js'
import { createApiKey } from '../src/auth/api-key.service.js'
import { createDatabase } from '../src/db/database.js'
import { migrateToLatest } from '../src/db/migrate.js'

const RUNS = 10

const database = createDatabase('sqlite::memory:')
await migrateToLatest(database)
const { key } = await createApiKey(database, { store: 'measure', scopes: ['read', 'write'] })
const app = buildApp({ database })
const base = await app.listen({ host: '127.0.0.1', port: 0 })
for (let i = 1; i <= 50; i++) {
  await app.inject({
    method: 'POST',
    url: '/api/commerce/v1/products',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    payload: JSON.stringify({ name: `Product ${i}`, price: i, status: 'active' }),
  })
}

const page = await app.inject({ url: '/admin' })
const assets = Array.from(page.body.matchAll(/(?:src|href)="(\/admin\/assets\/[^"]+)"/g))
const files = ['/admin', ...assets.map((match) => match[1]!)]
let identity = 0
let brotli = 0
let gzip = 0
for (const url of files) {
  const size = async (encoding?: string) =>
    (await app.inject({ url, headers: encoding ? { 'accept-encoding': encoding } : {} })).rawPayload
      .length
  identity += await size()
  brotli += await size('br')
  gzip += await size('gzip')
}
const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KiB`
console.log(`files: ${files.join(', ')}`)
console.log(`size: ${kb(identity)} raw, ${kb(gzip)} gzip, ${kb(brotli)} brotli`)

const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run'],
})
const signIn: number[] = []
const products: number[] = []
for (let run = 0; run < RUNS; run++) {
  const context = await browser.newContext()
  const tab = await context.newPage()
  await context.addInitScript(
    `sessionStorage.setItem('catalog-admin-key', ${run % 2 === 1 ? JSON.stringify(key) : 'null'})`,
  )
  const start = Date.now()
  await tab.goto(`${base}/admin`)
  if (run % 2 === 0) {
    // The sign-in screen, from nothing: the page, its script and style, its first render.
    await tab.getByLabel('API key').waitFor()
    signIn.push(Date.now() - start)
  } else {
    // Signed in already: also the key's check and the first page of 20 products.
    await tab.locator('tbody tr').nth(19).waitFor()
    products.push(Date.now() - start)
  }
  await context.close()
}
await browser.close()
await app.close()
await database.close()

const summary = (times: number[]) => {
  const sorted = [...times].sort((a, b) => a - b)
  return `median ${sorted[Math.floor(sorted.length / 2)]} ms, max ${sorted[sorted.length - 1]} ms`
}
console.log(`first load to the sign-in form (${signIn.length} cold runs): ${summary(signIn)}`)
console.log(
  `machine: ${cpus().length} cores, load average ${loadavg()
    .map((load) => load.toFixed(1))
    .join(' ')}`,
)
console.log(`first load to the products table (${products.length} cold runs): ${summary(products)}`)
