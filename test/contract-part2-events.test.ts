import assert from 'node:assert/strict'
import { it } from 'node:test'
import type { Resolver } from '../src/webhooks/address-guard.js'
import { buildTestApi, describeEachDialect, expectError } from './helpers.js'

// Contract, part 2, Events and Webhooks, as a client reads them.

describeEachDialect(
  'webhook endpoint URLs: what the contract refuses, and only that',
  (dialect) => {
    // "hosts that resolve to loopback, private (...) are refused with 400 validation_failed on
    // create or update, and are never connected to at delivery (the check is made on the address
    // actually connected to, at every attempt, so a DNS change cannot steer a delivery inside)"
    it('a host that cannot be resolved now is accepted; one that resolves inside is refused', async (t) => {
      const resolve: Resolver = async (hostname) => {
        if (hostname === 'inside.example.com') return [{ address: '10.1.2.3', family: 4 }]
        if (hostname === 'slow.example.com') return new Promise(() => {})
        const code = hostname === 'flaky.example.com' ? 'EAI_AGAIN' : 'ENOTFOUND'
        throw Object.assign(new Error(code), { code })
      }
      const api = await buildTestApi(t, dialect, { webhooks: { allowPrivate: false, resolve } })
      for (const url of [
        'https://hooks.example.com/catalog',
        'https://flaky.example.com/catalog',
        'https://slow.example.com/catalog',
      ]) {
        const res = await api.post('/webhook-endpoints', { url, events: ['*'] })
        assert.equal(res.statusCode, 200, `${url}: ${res.body}`)
        assert.equal(res.json().data.url, url)
        assert.match(res.json().data.secret, /^whsec_[A-Za-z0-9+/]{43}=$/)
        const patched = await api.patch(`/webhook-endpoints/${res.json().data.id}`, {
          url: `${url}/v2`,
        })
        assert.equal(patched.statusCode, 200, patched.body)
      }
      const refused = expectError(
        await api.post('/webhook-endpoints', {
          url: 'https://inside.example.com/catalog',
          events: ['*'],
        }),
        400,
        'validation_failed',
      )
      assert.deepEqual(
        refused.details?.map((d) => d.field),
        ['url'],
      )
    })

    it("with the system's resolver, a name that does not exist (.test) is accepted", async (t) => {
      const api = await buildTestApi(t, dialect)
      const url = 'https://hooks.catalog.test/webhooks'
      const res = await api.post('/webhook-endpoints', { url, events: ['product.created'] })
      assert.equal(res.statusCode, 200, res.body)
      assert.equal(res.json().data.url, url)
    })
  },
)
