import assert from 'node:assert/strict'
import { connect } from 'node:net'
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
  it('answers a QUERY request, with a Content-Type or without, 405 on a known path (no route takes QUERY), 404 elsewhere', async (t) => {
    const api = await buildTestApi(t, dialect)
    const cases: [string, string | undefined][] = [
      ['/healthz', 'GET, HEAD'],
      [`${API}/products`, 'GET, HEAD, POST'],
      ['/nope', undefined],
    ]
    for (const [url, allow] of cases) {
      for (const headers of [{}, { 'content-type': 'application/json' }]) {
        const response = await api.app.inject({
          method: 'QUERY' as 'GET',
          url,
          headers: { authorization: `Bearer ${api.key}`, 'x-request-id': 'query-1', ...headers },
          ...('content-type' in headers && { payload: '{}' }),
        })
        if (allow === undefined) expectError(response, 404, 'not_found')
        else expectError(response, 405, 'method_not_allowed')
        assert.equal(response.headers.allow, allow, url)
        assert.equal(response.headers['x-request-id'], 'query-1')
      }
    }
  })
})

/** Sends `request` as it is on a new connection and returns all that comes back until it closes. */
function exchange(address: string, request: string): Promise<string> {
  const { hostname, port } = new URL(address)
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.write(request))
    let received = ''
    socket.setEncoding('utf8')
    socket.on('data', (chunk: string) => (received += chunk))
    socket.on('error', reject)
    socket.on('close', () => resolve(received))
  })
}

describeEachDialect('contract, part 1: requests without a Host header', (dialect) => {
  it('answers an HTTP/1.1 request without Host 400 bad_request in the contract shape, with X-Request-Id', async (t) => {
    const { app } = await buildTestApi(t, dialect)
    const address = await app.listen({ host: '127.0.0.1', port: 0 })
    const answer = await exchange(
      address,
      'GET /healthz HTTP/1.1\r\nX-Request-Id: no-host\r\nConnection: close\r\n\r\n',
    )
    const [head = '', body = ''] = answer.split('\r\n\r\n')
    assert.match(head, /^HTTP\/1\.1 400 /)
    assert.match(head, /\r\nx-request-id: no-host\r\n/i)
    assert.match(head, /\r\ncontent-type: application\/json/i)
    assert.equal(JSON.parse(body).error, 'bad_request')
    assert.equal(typeof JSON.parse(body).message, 'string')

    // HTTP/1.0 has no Host header to require.
    const old = await exchange(address, 'GET /healthz HTTP/1.0\r\n\r\n')
    assert.match(old, /^HTTP\/1\.1 200 /)
  })
})

describeEachDialect('contract, part 1: expectations Node does not know', (dialect) => {
  it('serves a request with an Expect other than 100-continue, with its X-Request-Id, not a bare 417', async (t) => {
    const { app, key } = await buildTestApi(t, dialect)
    const address = await app.listen({ host: '127.0.0.1', port: 0 })
    const health = await exchange(
      address,
      'GET /healthz HTTP/1.1\r\nHost: x\r\nExpect: foo\r\nX-Request-Id: expect-1\r\nConnection: close\r\n\r\n',
    )
    assert.match(health, /^HTTP\/1\.1 200 /)
    assert.match(health, /\r\nx-request-id: expect-1\r\n/i)
    const body = JSON.stringify({ name: 'Expecting' })
    const created = await exchange(
      address,
      `POST ${API}/products HTTP/1.1\r\nHost: x\r\nExpect: foo\r\nAuthorization: Bearer ${key}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`,
    )
    assert.match(created, /^HTTP\/1\.1 200 /)
    assert.equal(JSON.parse(created.split('\r\n\r\n')[1]!).data.name, 'Expecting')
  })
})

describeEachDialect('contract, part 1: CONNECT', (dialect) => {
  it('answers a CONNECT request 404 not_found with its X-Request-Id, as an unknown route, rather than dropping the connection', async (t) => {
    const { app } = await buildTestApi(t, dialect)
    const address = await app.listen({ host: '127.0.0.1', port: 0 })
    const answer = await exchange(
      address,
      'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\nX-Request-Id: connect-1\r\n\r\n',
    )
    const [head = '', body = ''] = answer.split('\r\n\r\n')
    assert.match(head, /^HTTP\/1\.1 404 /)
    assert.match(head, /\r\nx-request-id: connect-1\r\n/i)
    assert.equal(JSON.parse(body).error, 'not_found')
  })

  it('stays up when CONNECT clients reset their connections at once', async (t) => {
    const { app } = await buildTestApi(t, dialect)
    const address = await app.listen({ host: '127.0.0.1', port: 0 })
    const { port } = new URL(address)
    await Promise.all(
      Array.from(
        { length: 5 },
        () =>
          new Promise<void>((resolve) => {
            const socket = connect(Number(port), '127.0.0.1', () => {
              socket.write('CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n')
              socket.resetAndDestroy()
            })
            socket.on('error', () => {})
            socket.on('close', () => resolve())
          }),
      ),
    )
    await new Promise((resolve) => setTimeout(resolve, 200))
    assert.equal((await fetch(`${address}/healthz`)).status, 200)
  })
})
