import assert from 'node:assert/strict'
import { it } from 'node:test'
import { buildTestApi, describeEachDialect, expectError } from './helpers.js'

// Contract, part 1: "details appears for validation errors: one entry per problem"; part 2:
// "At most 16 endpoints per store (400 validation_failed beyond)".

describeEachDialect('webhook endpoints: the contract as a client reads it', (dialect) => {
  it('the 17th endpoint is 400 validation_failed with details, like every validation error', async (t) => {
    const api = await buildTestApi(t, dialect, { webhooks: { allowPrivate: true } })
    const body = { url: 'http://127.0.0.1:9/hook', events: ['*'] }
    for (let i = 0; i < 16; i++) {
      assert.equal((await api.post('/webhook-endpoints', body)).statusCode, 200)
    }
    const refused = expectError(
      await api.post('/webhook-endpoints', body),
      400,
      'validation_failed',
    )
    assert.ok(
      Array.isArray(refused.details) && refused.details.length === 1,
      JSON.stringify(refused),
    )
    assert.equal(typeof refused.details[0]!.field, 'string')
    assert.match(refused.details[0]!.message, /16/)
  })
})
