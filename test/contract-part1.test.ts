import assert from 'node:assert/strict'
import { it } from 'node:test'
import { API, buildTestApi, describeEachDialect, expectError } from './helpers.js'

describeEachDialect('contract, part 1', (dialect) => {
  it("answers the docs page's files refused by the file server as the client's errors, not 500", async (t) => {
    const { app } = await buildTestApi(t, dialect)
    const get = (url: string, headers: Record<string, string> = {}) =>
      app.inject({ method: 'GET', url, headers: { 'x-request-id': 'docs-file', ...headers } })

    assert.equal((await get('/docs/static/index.css')).statusCode, 200)
    for (const url of ['/docs/static/%2e%2e/%2e%2e/package.json', '/docs/static/a%00b']) {
      const response = await get(url)
      expectError(response, 404, 'not_found')
      assert.equal(response.headers['x-request-id'], 'docs-file')
    }
    expectError(
      await get('/docs/static/index.css', { 'if-match': '"not-this-one"' }),
      412,
      'precondition_failed',
    )
    expectError(
      await get('/docs/static/index.css', {
        'if-unmodified-since': 'Mon, 01 Jan 1990 00:00:00 GMT',
      }),
      412,
      'precondition_failed',
    )
    expectError(
      await get('/docs/static/index.css', { range: 'bytes=99999999-' }),
      416,
      'range_not_satisfiable',
    )
  })
})

describeEachDialect('contract, part 1: methods no route takes', (dialect) => {
  it('answers a QUERY request, with a Content-Type or without, 404 not_found like any unknown route', async (t) => {
    const api = await buildTestApi(t, dialect)
    for (const url of ['/healthz', '/nope', `${API}/products`]) {
      for (const headers of [{}, { 'content-type': 'application/json' }]) {
        const response = await api.app.inject({
          method: 'QUERY' as 'GET',
          url,
          headers: { authorization: `Bearer ${api.key}`, 'x-request-id': 'query-1', ...headers },
          ...('content-type' in headers && { payload: '{}' }),
        })
        expectError(response, 404, 'not_found')
        assert.equal(response.headers['x-request-id'], 'query-1')
      }
    }
  })
})
