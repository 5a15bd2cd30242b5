import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { type BrowserContext, type Page, type Request } from 'playwright-core'
import { startDispatcher } from '../src/webhooks/dispatcher.js'
import { createSender } from '../src/webhooks/sender.js'
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
import { startReceiver, type Receiver } from './webhook-receiver.js'

const XSS = '<img src=x onerror=alert(1)>'
const SECRET = /^whsec_[A-Za-z0-9+/]{43}=$/

for (const dialect of DIALECTS) {
  describe(`admin page: webhooks [${dialect}]`, { skip, timeout: 180_000 }, () => {
    const cleanups: (() => unknown)[] = []
    let api: TestApi
    let base: string
    let receiver: Receiver
    /** What the receiver answers each verified attempt with. */
    let answer = 204
    let context: BrowserContext
    let watched: Watched
    let page: Page
    let endpointUrl: string
    let endpointId: string

    before(async () => {
      const t = suiteContext(cleanups)
      // As `catalog serve` with WEBHOOK_ALLOW_PRIVATE=1 and WEBHOOK_RETRY_SCHEDULE=1: the
      // receiver is on loopback, and a failing delivery is failed after one retry a second later.
      api = await buildTestApi(t, dialect, { webhooks: { allowPrivate: true } })
      base = await api.app.listen({ host: '127.0.0.1', port: 0 })
      receiver = await startReceiver(t, () => answer)
      endpointUrl = `${receiver.url}/hooks`
      const sender = createSender({ timeoutMs: 2000, allowPrivate: true })
      cleanups.push(() => sender.close())
      const dispatcher = startDispatcher({
        database: api.database,
        sender,
        timeoutMs: 2000,
        schedule: [1],
        pollIntervalMs: 200,
      })
      cleanups.push(() => dispatcher.stop())
      context = await (await launch()).newContext({ viewport: { width: 1280, height: 900 } })
      cleanups.push(() => context.close())
      await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base })
      watched = await openPage(context)
      page = watched.page
    })
    after(async () => {
      for (const cleanup of cleanups.reverse()) await cleanup()
    })

    const field = (label: string) => page.getByLabel(label, { exact: true })
    const button = (name: string) => page.getByRole('button', { name, exact: true })
    const notice = () => page.locator('.notice')
    const rows = () => page.locator('table.deliveries-table tbody tr')
    const cells = async (row: number) => await rows().nth(row).locator('td').allTextContents()
    const endpoints = async () => (await api.get('/webhook-endpoints')).json().data
    /** The endpoint's deliveries as the API answers them, newest first. */
    const deliveries = async () =>
      (await api.get(`/webhook-endpoints/${endpointId}/deliveries?limit=200`)).json().data

    /** Waits until `check` holds, polling, or fails after 10 s. */
    const until = async (check: () => Promise<boolean>, what: string) => {
      const deadline = Date.now() + 10_000
      while (!(await check())) {
        if (Date.now() > deadline) assert.fail(`${what} not reached within 10 s`)
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
    }
    /** Presses Refresh and waits for the list's answer to it. */
    const refresh = async () => {
      const answered = page.waitForResponse((response) => response.url().includes('/deliveries?'))
      await button('Refresh').click()
      await answered
    }
    /** Records the PATCH and POST requests of `work`. */
    const writes = async (work: () => Promise<void>): Promise<Request[]> => {
      const seen: Request[] = []
      const onRequest = (request: Request) => {
        if (['PATCH', 'POST'].includes(request.method())) seen.push(request)
      }
      page.on('request', onRequest)
      try {
        await work()
      } finally {
        page.off('request', onRequest)
      }
      return seen
    }

    it('signs in and reaches Webhooks by the top bar, which marks it current', async () => {
      await page.goto(`${base}/admin`)
      await field('API key').fill(api.key)
      await button('Sign in').click()
      await page.getByRole('heading', { name: 'Products', exact: true }).waitFor()
      const link = page.getByRole('navigation', { name: 'Sections' }).getByRole('link', {
        name: 'Webhooks',
      })
      await link.click()
      const heading = page.getByRole('heading', { name: 'Webhooks', exact: true, level: 1 })
      await heading.waitFor()
      assert.equal(await link.getAttribute('aria-current'), 'page')
      await page.getByText('signed the Standard Webhooks way').waitFor()
      await page.getByRole('cell', { name: 'No endpoints yet.' }).waitFor()
      assert.equal(
        await page.evaluate(() => (globalThis as any).document.activeElement.id),
        'webhooks-heading',
      )
      for (const label of [
        'URL',
        'Description',
        'All events',
        ...['product.created', 'variant.deleted'],
      ]) {
        await field(label).waitFor()
      }
      await page.getByRole('group', { name: 'Events' }).waitFor()
      await checkAccessibility(page, 'webhooks')
    })

    it("the form offers every event type the service takes, collection.* included, in the contract's order", async () => {
      const offered = await page
        .getByRole('group', { name: 'Events' })
        .locator('input[name="events"]')
        .evaluateAll((boxes) => boxes.map((box) => (box as unknown as { value: string }).value))
      const contract = [
        ...['product.created', 'product.updated', 'product.deleted'],
        ...['variant.created', 'variant.updated', 'variant.deleted'],
        ...['collection.created', 'collection.updated', 'collection.deleted'],
        'collection.products_changed',
      ]
      assert.deepEqual(offered, ['*', ...contract])
      // The same list as the endpoints' `events` schema in the served OpenAPI document.
      const document = (await api.app.inject({ method: 'GET', url: '/openapi.json' })).json()
      const enums = JSON.stringify(document).match(/"enum":\["product\.created"[^\]]*\]/g) ?? []
      assert.ok(enums.length > 0, 'the OpenAPI document lists the event types')
      for (const list of enums) {
        const types = (JSON.parse(`{${list}}`).enum as string[]).filter((type) => type !== '*')
        assert.deepEqual(types, contract)
      }
    })

    it('All events unchecks and disables the ten types', async () => {
      await field('product.created').check()
      await field('All events').check()
      assert.equal(await field('product.created').isChecked(), false)
      assert.equal(await field('product.created').isDisabled(), true)
      assert.equal(await field('variant.updated').isDisabled(), true)
      await field('All events').uncheck()
      assert.equal(await field('product.created').isDisabled(), false)
      assert.equal(await field('product.created').isChecked(), false)
    })

    it('shows a refused URL next to its field, and creates nothing', async () => {
      for (const [url, message] of [
        ['ftp://x', 'must be an https:// or http:// URL'],
        [`https://example.com/${'x'.repeat(2048)}`, 'must be at most 2048 characters long'],
      ] as const) {
        await field('URL').fill(url)
        await field('product.created').check()
        await button('Add endpoint').click()
        const error = page.locator('#endpoint-new-url-error')
        await error.getByText(message).waitFor()
        assert.equal(await field('URL').getAttribute('aria-invalid'), 'true')
        assert.match(
          (await field('URL').getAttribute('aria-describedby'))!,
          /endpoint-new-url-error/,
        )
        await page.getByRole('alert').getByText('See the fields below.').waitFor()
      }
      assert.equal(await field('Description').getAttribute('aria-invalid'), null)
      await field('product.created').uncheck()
      await field('URL').fill(endpointUrl)
      await button('Add endpoint').click()
      await page
        .locator('#endpoint-new-events-error')
        .getByText('must not be an empty list')
        .waitFor()
      const events = await page
        .getByRole('group', { name: 'Events' })
        .getAttribute('aria-describedby')
      assert.match(events!, /endpoint-new-events-error/)
      assert.equal(await field('product.created').getAttribute('aria-invalid'), 'true')
      assert.equal(await field('URL').getAttribute('aria-invalid'), null)
      await checkAccessibility(page, 'webhook form errors')
      assert.deepEqual(await endpoints(), [])
    })

    it('creates an endpoint from the form and shows its signing secret once', async () => {
      await field('URL').fill(endpointUrl)
      await field('product.created').check()
      await field('Description').fill(`Stock sync ${XSS}`)
      const answered = page.waitForResponse(
        (response) =>
          response.request().method() === 'POST' && response.url().endsWith('/webhook-endpoints'),
      )
      const sent = await writes(() => button('Add endpoint').click())
      const response = await answered
      assert.equal(sent.length, 1)
      assert.deepEqual(JSON.parse(sent[0]!.postData()!), {
        url: endpointUrl,
        events: ['product.created'],
        description: `Stock sync ${XSS}`,
      })
      const created = (await response.json()).data
      endpointId = created.id

      const panel = page.getByRole('region', { name: /copy its signing secret now/ })
      await panel.waitFor()
      const secret = await field('Signing secret').inputValue()
      assert.match(secret, SECRET)
      assert.equal(secret, created.secret)
      assert.equal(await field('Signing secret').getAttribute('readonly'), '')
      await panel.getByText('It is shown only now').waitFor()
      assert.equal(
        await page.evaluate(() => (globalThis as any).document.activeElement.id),
        'secret-title',
      )
      await panel.getByRole('button', { name: 'Copy' }).click()
      await panel.getByRole('status').getByText('Copied.').waitFor()
      assert.equal(
        await page.evaluate(() => (globalThis as any).navigator.clipboard.readText()),
        secret,
      )
      // The receiver verifies every delivery with the secret the page showed.
      receiver.trust('/hooks', secret)

      const link = page.getByRole('link', { name: endpointUrl })
      await link.waitFor()
      const row = page.locator('table.endpoints tbody tr')
      assert.equal(await row.count(), 1)
      assert.deepEqual(await row.locator('td').allTextContents(), [
        endpointUrl,
        'product.created',
        'Enabled',
        `Stock sync ${XSS}`,
      ])
      assert.equal(await page.locator('main img').count(), 0)
      assert.equal(await field('URL').inputValue(), '', 'the form is empty again')
      const stored = await endpoints()
      assert.equal(stored.length, 1)
      assert.deepEqual(stored[0].events, ['product.created'])
      assert.equal(stored[0].secret, undefined)
      await checkAccessibility(page, 'webhooks with the secret')
      await screenshot(page, dialect, '11-webhooks')

      await panel.getByRole('button', { name: 'Dismiss' }).click()
      await panel.waitFor({ state: 'detached' })
      await page.reload()
      await link.waitFor()
      const shown = await page.evaluate(() => {
        const browser = globalThis as any
        const document = browser.document
        const values = [...document.querySelectorAll('input, textarea')].map((e: any) => e.value)
        return [document.body.innerText, ...values, ...Object.values(browser.sessionStorage)]
      })
      assert.ok(!shown.join(' ').includes(secret.slice(6)), 'the secret is gone after a reload')
      assert.equal(await field('Signing secret').count(), 0)
    })

    it("a product created through the API reaches the receiver; the endpoint's page shows it succeeded after Refresh", async () => {
      await page.getByRole('link', { name: endpointUrl }).click()
      await page.getByRole('heading', { name: endpointUrl, level: 1 }).waitFor()
      await page.getByRole('cell', { name: 'No deliveries yet.' }).waitFor()
      answer = 204
      const product = await api.createProduct({ name: 'Linen Shirt', sku: 'LIN-SHIRT' })
      await receiver.waitFor(1)
      assert.equal(JSON.parse(receiver.received[0]!.body).data.object.id, product.id)
      await until(async () => (await deliveries())[0]?.status === 'succeeded', 'succeeded')
      await refresh()
      await rows().first().getByText('Succeeded').waitFor()
      // The delivery names what it was about, from its event: the product's name and sku.
      const [about, event, status, attempts, , lastStatus, next, actions] = await cells(0)
      assert.deepEqual(
        { about, event, status, attempts, lastStatus, next, actions },
        {
          about: 'Linen Shirt LIN-SHIRT',
          event: `product.created${receiver.received[0]!.id}`,
          status: 'Succeeded',
          attempts: '1',
          lastStatus: '204',
          next: '—',
          actions: '',
        },
      )
      await checkAccessibility(page, 'webhook endpoint')
    })

    it('a receiver answering 500 makes a failed delivery; Retry with the receiver back makes it succeed', async () => {
      answer = 500
      const product = await api.createProduct({ name: 'Failing Shirt' })
      await until(async () => (await deliveries())[0]?.status === 'failed', 'failed')
      await refresh()
      await rows().first().getByText('Failed').waitFor()
      const [about, event, status, attempts, , lastStatus] = await cells(0)
      assert.deepEqual(
        { about, event: event!.slice(0, 15), status, attempts, lastStatus },
        {
          about: 'Failing Shirt',
          event: 'product.created',
          status: 'Failed',
          attempts: '2',
          lastStatus: '500',
        },
      )
      assert.equal(await rows().nth(1).getByRole('button').count(), 0, 'no Retry on a success')
      await checkAccessibility(page, 'failed delivery')
      await screenshot(page, dialect, '12-webhook-deliveries')

      answer = 204
      const retried = page.waitForResponse((response) => response.url().endsWith('/retry'))
      await rows()
        .first()
        .getByRole('button', { name: /^Retry/ })
        .click()
      assert.equal((await retried).status(), 200)
      // Followed without a Refresh, until the dispatcher's attempt has an outcome.
      await rows().first().getByText('Succeeded').waitFor()
      const [, , , again, , code] = await cells(0)
      assert.deepEqual({ again, code }, { again: '3', code: '204' })
      await page.getByRole('status').getByText('succeeded').waitFor()
      const stored = (await deliveries())[0]
      assert.equal(stored.status, 'succeeded')
      const got = receiver.received.filter((r) => JSON.parse(r.body).data.object.id === product.id)
      assert.equal(got.length, 3)
    })

    it('pages the deliveries 20 at a time with Next and Previous', async () => {
      for (let i = 1; i <= 20; i++) await api.createProduct({ name: `Bulk ${i}` })
      await refresh()
      await rows().nth(19).waitFor()
      assert.equal(await rows().count(), 20)
      const newest = (await deliveries())[0].eventId
      assert.ok((await cells(0))[1]!.endsWith(newest))
      assert.equal((await cells(0))[0], 'Bulk 20')
      const next = page.waitForResponse((response) => response.url().includes('cursor='))
      await button('Next').click()
      await next
      await page.getByText('Page 2').waitFor()
      await rows().nth(1).getByText('Succeeded').waitFor()
      assert.equal(await rows().count(), 2)
      assert.ok(await button('Next').isDisabled())
      await button('Previous').click()
      await page.getByText('Page 1').waitFor()
      await rows().nth(19).waitFor()
      assert.ok((await cells(0))[1]!.endsWith(newest))
    })

    it('edits: a refused URL next to its field, then only the changed fields as a merge patch', async () => {
      await field('URL').fill('ftp://x')
      await button('Save').click()
      await page
        .locator('#endpoint-url-error')
        .getByText('must be an https:// or http:// URL')
        .waitFor()
      assert.equal(await field('URL').getAttribute('aria-invalid'), 'true')
      assert.equal((await endpoints())[0].url, endpointUrl)

      await field('URL').fill(endpointUrl)
      await field('product.created').uncheck()
      await field('product.updated').check()
      await field('variant.created').check()
      await field('Enabled').uncheck()
      const patches = await writes(async () => {
        await button('Save').click()
        await notice().getByText('Saved.').waitFor()
      })
      assert.equal(patches.length, 1)
      assert.equal(patches[0]!.headers()['content-type'], 'application/merge-patch+json')
      assert.deepEqual(JSON.parse(patches[0]!.postData()!), {
        events: ['product.updated', 'variant.created'],
        enabled: false,
      })
      assert.equal(await field('URL').getAttribute('aria-invalid'), null)
      const stored = (await endpoints())[0]
      assert.deepEqual(stored.events, ['product.updated', 'variant.created'])
      assert.equal(stored.enabled, false)
      assert.equal(stored.description, `Stock sync ${XSS}`)
      await page.locator('.meta').getByText('Disabled').waitFor()
      await page
        .getByRole('alert')
        .getByText('This endpoint is disabled: nothing is sent to it, retries included')
        .waitFor()

      const none = await writes(async () => {
        await button('Save').click()
        await notice().getByText('Nothing changed.').waitFor()
      })
      assert.deepEqual(none, [])

      await field('Description').fill('')
      await field('All events').check()
      const cleared = await writes(async () => {
        await button('Save').click()
        await notice().getByText('Saved.').waitFor()
      })
      assert.deepEqual(JSON.parse(cleared[0]!.postData()!), { events: ['*'], description: null })
      const after = (await endpoints())[0]
      assert.deepEqual(after.events, ['*'])
      assert.equal(after.description, null)
      await page.getByRole('link', { name: '← Webhooks' }).click()
      const row = page.locator('table.endpoints tbody tr')
      await row.getByText('Disabled').waitFor()
      assert.deepEqual(await row.locator('td').allTextContents(), [
        endpointUrl,
        'All events',
        'Disabled',
        '',
      ])
    })

    it('the endpoint limit is shown as a notice, on no field', async () => {
      const extra: string[] = []
      for (let i = 0; i < 15; i++) {
        const res = await api.post('/webhook-endpoints', {
          url: `${receiver.url}/extra-${i}`,
          events: ['variant.deleted'],
        })
        assert.equal(res.statusCode, 200, res.body)
        extra.push(res.json().data.id)
      }
      await page.reload()
      await field('URL').fill(`${receiver.url}/one-too-many`)
      await field('All events').check()
      await button('Add endpoint').click()
      await page.getByRole('alert').getByText('A store has at most 16 webhook endpoints').waitFor()
      assert.equal(await page.locator('main [aria-invalid="true"]').count(), 0)
      assert.equal((await endpoints()).length, 16)
      for (const id of extra) {
        assert.equal((await api.delete(`/webhook-endpoints/${id}`)).statusCode, 200)
      }
    })

    it("an unknown id shows the API's message", async () => {
      await page.goto(`${base}/admin#/webhooks/00000000-0000-0000-0000-000000000000`)
      await page.getByRole('heading', { name: 'Webhook endpoint', level: 1 }).waitFor()
      await page
        .getByRole('alert')
        .getByText('No webhook endpoint with this id exists in your store.')
        .waitFor()
    })

    it('deletes an endpoint after asking', async () => {
      await page.goto(`${base}/admin#/webhooks/${endpointId}`)
      await page.getByRole('heading', { name: endpointUrl, level: 1 }).waitFor()
      await button('Delete endpoint').click()
      const dialog = page.getByRole('dialog', { name: 'Delete this endpoint?' })
      await dialog.waitFor()
      await checkAccessibility(page, 'delete endpoint')
      await dialog.getByRole('button', { name: 'Cancel' }).click()
      await dialog.waitFor({ state: 'hidden' })
      assert.equal((await api.get(`/webhook-endpoints/${endpointId}`)).statusCode, 200)
      await button('Delete endpoint').click()
      await dialog.getByRole('button', { name: 'Delete endpoint' }).click()
      await page.getByRole('heading', { name: 'Webhooks', level: 1 }).waitFor()
      await notice().getByText(`Deleted the endpoint ${endpointUrl}.`).waitFor()
      await page.getByRole('cell', { name: 'No endpoints yet.' }).waitFor()
      assert.equal((await api.get(`/webhook-endpoints/${endpointId}`)).statusCode, 404)
      assert.deepEqual(await endpoints(), [])
    })

    it('a read key is told webhooks need a key that can write, and asks nothing of them', async () => {
      const readKey = await api.newKey({ scopes: ['read'] })
      const reader = await pageOfItsOwn(base, cleanups, readKey)
      const readPage = reader.page
      await readPage.getByRole('heading', { name: 'Products', exact: true }).waitFor()
      await readPage.getByRole('link', { name: 'Webhooks' }).click()
      await readPage.getByRole('heading', { name: 'Webhooks', level: 1 }).waitFor()
      const sentence = 'Webhooks need an API key that can write'
      await readPage.getByText(sentence).waitFor()
      assert.equal(await readPage.locator('main input, main textarea, main form').count(), 0)
      assert.equal(await readPage.locator('main button').count(), 0)
      await checkAccessibility(readPage, 'read-only webhooks')
      await readPage.goto(`${base}/admin#/webhooks/${endpointId}`)
      await readPage.getByRole('heading', { name: 'Webhook endpoint', level: 1 }).waitFor()
      await readPage.getByText(sentence).waitFor()
      assert.equal(await readPage.locator('main button').count(), 0)
      const asked = reader.requests.filter((request) =>
        request.url().includes('/webhook-endpoints'),
      )
      assert.deepEqual(asked, [])
      assert.deepEqual(reader.problems, [])
      assertOnlyTheService(reader.requests, base)
    })

    it('the page asked nothing of any host but the service, and nothing went wrong in it', () => {
      assert.deepEqual(watched.problems, [])
      assertOnlyTheService(watched.requests, base)
      assert.deepEqual(receiver.rejected, [], 'every delivery verified with the secret shown')
    })
  })
}

if (!POSTGRES_URL) {
  describe('admin page: webhooks [postgres]', () => {
    it('needs TEST_POSTGRES_URL', { skip: 'TEST_POSTGRES_URL is not set' }, () => {})
  })
}
