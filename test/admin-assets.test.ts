import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { it } from 'node:test'
import { brotliDecompressSync, gunzipSync } from 'node:zlib'
import { ADMIN_BUILD_DIR } from '../src/admin/admin.routes.js'
import { buildTestApi } from './helpers.js'

// The admin page's files are static: what is checked here does not touch the database, so
// one dialect is enough. The page's behaviour on both is test/admin-page.test.ts.
const skip = existsSync(`${ADMIN_BUILD_DIR}/index.html`)
  ? false
  : 'the admin page is not built: npm run build'

function assertSecurityHeaders(headers: Record<string, unknown>): void {
  const policy = String(headers['content-security-policy'])
  for (const directive of [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "connect-src 'self'",
    // Product thumbnails come from the shop's image host, over https only.
    "img-src 'self' https:",
    "object-src 'none'",
    "base-uri 'none'",
    "frame-ancestors 'none'",
    "require-trusted-types-for 'script'",
    // One policy, DOMPurify's: descriptions are HTML, rendered only as it sanitizes them.
    'trusted-types dompurify',
  ]) {
    assert.ok(policy.split('; ').includes(directive), `${directive} in ${policy}`)
  }
  assert.doesNotMatch(policy, /unsafe-|data:|\*/)
  assert.equal(headers['x-content-type-options'], 'nosniff')
  assert.equal(headers['x-frame-options'], 'DENY')
  assert.equal(headers['referrer-policy'], 'no-referrer')
}

it(
  'GET /admin: the page, revalidated each time, with a strict policy, without a key',
  { skip },
  async (t) => {
    const { app } = await buildTestApi(t, 'sqlite')
    for (const url of ['/admin', '/admin/']) {
      const response = await app.inject({ url })
      assert.equal(response.statusCode, 200)
      assert.equal(response.headers['content-type'], 'text/html; charset=utf-8')
      assert.equal(response.headers['cache-control'], 'no-cache')
      assertSecurityHeaders(response.headers)
      assert.match(response.body, /<script type="module" src="\/admin\/assets\/main-\w+\.js">/)
      // No inline script or style: the policy would refuse them.
      assert.doesNotMatch(response.body, /<script>|<style|style=/)
      // The favicon: an asset of the build, so a browser's first load has no 404.
      const icon =
        /<link rel="icon" type="image\/svg\+xml" href="(\/admin\/assets\/favicon-\w+\.svg)"/
      const favicon = await app.inject({ url: icon.exec(response.body)![1]! })
      assert.equal(favicon.statusCode, 200)
      assert.equal(favicon.headers['content-type'], 'image/svg+xml')
      assert.equal(favicon.headers['cache-control'], 'public, max-age=31536000, immutable')
      assert.match(favicon.body, /^<svg /)
    }
  },
)

it(
  'the assets: hashed names cached for a year, right types, compressed as accepted, 304 when unchanged',
  { skip },
  async (t) => {
    const { app } = await buildTestApi(t, 'sqlite')
    const page = (await app.inject({ url: '/admin' })).body
    const script = /src="(\/admin\/assets\/[^"]+\.js)"/.exec(page)![1]!
    const style = /href="(\/admin\/assets\/[^"]+\.css)"/.exec(page)![1]!
    for (const [url, type] of [
      [script, 'text/javascript; charset=utf-8'],
      [style, 'text/css; charset=utf-8'],
    ] as const) {
      const plain = await app.inject({ url })
      assert.equal(plain.statusCode, 200)
      assert.equal(plain.headers['content-type'], type)
      assert.equal(plain.headers['cache-control'], 'public, max-age=31536000, immutable')
      assert.equal(plain.headers['content-encoding'], undefined)
      assert.equal(plain.headers.vary, 'accept-encoding')
      assertSecurityHeaders(plain.headers)

      const br = await app.inject({ url, headers: { 'accept-encoding': 'gzip, deflate, br' } })
      assert.equal(br.headers['content-encoding'], 'br')
      assert.deepEqual(brotliDecompressSync(br.rawPayload), plain.rawPayload)
      assert.ok(br.rawPayload.length < plain.rawPayload.length / 2)

      const gzip = await app.inject({ url, headers: { 'accept-encoding': 'gzip, br;q=0' } })
      assert.equal(gzip.headers['content-encoding'], 'gzip')
      assert.deepEqual(gunzipSync(gzip.rawPayload), plain.rawPayload)

      const again = await app.inject({ url, headers: { 'if-none-match': plain.headers.etag! } })
      assert.equal(again.statusCode, 304)
      assert.equal(again.body, '')

      const head = await app.inject({ method: 'HEAD', url })
      assert.equal(head.statusCode, 200)
      assert.equal(head.headers['content-type'], type)
    }
  },
)

it(
  'an unknown asset is the contract error 404, with the same headers; no path leads out',
  { skip },
  async (t) => {
    const { app } = await buildTestApi(t, 'sqlite')
    const unknown = await app.inject({ url: '/admin/assets/nothing.js' })
    assert.equal(unknown.statusCode, 404)
    assert.equal(unknown.json().error, 'not_found')
    assertSecurityHeaders(unknown.headers)
    // Files are looked up by name among those built, never by a path on disk.
    for (const url of [
      '/admin/assets/index.html',
      '/admin/assets/../../package.json',
      '/admin/assets/..%2f..%2fpackage.json',
      '/admin/assets/..%2F..%2F..%2Fpackage.json',
    ]) {
      const response = await app.inject({ url })
      assert.equal(response.statusCode, 404, url)
      assert.equal(response.json().error, 'not_found')
    }
  },
)

it(
  "the page's script offers the webhook form every event type the service takes (collection.* included)",
  { skip },
  async (t) => {
    const { app } = await buildTestApi(t, 'sqlite')
    const page = await app.inject({ url: '/admin/' })
    const src = /<script type="module" src="(\/admin\/assets\/main-\w+\.js)">/.exec(page.body)![1]!
    const script = (await app.inject({ url: src })).body
    // The endpoints' `events` schema, as the served OpenAPI document states it.
    const document = JSON.stringify((await app.inject({ url: '/openapi.json' })).json())
    const list = /"enum":(\["product\.created"[^\]]*\])/.exec(document)
    assert.ok(list, 'the OpenAPI document lists the event types')
    const types = (JSON.parse(list[1]!) as string[]).filter((type) => type !== '*')
    assert.ok(types.includes('collection.products_changed'), types.join(', '))
    // The form's list, in the bundle as one array literal in the service's order.
    const quoted = types.map((type) => `"${type}"`).join(',')
    assert.ok(script.includes(`[${quoted}]`), `the script holds [${quoted}]`)
  },
)
