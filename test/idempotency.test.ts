import assert from 'node:assert/strict'
import { createHash, randomUUID } from 'node:crypto'
import { describe, it, type TestContext } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import fc from 'fast-check'
import { sql } from 'kysely'
import pg from 'pg'
import { buildApp } from '../src/app.js'
import { createApiKey } from '../src/auth/api-key.service.js'
import type { Scope } from '../src/http/scopes.js'
import type { Database, Dialect } from '../src/db/database.js'
import { requestFingerprint } from '../src/idempotency/idempotency.http.js'
import { pruneExpiredIdempotencyKeys, startIdempotencyPruning } from '../src/idempotency/pruning.js'
import {
  API,
  POSTGRES_URL,
  createTestDatabase,
  startTwoInstances,
  describeEachDialect,
  expectError,
} from './helpers.js'

interface Answer {
  statusCode: number
  headers: Record<string, unknown>
  body: string
  json(): any
}

interface KeyedApi {
  database: Database
  /** A key with read and write on store `store-a`. */
  key: string
  newKey(options?: { store?: string; scopes?: Scope[] }): Promise<string>
  /** A POST, with an Idempotency-Key when `idempotencyKey` is a string. */
  post(
    path: string,
    body: unknown,
    idempotencyKey?: string,
    options?: { key?: string; contentType?: string },
  ): Promise<Answer>
  get(path: string, key?: string): Promise<Answer>
  productCount(key?: string): Promise<number>
}

/**
 * The real app (driven with inject) on a fresh database of the dialect, or on `database`
 * when given, with the retention window of its choice.
 */
async function buildKeyedApi(
  t: TestContext,
  dialect: Dialect,
  options: { ttlSeconds?: number; database?: Database } = {},
): Promise<KeyedApi> {
  const database = options.database ?? (await createTestDatabase(t, dialect))
  const app = buildApp({ database, idempotencyKeyTtlSeconds: options.ttlSeconds })
  t.after(() => app.close())
  const newKey = async (o: { store?: string; scopes?: Scope[] } = {}) =>
    (
      await createApiKey(database, {
        store: o.store ?? 'store-a',
        scopes: o.scopes ?? ['read', 'write'],
      })
    ).key
  const key = await newKey()
  const post = (
    path: string,
    body: unknown,
    idempotencyKey?: string,
    o: { key?: string; contentType?: string } = {},
  ): Promise<Answer> =>
    app.inject({
      method: 'POST',
      url: `${API}${path}`,
      headers: {
        authorization: `Bearer ${o.key ?? key}`,
        'content-type': o.contentType ?? 'application/json',
        ...(idempotencyKey === undefined ? {} : { 'idempotency-key': idempotencyKey }),
      },
      payload: typeof body === 'string' ? body : JSON.stringify(body),
    })
  const get = (path: string, withKey = key): Promise<Answer> =>
    app.inject({
      method: 'GET',
      url: `${API}${path}`,
      headers: { authorization: `Bearer ${withKey}` },
    })
  const productCount = async (withKey = key) => {
    const page = await get('/products?limit=200', withKey)
    assert.equal(page.statusCode, 200, page.body)
    return page.json().data.length
  }
  return { database, key, newKey, post, get, productCount }
}

function assertFirstAnswer(answer: Answer, status = 200): void {
  assert.equal(answer.statusCode, status, answer.body)
  assert.equal(answer.headers['idempotent-replayed'], undefined)
}

function assertReplayOf(replay: Answer, first: Answer): void {
  assert.equal(replay.statusCode, first.statusCode, replay.body)
  assert.equal(replay.headers['idempotent-replayed'], 'true')
  assert.match(String(replay.headers['content-type']), /^application\/json/)
  assert.equal(replay.body, first.body)
}

async function recordCount(database: Database): Promise<number> {
  const row = await database.kysely
    .selectFrom('idempotency_keys')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow()
  return Number(row.n)
}

describeEachDialect('Idempotency-Key', (dialect) => {
  it('replays a created product: same status and body, Idempotent-Replayed, nothing created', async (t) => {
    const api = await buildKeyedApi(t, dialect)
    const body = { name: 'T-Shirt', price: 19.99, status: 'active' }
    const first = await api.post('/products', body, 'order-1')
    assertFirstAnswer(first)
    const replay = await api.post('/products', body, 'order-1')
    assertReplayOf(replay, first)
    assert.equal(await api.productCount(), 1)
    const again = await api.post('/products', body, 'order-1')
    assertReplayOf(again, first)
    assert.equal(await api.productCount(), 1)
  })

  it('replays an added variant, and the product keeps one variant', async (t) => {
    const api = await buildKeyedApi(t, dialect)
    const product = (await api.post('/products', { name: 'Mug' })).json().data
    const path = `/products/${product.id}/variants`
    const body = { name: 'Red', sku: 'MUG-RED', options: { color: 'red' } }
    const first = await api.post(path, body, 'variant-1')
    assertFirstAnswer(first)
    const replay = await api.post(path, body, 'variant-1')
    assertReplayOf(replay, first)
    const variants = (await api.get(path)).json().data
    assert.equal(variants.length, 1)
    assert.equal(variants[0].id, first.json().data.id)
  })

  it('takes the same JSON, spaced and ordered differently, as the same request', async (t) => {
    const api = await buildKeyedApi(t, dialect)
    const first = await api.post('/products', '{"name":"Lamp","price":5,"sku":"L-1"}', 'k')
    assertFirstAnswer(first)
    const replay = await api.post(
      '/products',
      '{ "sku": "L-1", "price": 5.0, "name": "Lamp" }',
      'k',
    )
    assertReplayOf(replay, first)
    assert.equal(await api.productCount(), 1)
  })

  it('takes a body nested thousands of levels deep in an ignored field: 200, then a replay', async (t) => {
    const api = await buildKeyedApi(t, dialect)
    const deep = (depth: number, inner: string) => '['.repeat(depth) + inner + ']'.repeat(depth)
    const body = `{"name":"Deep","z":${deep(50_000, '1')},"o":${deep(10, '{"b":1,"a":2}')}}`
    const first = await api.post('/products', body, 'deep')
    assertFirstAnswer(first)
    assertReplayOf(await api.post('/products', body, 'deep'), first)
    const other = await api.post('/products', body.replace('"a":2', '"a":3'), 'deep')
    assert.equal(other.statusCode, 422, other.body)
    assert.equal(await api.productCount(), 1)
  })

  it('refuses the key with another body or another path: 422 idempotency_key_reused', async (t) => {
    const api = await buildKeyedApi(t, dialect)
    const first = await api.post('/products', { name: 'Chair' }, 'reused')
    assertFirstAnswer(first)
    expectError(
      await api.post('/products', { name: 'Table' }, 'reused'),
      422,
      'idempotency_key_reused',
    )
    expectError(
      await api.post('/products', { name: 'Chair', price: 1 }, 'reused'),
      422,
      'idempotency_key_reused',
    )
    const product = first.json().data
    expectError(
      await api.post(`/products/${product.id}/variants`, { name: 'Chair' }, 'reused'),
      422,
      'idempotency_key_reused',
    )
    assert.equal(await api.productCount(), 1)
    assert.equal((await api.get(`/products/${product.id}/variants`)).json().data.length, 0)
    // The refusals stored nothing: the first answer is still the one replayed.
    assertReplayOf(await api.post('/products', { name: 'Chair' }, 'reused'), first)
  })

  it('checks the body before the key: a reused key with an image URL without a host is 400', async (t) => {
    const api = await buildKeyedApi(t, dialect)
    assertFirstAnswer(await api.post('/products', { name: 'Chair' }, 'reused'))
    const res = await api.post(
      '/products',
      { name: 5, images: [{ url: 'http://:80/a.jpg' }, { url: 'ftp://x.example/b.jpg' }] },
      'reused',
    )
    const { details = [] } = expectError(res, 400, 'validation_failed')
    // Every problem of the body is named, the URL with a port but no host as well.
    assert.deepEqual(details.map((d) => d.field).sort(), ['images.0.url', 'images.1.url', 'name'])
    assert.equal(await api.productCount(), 1)
  })

  it('keeps keys per store: the same key in another store is another request', async (t) => {
    const api = await buildKeyedApi(t, dialect)
    const otherStore = await api.newKey({ store: 'store-b' })
    const sameStore = await api.newKey({ store: 'store-a' })
    const a = await api.post('/products', { name: 'Desk' }, 'shared')
    const b = await api.post('/products', { name: 'Desk' }, 'shared', { key: otherStore })
    assertFirstAnswer(a)
    assertFirstAnswer(b)
    assert.notEqual(a.json().data.id, b.json().data.id)
    assert.equal(await api.productCount(), 1)
    assert.equal(await api.productCount(otherStore), 1)
    // Another key of the same store shares the store's keys.
    assertReplayOf(await api.post('/products', { name: 'Desk' }, 'shared', { key: sameStore }), a)
  })

  it('stores no refusal made before the work: 400, 401, 403, 413, 415 are not replayed', async (t) => {
    const api = await buildKeyedApi(t, dialect)
    const readOnly = await api.newKey({ scopes: ['read'] })
    expectError(
      await api.post('/products', { name: 'Sofa', price: -1 }, 'fix-me'),
      400,
      'validation_failed',
    )
    expectError(await api.post('/products', '{"name":', 'fix-me'), 400, 'invalid_json')
    expectError(
      await api.post('/products', { name: 'Sofa' }, 'fix-me', { key: readOnly }),
      403,
      'forbidden',
    )
    expectError(
      await api.post('/products', { name: 'Sofa' }, 'fix-me', { key: 'ck_unknown' }),
      401,
      'unauthorized',
    )
    expectError(
      await api.post('/products', { name: 'Sofa' }, 'fix-me', { contentType: 'text/plain' }),
      415,
      'unsupported_media_type',
    )
    expectError(
      await api.post('/products', { name: 'Sofa', description: 'x'.repeat(300_000) }, 'fix-me'),
      413,
      'payload_too_large',
    )
    assert.equal(await recordCount(api.database), 0)
    const fixed = await api.post('/products', { name: 'Sofa', price: 1 }, 'fix-me')
    assertFirstAnswer(fixed)
    assert.equal(await api.productCount(), 1)
  })

  it('stores a 404 and a 409 of a request that ran, as Stripe does, and replays them', async (t) => {
    const api = await buildKeyedApi(t, dialect)
    const missing = `/products/${randomUUID()}/variants`
    const notFound = await api.post(missing, { name: 'V' }, 'ghost')
    expectError(notFound, 404, 'not_found')
    assertReplayOf(await api.post(missing, { name: 'V' }, 'ghost'), notFound)
    expectError(await api.post(missing, { name: 'W' }, 'ghost'), 422, 'idempotency_key_reused')

    const product = (await api.post('/products', { name: 'Bag' })).json().data
    const path = `/products/${product.id}/variants`
    assertFirstAnswer(await api.post(path, { name: 'A', sku: 'BAG-1' }))
    const duplicate = await api.post(path, { name: 'B', sku: 'BAG-1', position: 7 }, 'dup')
    expectError(duplicate, 409, 'duplicate_sku')
    assertReplayOf(await api.post(path, { name: 'B', sku: 'BAG-1', position: 7 }, 'dup'), duplicate)
    // The failed attempt left nothing behind: not a variant, not its position.
    const variants = (await api.get(path)).json().data
    assert.deepEqual(
      variants.map((v: any) => v.position),
      [1],
    )
    assert.equal((await api.post(path, { name: 'C' })).json().data.position, 2)
  })

  it('refuses a malformed Idempotency-Key with 400 validation_failed on Idempotency-Key', async (t) => {
    const api = await buildKeyedApi(t, dialect)
    for (const bad of [
      '',
      'x'.repeat(256),
      'a\u0001b',
      'tab\there',
      'caf\u00e9',
      ' lead',
      'trail ',
    ]) {
      const answer = await api.post('/products', { name: 'Bad' }, bad)
      const body = expectError(answer, 400, 'validation_failed')
      assert.deepEqual(
        body.details?.map((d) => d.field),
        ['Idempotency-Key'],
        `${JSON.stringify(bad)}: ${answer.body}`,
      )
    }
    assert.equal(await api.productCount(), 0)
    for (const good of ['x'.repeat(255), 'a b', '!~', '0b6fd2a2-5a0e-4f7e-9d5e-2b1c3c4d5e6f']) {
      assertFirstAnswer(await api.post('/products', { name: 'Good' }, good))
    }
    assert.equal(await api.productCount(), 4)
  })

  it('lets one of many simultaneous requests with one key create; the rest 409 or a replay', async (t) => {
    const api = await buildKeyedApi(t, dialect)
    const listening = buildApp({ database: api.database })
    t.after(() => listening.close())
    const address = await listening.listen({ port: 0, host: '127.0.0.1' })
    const send = () => postOverHttp(address, api.key, '/products', { name: 'Rush' }, 'rush')
    const answers = await Promise.all(Array.from({ length: 20 }, send))
    assertOneCreatedRestInUseOrReplayed(answers)
    assert.equal(await api.productCount(), 1)
    // Once answered, a retry is a replay.
    const created = answers.find((a) => a.statusCode === 200 && !a.headers['idempotent-replayed'])!
    const retry = await send()
    assert.equal(retry.headers['idempotent-replayed'], 'true')
    assert.equal(retry.body, created.body)
  })

  it('keeps each answer of simultaneous requests with their own keys, 200s and 409s mixed', async (t) => {
    const api = await buildKeyedApi(t, dialect)
    const listening = buildApp({ database: api.database })
    t.after(() => listening.close())
    const address = await listening.listen({ port: 0, host: '127.0.0.1' })
    const product = (await api.post('/products', { name: 'Mixed' })).json().data
    const path = `/products/${product.id}/variants`
    assertFirstAnswer(await api.post(path, { name: 'Taken', sku: 'TAKEN' }))
    // Even requests take a taken sku (409, stored), odd ones a sku of their own (200).
    const bodies = Array.from({ length: 20 }, (_, i) => ({
      name: `V${i}`,
      sku: i % 2 === 0 ? 'TAKEN' : `OWN-${i}`,
    }))
    const send = (i: number) => postOverHttp(address, api.key, path, bodies[i], `mixed-${i}`)
    const firsts = await Promise.all(bodies.map((_, i) => send(i)))
    for (const [i, first] of firsts.entries()) {
      if (i % 2 === 0) expectError(first, 409, 'duplicate_sku')
      else assertFirstAnswer(first)
    }
    const retries = await Promise.all(bodies.map((_, i) => send(i)))
    for (const [i, retry] of retries.entries()) assertReplayOf(retry, firsts[i]!)
    const variants = (await api.get(path)).json().data
    assert.equal(variants.length, 11)
    assert.deepEqual(
      variants.map((v: any) => v.position),
      Array.from({ length: 11 }, (_, i) => i + 1),
    )
  })

  it('forgets an answer after its window: the key then runs a new request', async (t) => {
    const api = await buildKeyedApi(t, dialect, { ttlSeconds: 0.5 })
    const first = await api.post('/products', { name: 'Clock' }, 'short')
    assertFirstAnswer(first)
    await sleep(1500)
    const later = await api.post('/products', { name: 'Clock' }, 'short')
    assertFirstAnswer(later)
    assert.notEqual(later.json().data.id, first.json().data.id)
    const other = await api.post('/products', { name: 'Other' }, 'short2')
    assertFirstAnswer(other)
    await sleep(1500)
    // After the window the key is free for another body too.
    assertFirstAnswer(await api.post('/products', { name: 'Different' }, 'short2'))
    assert.equal(await api.productCount(), 4)
  })

  it('prunes expired records in bounded batches and keeps live ones', async (t) => {
    const shortLived = await buildKeyedApi(t, dialect, { ttlSeconds: 0.2 })
    const { database } = shortLived
    for (let i = 0; i < 5; i++) {
      assertFirstAnswer(await shortLived.post('/products', { name: `P${i}` }, `old-${i}`))
    }
    const live = await buildKeyedApi(t, dialect, { database })
    const kept = await live.post('/products', { name: 'Kept' }, 'live')
    assertFirstAnswer(kept)
    await sleep(600)
    assert.equal(await recordCount(database), 6)
    assert.equal(await pruneExpiredIdempotencyKeys(database, 2), 2)
    assert.equal(await recordCount(database), 4)

    const pruning = startIdempotencyPruning(database, { intervalMs: 20, batchSize: 2 })
    t.after(() => pruning.stop())
    const deadline = Date.now() + 10_000
    while ((await recordCount(database)) > 1 && Date.now() < deadline) await sleep(20)
    await pruning.stop()
    assert.equal(await recordCount(database), 1)
    assertReplayOf(await live.post('/products', { name: 'Kept' }, 'live'), kept)
    assert.equal(await live.productCount(), 6)
  })

  it('writes the record with the product in one transaction: a failed record leaves neither', async (t) => {
    const api = await buildKeyedApi(t, dialect)
    // The record's insert fails after the product's, inside the same unit of work.
    if (dialect === 'sqlite') {
      await sql`
        create trigger refuse_records before insert on idempotency_keys
        begin select raise(abort, 'refused by the test'); end
      `.execute(api.database.kysely)
    } else {
      await sql`
        create function refuse_records() returns trigger language plpgsql as
        $$ begin raise exception 'refused by the test'; end $$
      `.execute(api.database.kysely)
      await sql`
        create trigger refuse_records before insert on idempotency_keys
        for each row execute function refuse_records()
      `.execute(api.database.kysely)
    }
    expectError(await api.post('/products', { name: 'Vase' }, 'atomic'), 500, 'internal_error')
    const product = (await api.post('/products', { name: 'Pot' })).json().data
    expectError(
      await api.post(`/products/${product.id}/variants`, { name: 'Big', sku: 'POT-B' }, 'atomic-v'),
      500,
      'internal_error',
    )
    assert.equal(await api.productCount(), 1)
    assert.equal((await api.get(`/products/${product.id}/variants`)).json().data.length, 0)
    assert.equal(await recordCount(api.database), 0)

    await sql`drop trigger refuse_records ${sql.raw(dialect === 'postgres' ? 'on idempotency_keys' : '')}`.execute(
      api.database.kysely,
    )
    // A 500 is not stored: the retry runs, once.
    assertFirstAnswer(await api.post('/products', { name: 'Vase' }, 'atomic'))
    assertFirstAnswer(
      await api.post(`/products/${product.id}/variants`, { name: 'Big', sku: 'POT-B' }, 'atomic-v'),
    )
    assert.equal(await api.productCount(), 2)
    assert.equal((await api.get(`/products/${product.id}/variants`)).json().data.length, 1)
  })
})

async function postOverHttp(
  address: string,
  key: string,
  path: string,
  body: unknown,
  idempotencyKey: string,
): Promise<Answer> {
  const response = await fetch(`${address}${API}${path}`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${key}`,
      'content-type': 'application/json',
      'idempotency-key': idempotencyKey,
    },
    body: JSON.stringify(body),
  })
  const text = await response.text()
  return {
    statusCode: response.status,
    headers: Object.fromEntries(response.headers),
    body: text,
    json: () => JSON.parse(text),
  }
}

/** Exactly one answer created (200, not replayed); every other is 409 in_use or its replay. */
function assertOneCreatedRestInUseOrReplayed(answers: Answer[]): void {
  const created = answers.filter((a) => a.statusCode === 200 && !a.headers['idempotent-replayed'])
  assert.equal(created.length, 1, answers.map((a) => `${a.statusCode} ${a.body}`).join('\n'))
  for (const answer of answers) {
    if (answer === created[0]) continue
    if (answer.statusCode === 409) expectError(answer, 409, 'idempotency_key_in_use')
    else {
      assert.equal(answer.statusCode, 200, answer.body)
      assert.equal(answer.headers['idempotent-replayed'], 'true')
      assert.equal(answer.body, created[0]!.body)
    }
  }
}

const postgresSuite = POSTGRES_URL ? describe : describe.skip

postgresSuite('Idempotency-Key across two instances on one PostgreSQL [postgres]', () => {
  it('lets one of simultaneous requests with one key create, on either instance', async (t) => {
    const { key, addresses } = await startTwoInstances(t)
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        postOverHttp(addresses[i % 2]!, key, '/products', { name: 'Twin' }, 'twin'),
      ),
    )
    assertOneCreatedRestInUseOrReplayed(answers)
    const list = await fetch(`${addresses[1]}${API}/products`, {
      headers: { authorization: `Bearer ${key}` },
    })
    const page = (await list.json()) as { data: unknown[] }
    assert.equal(page.data.length, 1)
  })

  it('answers 409 idempotency_key_in_use while the key runs on the other instance', async (t) => {
    const { url, key, addresses } = await startTwoInstances(t)
    const created = await postOverHttp(addresses[0]!, key, '/products', { name: 'Held' }, 'p')
    const product = created.json().data
    const path = `/products/${product.id}/variants`
    // Another session locks the product's row, so the first request waits in its work.
    const blocker = new pg.Client({ connectionString: url })
    await blocker.connect()
    t.after(() => blocker.end())
    await blocker.query('begin')
    await blocker.query('select id from products where id = $1 for update', [product.id])
    const first = postOverHttp(addresses[0]!, key, path, { name: 'V' }, 'held')
    try {
      const deadline = Date.now() + 10_000
      for (;;) {
        const { rows } = await blocker.query(
          'select count(*)::int as n from pg_stat_activity where $1 = any(pg_blocking_pids(pid))',
          [(blocker as unknown as { processID: number }).processID],
        )
        if (rows[0].n > 0) break
        assert.ok(Date.now() < deadline, 'the first request never reached the locked row')
        await sleep(20)
      }
      // Without the in-use check, this request would wait behind the locked row as well.
      const during = await Promise.race([
        postOverHttp(addresses[1]!, key, path, { name: 'V' }, 'held'),
        sleep(20_000, undefined, { ref: false }).then(() =>
          assert.fail('the second request waited instead of answering 409'),
        ),
      ])
      expectError(during, 409, 'idempotency_key_in_use')
    } finally {
      await blocker.query('commit')
    }
    const answered = await first
    assertFirstAnswer(answered)
    const retry = await postOverHttp(addresses[1]!, key, path, { name: 'V' }, 'held')
    assertReplayOf(retry, answered)
  })
})

describe('request fingerprint', () => {
  /** The first form of the fingerprint, word for word, which stored records were made with. */
  const recursive = (method: string, path: string, body: unknown) =>
    createHash('sha256')
      .update(`${method} ${path}\n`)
      .update(
        JSON.stringify(body ?? null, (_key: string, value: unknown): unknown => {
          if (value === null || typeof value !== 'object' || Array.isArray(value)) return value
          const sorted: Record<string, unknown> = {}
          for (const name of Object.keys(value).sort()) {
            sorted[name] = (value as Record<string, unknown>)[name]
          }
          return sorted
        }),
      )
      .digest('hex')

  it('is the same hash as JSON.stringify with sorted keys, so keys stored before still match', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const body = JSON.parse(JSON.stringify(value))
        assert.equal(requestFingerprint('POST', '/p', body), recursive('POST', '/p', body))
      }),
      { numRuns: 1000 },
    )
    assert.equal(
      requestFingerprint('DELETE', '/p', undefined),
      recursive('DELETE', '/p', undefined),
    )
  })
})
