import assert from 'node:assert/strict'
import { it } from 'node:test'
import type { LightMyRequestResponse } from 'fastify'
import { buildApp } from '../src/app.js'
import { createDatabase } from '../src/db/database.js'
import { buildTestApi, describeEachDialect, expectError } from './helpers.js'

/** The contract's 503: application/json, exactly `error` and `message`, code `unavailable`. */
function assertUnavailable(response: LightMyRequestResponse): void {
  assert.equal(response.statusCode, 503, response.body)
  assert.match(String(response.headers['content-type']), /^application\/json\b/)
  expectError(response, 503, 'unavailable')
  assert.deepEqual(Object.keys(response.json()).sort(), ['error', 'message'])
}

describeEachDialect('health', (dialect) => {
  it('GET /healthz answers 200 without a key', async (t) => {
    const api = await buildTestApi(t, dialect)
    const response = await api.app.inject({ method: 'GET', url: '/healthz' })
    assert.equal(response.statusCode, 200, response.body)
    assert.match(String(response.headers['content-type']), /^application\/json\b/)
  })

  it('GET /healthz answers 200 while the process runs, even with the database gone', async (t) => {
    const api = await buildTestApi(t, dialect)
    await api.database.close()
    const response = await api.app.inject({ method: 'GET', url: '/healthz' })
    assert.equal(response.statusCode, 200, response.body)
  })

  it('GET /readyz answers 200 without a key when the database answers', async (t) => {
    const api = await buildTestApi(t, dialect)
    const response = await api.app.inject({ method: 'GET', url: '/readyz' })
    assert.equal(response.statusCode, 200, response.body)
    assert.match(String(response.headers['content-type']), /^application\/json\b/)
  })

  it('GET /readyz answers 503 unavailable, in the contract error shape, after the database is closed', async (t) => {
    const api = await buildTestApi(t, dialect)
    assert.equal((await api.app.inject({ method: 'GET', url: '/readyz' })).statusCode, 200)
    await api.database.close()
    assertUnavailable(await api.app.inject({ method: 'GET', url: '/readyz' }))
  })

  it('health checks ignore an Authorization header, valid or not', async (t) => {
    const api = await buildTestApi(t, dialect)
    for (const authorization of [`Bearer ${api.key}`, 'Bearer nonsense', 'Basic dXNlcjpwYXNz']) {
      for (const url of ['/healthz', '/readyz']) {
        const response = await api.app.inject({ method: 'GET', url, headers: { authorization } })
        assert.equal(response.statusCode, 200, `${url} with ${authorization}: ${response.body}`)
      }
    }
  })

  it(
    'GET /readyz answers 503 unavailable quickly when PostgreSQL cannot be reached',
    { skip: dialect !== 'postgres' && 'PostgreSQL only' },
    async (t) => {
      const database = createDatabase('postgres://postgres@127.0.0.1:1/test')
      t.after(() => database.close())
      const app = buildApp({ database })
      t.after(() => app.close())
      const started = Date.now()
      const ready = await app.inject({ method: 'GET', url: '/readyz' })
      const elapsed = Date.now() - started
      assertUnavailable(ready)
      assert.ok(elapsed < 5000, `took ${elapsed} ms`)
      assert.equal((await app.inject({ method: 'GET', url: '/healthz' })).statusCode, 200)
    },
  )
})
