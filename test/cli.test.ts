import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import http from 'node:http'
import net from 'node:net'
import { readdir } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, it, type TestContext } from 'node:test'
import SqliteDatabase from '../src/db/sqlite-driver.js'
import pg from 'pg'
import { SETTINGS } from '../src/config.js'
import type { Dialect } from '../src/db/database.js'
import { API, DIALECTS, POSTGRES_URL } from './helpers.js'
import {
  createKey,
  databaseUrlFor,
  request,
  runCatalog,
  SECRET_PATTERN,
  startServe,
  tempDir,
  type CommandResult,
  type ServeProcess,
} from './process-helpers.js'

/** The contract's usage error: exit 2, and exactly one (non-empty) line on stderr. */
function assertUsageError(result: CommandResult): void {
  assert.equal(result.code, 2, `exit code; stderr: ${result.stderr}`)
  assert.match(result.stderr, /^[^\n]*\S[^\n]*\n?$/, 'exactly one line on stderr')
}

async function sqliteUrl(t: TestContext): Promise<string> {
  return `sqlite:${join(await tempDir(t), 'catalog.db')}`
}

// Each test runs its own short-lived processes on its own files, so they may overlap.
describe('catalog usage', { concurrency: 4 }, () => {
  const helps: [string[], string[]][] = [
    [['--help'], ['serve', 'migrate', 'keys']],
    [
      ['keys', '--help'],
      ['create', 'list', 'revoke', '--store', '--scopes', '--json'],
    ],
    [['serve', '--help'], ['serve']],
    [['migrate', '--help'], ['migrate']],
  ]
  for (const [args, words] of helps) {
    it(`catalog ${args.join(' ')} prints usage on stdout and exits 0`, async (t) => {
      const result = await runCatalog(args, { DATABASE_URL: await sqliteUrl(t) })
      assert.equal(result.code, 0, result.stderr)
      assert.match(result.stdout, /usage/i)
      for (const word of words) assert.ok(result.stdout.includes(word), `mentions ${word}`)
      assert.equal(result.stderr, '')
    })
  }

  const usageErrors: [string, string[]][] = [
    ['no command', []],
    ['an unknown command', ['frobnicate']],
    ['keys without a subcommand', ['keys']],
    ['an unknown keys subcommand', ['keys', 'frobnicate']],
    ['an unknown flag of keys list', ['keys', 'list', '--bogus']],
    [
      'an unknown flag of keys create',
      ['keys', 'create', '--store', 's', '--scopes', 'read', '-x'],
    ],
    ['an unknown flag of serve', ['serve', '--bogus']],
    ['an unknown flag of migrate', ['migrate', '--bogus']],
    ['keys create without --store', ['keys', 'create', '--scopes', 'read,write']],
    ['keys create without --scopes', ['keys', 'create', '--store', 'shop']],
    ['keys create with --store but no value', ['keys', 'create', '--scopes', 'read', '--store']],
    [
      'keys create with an unknown scope',
      ['keys', 'create', '--store', 's', '--scopes', 'read,admin'],
    ],
    ['keys revoke without an id', ['keys', 'revoke']],
    ['keys revoke with two ids', ['keys', 'revoke', randomUUID(), randomUUID()]],
  ]
  for (const [what, args] of usageErrors) {
    it(`${what} is a usage error: exit 2, one line on stderr`, async (t) => {
      assertUsageError(await runCatalog(args, { DATABASE_URL: await sqliteUrl(t) }))
    })
  }

  const commands = [
    ['migrate'],
    ['keys', 'list'],
    ['keys', 'create', '--store', 'shop', '--scopes', 'read'],
    ['keys', 'revoke', randomUUID()],
    ['serve'],
  ]
  for (const args of commands) {
    it(`a DATABASE_URL of no supported kind is a usage error for ${args.slice(0, 2).join(' ')}: exit 2, one line`, async () => {
      assertUsageError(await runCatalog(args, { DATABASE_URL: 'mysql://x', PORT: '0' }))
    })
  }

  it('catalog --help lists every setting the service reads, from the list it reads them from', async (t) => {
    const result = await runCatalog(['--help'], { DATABASE_URL: await sqliteUrl(t) })
    for (const name of Object.keys(SETTINGS)) {
      assert.match(result.stdout, new RegExp(`^  ${name} `, 'm'), `lists ${name}`)
    }
  })

  const needTheServersDatabase = [
    ['keys', 'list'],
    ['keys', 'create', '--store', 'shop', '--scopes', 'read'],
    ['import', '/nonexistent.csv', '--store', 'shop'],
    ['export', '--store', 'shop'],
  ]
  for (const args of needTheServersDatabase) {
    it(`catalog ${args.slice(0, 2).join(' ')} without DATABASE_URL and no database at the default path creates none: exit 1, naming it and DATABASE_URL`, async (t) => {
      const cwd = await tempDir(t)
      const result = await runCatalog(args, {}, cwd)
      assert.equal(result.code, 1, result.stderr)
      assert.equal(result.stderr.trimEnd().split('\n').length, 1, result.stderr)
      assert.match(result.stderr, /data\/catalog\.db/)
      assert.match(result.stderr, /DATABASE_URL/)
      assert.deepEqual(await readdir(cwd), [], 'nothing created')
    })
  }

  it('catalog keys with DATABASE_URL set to a new file creates and migrates it, as asked', async (t) => {
    const result = await runCatalog(['keys', 'list'], { DATABASE_URL: await sqliteUrl(t) })
    assert.equal(result.code, 0, result.stderr)
  })

  it('a PORT that is not a port number is a usage error for serve: exit 2, one line', async (t) => {
    assertUsageError(
      await runCatalog(['serve'], { DATABASE_URL: await sqliteUrl(t), PORT: 'eighty' }),
    )
  })
})

/** What a database's schema looks like, to compare before and after a second migration. */
async function schemaSnapshot(databaseUrl: string, dialect: Dialect): Promise<unknown> {
  if (dialect === 'sqlite') {
    const handle = new SqliteDatabase(databaseUrl.slice('sqlite:'.length), {
      readonly: true,
      fileMustExist: true,
    })
    try {
      return {
        objects: handle
          .prepare('select type, name, tbl_name, sql from sqlite_master order by type, name')
          .all(),
        migrations: handle.prepare('select * from kysely_migration order by name').all(),
      }
    } finally {
      handle.close()
    }
  }
  const client = new pg.Client({ connectionString: databaseUrl })
  await client.connect()
  try {
    const rows = async (text: string) => (await client.query(text)).rows
    return {
      columns: await rows(`
        select table_name, column_name, data_type, is_nullable, column_default
        from information_schema.columns where table_schema = current_schema()
        order by table_name, column_name`),
      indexes: await rows(`
        select tablename, indexname, indexdef from pg_indexes
        where schemaname = current_schema() order by indexname`),
      constraints: await rows(`
        select conname, pg_get_constraintdef(oid) as definition from pg_constraint
        where connamespace = current_schema()::regnamespace order by conname`),
      migrations: await rows('select * from kysely_migration order by name'),
    }
  } finally {
    await client.end()
  }
}

function migrateAndKeysSuite(dialect: Dialect): void {
  it('catalog migrate twice: both exit 0 and the second changes nothing', async (t) => {
    const DATABASE_URL = await databaseUrlFor(t, dialect)
    const first = await runCatalog(['migrate'], { DATABASE_URL })
    assert.equal(first.code, 0, first.stderr)
    const before = (await schemaSnapshot(DATABASE_URL, dialect)) as Record<string, unknown[]>
    assert.ok(before.migrations!.length > 0, 'the first run applied migrations')
    const second = await runCatalog(['migrate'], { DATABASE_URL })
    assert.equal(second.code, 0, second.stderr)
    assert.deepEqual(await schemaSnapshot(DATABASE_URL, dialect), before)
  })

  if (dialect === 'postgres') {
    it('catalog migrate works on a PostgreSQL schema while another schema of the same database is already migrated', async (t) => {
      const other = await databaseUrlFor(t, dialect)
      assert.equal((await runCatalog(['migrate'], { DATABASE_URL: other })).code, 0)
      const DATABASE_URL = await databaseUrlFor(t, dialect)
      const result = await runCatalog(['migrate'], { DATABASE_URL })
      assert.equal(result.code, 0, result.stderr)
      const snapshot = (await schemaSnapshot(DATABASE_URL, dialect)) as Record<string, unknown[]>
      assert.ok(snapshot.migrations!.length > 0)
      const made = await runCatalog(['keys', 'create', '--store', 's', '--scopes', 'read'], {
        DATABASE_URL,
      })
      assert.equal(made.code, 0, made.stderr)
    })
  }

  it('keys create --json prints one JSON object with id, key, store and scopes', async (t) => {
    const DATABASE_URL = await databaseUrlFor(t, dialect)
    const result = await runCatalog(
      ['keys', 'create', '--store', 'shop-1', '--scopes', 'read,write', '--json'],
      { DATABASE_URL },
    )
    assert.equal(result.code, 0, result.stderr)
    assert.equal(result.stdout.trimEnd().split('\n').length, 1, 'one line on stdout')
    const created = JSON.parse(result.stdout)
    assert.equal(typeof created, 'object')
    assert.ok(!Array.isArray(created))
    assert.equal(typeof created.id, 'string')
    assert.ok(created.id.length > 0)
    assert.match(created.key, /^ck_[0-9A-Za-z]{22,}$/, 'ck_ and at least 128 bits')
    assert.equal(created.store, 'shop-1')
    assert.deepEqual([...created.scopes].sort(), ['read', 'write'])
  })

  it('keys create without --json prints the secret', async (t) => {
    const DATABASE_URL = await databaseUrlFor(t, dialect)
    const result = await runCatalog(['keys', 'create', '--store', 'shop', '--scopes', 'read'], {
      DATABASE_URL,
    })
    assert.equal(result.code, 0, result.stderr)
    assert.match(result.stdout, SECRET_PATTERN)
  })

  it('keys list shows keys without their secrets, filtered by --store', async (t) => {
    const DATABASE_URL = await databaseUrlFor(t, dialect)
    const a1 = await createKey(DATABASE_URL, 'store-a')
    const a2 = await createKey(DATABASE_URL, 'store-a', 'read')
    const b1 = await createKey(DATABASE_URL, 'store-b')
    const secrets = [a1.key, a2.key, b1.key]

    const all = await runCatalog(['keys', 'list', '--json'], { DATABASE_URL })
    assert.equal(all.code, 0, all.stderr)
    for (const secret of secrets) assert.ok(!all.stdout.includes(secret), 'no secret listed')
    const listed: Record<string, unknown>[] = JSON.parse(all.stdout)
    assert.deepEqual(listed.map((key) => key.id).sort(), [a1.id, a2.id, b1.id].sort())
    for (const key of listed) assert.equal(key.key, undefined, 'no key field')

    const onlyA = await runCatalog(['keys', 'list', '--store', 'store-a', '--json'], {
      DATABASE_URL,
    })
    assert.equal(onlyA.code, 0, onlyA.stderr)
    const listedA: Record<string, unknown>[] = JSON.parse(onlyA.stdout)
    assert.deepEqual(listedA.map((key) => key.id).sort(), [a1.id, a2.id].sort())
    assert.deepEqual(
      listedA.map((key) => key.store),
      ['store-a', 'store-a'],
    )

    const table = await runCatalog(['keys', 'list'], { DATABASE_URL })
    assert.equal(table.code, 0, table.stderr)
    for (const secret of secrets) assert.ok(!table.stdout.includes(secret), 'no secret listed')
    assert.doesNotMatch(table.stdout, SECRET_PATTERN)
  })

  it('keys revoke of an unknown id exits 1', async (t) => {
    const DATABASE_URL = await databaseUrlFor(t, dialect)
    await createKey(DATABASE_URL, 'shop')
    for (const id of [randomUUID(), 'no-such-key']) {
      const result = await runCatalog(['keys', 'revoke', id], { DATABASE_URL })
      assert.equal(result.code, 1, `revoke ${id}: ${result.stderr}`)
      assert.notEqual(result.stderr.trim(), '', 'says why on stderr')
    }
  })

  it('a revoked key is refused with 401 from then on, while another key works', async (t) => {
    const DATABASE_URL = await databaseUrlFor(t, dialect)
    const doomed = await createKey(DATABASE_URL, 'shop')
    const kept = await createKey(DATABASE_URL, 'shop')
    const server = await startServe(t, { DATABASE_URL })
    assert.equal((await request(server, 'GET', `${API}/products`, { key: doomed.key })).status, 200)

    const revoked = await runCatalog(['keys', 'revoke', doomed.id], { DATABASE_URL })
    assert.equal(revoked.code, 0, revoked.stderr)

    const refused = await request(server, 'POST', `${API}/products`, {
      key: doomed.key,
      body: { name: 'Nope' },
    })
    assert.equal(refused.status, 401)
    assert.equal(refused.body.error, 'unauthorized')
    assert.match(String(refused.headers['www-authenticate']), /^Bearer/)
    const read = await request(server, 'GET', `${API}/products`, { key: doomed.key })
    assert.equal(read.status, 401)
    const ok = await request(server, 'POST', `${API}/products`, {
      key: kept.key,
      body: { name: 'Yes' },
    })
    assert.equal(ok.status, 200, JSON.stringify(ok.body))
  })
}

// describeEachDialect's loop, with the tests of one dialect allowed to overlap: each spawns
// several short processes on a database of its own.
for (const dialect of DIALECTS) {
  describe(`catalog migrate and keys [${dialect}]`, { concurrency: 3 }, () =>
    migrateAndKeysSuite(dialect),
  )
}
if (!POSTGRES_URL) {
  describe('catalog migrate and keys [postgres]', () => {
    it('needs TEST_POSTGRES_URL', { skip: 'TEST_POSTGRES_URL is not set' }, () => {})
  })
}

/** Starts a POST whose body is only half sent; the rest goes with `finish()`. */
function startSlowUpload(server: ServeProcess, key: string, agent: http.Agent | false) {
  const body = JSON.stringify({ name: 'Slow upload', description: 'x'.repeat(4000) })
  const half = Math.floor(body.length / 2)
  const req = http.request(`${server.url}${API}/products`, {
    method: 'POST',
    agent,
    headers: {
      authorization: `Bearer ${key}`,
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(body)),
    },
  })
  const response = new Promise<{ status: number; body: any }>((resolve, reject) => {
    req.on('error', reject)
    req.on('response', (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => (text += chunk))
      res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text) }))
    })
  })
  response.catch(() => {}) // awaited by the test; this keeps an early failure from going unhandled
  req.write(body.slice(0, half))
  return {
    response,
    /** Resolves when the server has the request's headers, so it is in flight (logged at debug). */
    arrived: server.waitForOutput(
      /"method":"POST","path":"\/api\/commerce\/v1\/products"[^\n]*"msg":"incoming request"/,
    ),
    finish: () => req.end(body.slice(half)),
  }
}

/** Whether a new TCP connection to the server is refused. */
function connectionRefused(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url)
  return new Promise((resolve) => {
    const socket = net.connect({ host: hostname, port: Number(port) })
    socket.on('connect', () => {
      socket.destroy()
      resolve(false)
    })
    socket.on('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'ECONNREFUSED'))
  })
}

async function firstRunKey(server: ServeProcess): Promise<string> {
  return (await server.waitForOutput(SECRET_PATTERN))[0]
}

describe('catalog serve', { concurrency: 3 }, () => {
  it('on an empty database serve prints a first-run key for store default with read,write, and the key works', async (t) => {
    const DATABASE_URL = await sqliteUrl(t)
    const server = await startServe(t, { DATABASE_URL })
    const key = await firstRunKey(server)
    assert.equal((await request(server, 'GET', '/healthz')).status, 200)
    const created = await request(server, 'POST', `${API}/products`, {
      key,
      body: { name: 'First product' },
    })
    assert.equal(created.status, 200, JSON.stringify(created.body))
    const read = await request(server, 'GET', `${API}/products/${created.body.data.id}`, { key })
    assert.equal(read.status, 200)

    const listed = await runCatalog(['keys', 'list', '--json'], { DATABASE_URL })
    assert.equal(listed.code, 0, listed.stderr)
    const keys: { store: string; scopes: string[] }[] = JSON.parse(listed.stdout)
    assert.equal(keys.length, 1)
    assert.equal(keys[0]!.store, 'default')
    assert.deepEqual([...keys[0]!.scopes].sort(), ['read', 'write'])
  })

  it('a second start on the same database prints no new key, and the first key still works', async (t) => {
    const DATABASE_URL = await sqliteUrl(t)
    const first = await startServe(t, { DATABASE_URL })
    const key = await firstRunKey(first)
    assert.deepEqual(await first.stop('SIGTERM'), { code: 0, signal: null })

    const second = await startServe(t, { DATABASE_URL })
    const created = await request(second, 'POST', `${API}/products`, {
      key,
      body: { name: 'Second run' },
    })
    assert.equal(created.status, 200, JSON.stringify(created.body))
    assert.deepEqual(await second.stop('SIGTERM'), { code: 0, signal: null })
    assert.doesNotMatch(second.stdout(), SECRET_PATTERN)
    const listed = await runCatalog(['keys', 'list', '--json'], { DATABASE_URL })
    assert.equal(JSON.parse(listed.stdout).length, 1)
  })

  it('serve that cannot listen (port taken) exits 1 and creates no key; the next start prints one', async (t) => {
    const DATABASE_URL = await sqliteUrl(t)
    const taken = net.createServer()
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve))
    t.after(() => taken.close())
    const port = String((taken.address() as net.AddressInfo).port)
    const failed = await runCatalog(['serve'], { DATABASE_URL, PORT: port })
    assert.equal(failed.code, 1, failed.stderr)
    assert.doesNotMatch(failed.stdout, SECRET_PATTERN)
    // A key made and never shown would be lost: none is made before the server listens.
    const listed = await runCatalog(['keys', 'list', '--json'], { DATABASE_URL })
    assert.deepEqual(JSON.parse(listed.stdout), [])
    const server = await startServe(t, { DATABASE_URL })
    const key = await firstRunKey(server)
    assert.equal((await request(server, 'GET', `${API}/products`, { key })).status, 200)
  })

  it('serve on a database that already has a key prints no first-run key', async (t) => {
    const DATABASE_URL = await sqliteUrl(t)
    const made = await createKey(DATABASE_URL, 'shop')
    const server = await startServe(t, { DATABASE_URL })
    const read = await request(server, 'GET', `${API}/products`, { key: made.key })
    assert.equal(read.status, 200)
    assert.deepEqual(await server.stop('SIGTERM'), { code: 0, signal: null })
    assert.doesNotMatch(server.stdout(), SECRET_PATTERN)
  })

  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    it(`${signal}: the server stops and exits with code 0`, async (t) => {
      const server = await startServe(t, { DATABASE_URL: await sqliteUrl(t) })
      const key = await firstRunKey(server)
      assert.equal(
        (await request(server, 'POST', `${API}/products`, { key, body: { name: 'x' } })).status,
        200,
      )
      assert.deepEqual(await server.stop(signal), { code: 0, signal: null })
      assert.equal(await connectionRefused(server.url), true)
    })
  }

  it('SIGTERM as soon as the server reports it is listening stops it gracefully: exit 0', async (t) => {
    // The server logs "Server listening" before it is ready for signals; the moment between
    // is short, so the start is tried several times.
    for (let attempt = 1; attempt <= 6; attempt++) {
      const server = await startServe(
        t,
        { DATABASE_URL: await sqliteUrl(t) },
        { untilReady: false },
      )
      assert.deepEqual(
        await server.stop('SIGTERM'),
        { code: 0, signal: null },
        `attempt ${attempt}`,
      )
    }
  })

  it('a request in flight when SIGTERM arrives is answered 200 and the process exits 0', async (t) => {
    const server = await startServe(t, { DATABASE_URL: await sqliteUrl(t), LOG_LEVEL: 'debug' })
    const key = await firstRunKey(server)
    const upload = startSlowUpload(server, key, false)
    await upload.arrived
    server.child.kill('SIGTERM')
    await server.waitForOutput(/shutting down/)
    upload.finish()
    const response = await upload.response
    assert.equal(response.status, 200, JSON.stringify(response.body))
    assert.equal(response.body.data.name, 'Slow upload')
    assert.deepEqual(await server.stop('SIGTERM'), { code: 0, signal: null })
  })

  it('after SIGTERM new connections are refused while a request in flight is finished', async (t) => {
    const server = await startServe(t, { DATABASE_URL: await sqliteUrl(t), LOG_LEVEL: 'debug' })
    const key = await firstRunKey(server)
    const upload = startSlowUpload(server, key, false)
    await upload.arrived
    server.child.kill('SIGTERM')
    await server.waitForOutput(/shutting down/)
    // The listening socket closes a moment after the signal is handled.
    let refused = false
    for (let attempt = 0; attempt < 40 && !refused; attempt++) {
      refused = await connectionRefused(server.url)
      if (!refused) await new Promise((resolve) => setTimeout(resolve, 50))
    }
    assert.equal(refused, true, 'a new connection is refused')
    assert.equal(server.child.exitCode, null, 'still running: a request is in flight')
    upload.finish()
    assert.equal((await upload.response).status, 200)
    assert.deepEqual(await server.stop('SIGTERM'), { code: 0, signal: null })
  })

  it('a keep-alive client does not hold up shutdown: its request in flight at SIGTERM is answered and the process exits 0', async (t) => {
    // Node's own http.globalAgent, browsers and most HTTP clients keep connections alive.
    const agent = new http.Agent({ keepAlive: true })
    t.after(() => agent.destroy())
    // A short deadline, so that a shutdown waiting on the idle connection fails fast.
    const server = await startServe(t, {
      DATABASE_URL: await sqliteUrl(t),
      SHUTDOWN_TIMEOUT_MS: '3000',
      LOG_LEVEL: 'debug',
    })
    const key = await firstRunKey(server)
    const upload = startSlowUpload(server, key, agent)
    await upload.arrived
    server.child.kill('SIGTERM')
    await server.waitForOutput(/shutting down/)
    upload.finish()
    const response = await upload.response
    assert.equal(response.status, 200, JSON.stringify(response.body))
    assert.deepEqual(await server.exited, { code: 0, signal: null })
  })

  it('after SIGTERM a new request on a kept-alive connection is refused: connection closed, or 503 unavailable in the contract error shape', async (t) => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
    t.after(() => agent.destroy())
    const server = await startServe(t, {
      DATABASE_URL: await sqliteUrl(t),
      SHUTDOWN_TIMEOUT_MS: '3000',
      LOG_LEVEL: 'debug',
    })
    const key = await firstRunKey(server)
    const upload = startSlowUpload(server, key, agent)
    await upload.arrived
    server.child.kill('SIGTERM')
    await server.waitForOutput(/shutting down/)
    upload.finish()
    assert.equal((await upload.response).status, 200)

    const outcome = await new Promise<
      { refused: string } | { status: number; headers: http.IncomingHttpHeaders; body: string }
    >((resolve) => {
      const req = http.get(`${server.url}/healthz`, { agent }, (res) => {
        let body = ''
        res.setEncoding('utf8')
        res.on('data', (chunk: string) => (body += chunk))
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }))
      })
      req.on('error', (error: NodeJS.ErrnoException) => resolve({ refused: String(error.code) }))
    })
    if (!('refused' in outcome)) {
      assert.equal(outcome.status, 503, outcome.body)
      const body = JSON.parse(outcome.body)
      assert.equal(body.error, 'unavailable', outcome.body)
      assert.equal(typeof body.message, 'string')
      assert.ok(outcome.headers['x-request-id'], 'X-Request-Id header')
    }
  })
})
