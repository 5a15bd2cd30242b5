import assert from 'node:assert/strict'
import { describe, it, type TestContext } from 'node:test'
import { sql } from 'kysely'
import { buildApp } from '../src/app.js'
import { createApiKey } from '../src/auth/api-key.service.js'
import type { Database } from '../src/db/database.js'
import { API, createTestDatabase, POSTGRES_URL } from './helpers.js'

/** How long the writers write: the issue asks for 10 s. */
const LOAD_MS = 10_000
const WRITERS = 8

/**
 * 8 writers create and patch products for 10 s (some through the one-statement paths, some
 * through transactions, some with an Idempotency-Key, whose transaction holds its event
 * longest before it commits), while readers follow the feed. On PostgreSQL a sequence value
 * taken by a transaction that commits later can be lower than one already read: a feed that
 * pages by `seq > cursor` skips such an event for good.
 */
interface Service {
  database: Database
  app: ReturnType<typeof buildApp>
  key: string
}

async function underLoad(t: TestContext, readers: Record<string, (service: Service) => Reader>) {
  const database = await createTestDatabase(t, 'postgres')
  const app = buildApp({ database, rateLimit: { perMinute: 0 } })
  t.after(() => app.close())
  const { key } = await createApiKey(database, { store: 'shop', scopes: ['read', 'write'] })
  const send = async (method: 'POST' | 'PATCH', path: string, body: unknown, idem?: string) => {
    const res = await app.inject({
      method,
      url: `${API}${path}`,
      headers: {
        authorization: `Bearer ${key}`,
        'content-type': 'application/json',
        ...(idem && { 'idempotency-key': idem }),
      },
      payload: JSON.stringify(body),
    })
    assert.equal(res.statusCode, 200, `${method} ${path}: ${res.body}`)
    return res.json().data
  }
  const stopAt = Date.now() + LOAD_MS
  let writes = 0
  const writer = async (w: number) => {
    for (let i = 0; Date.now() < stopAt; i++) {
      const idem = w % 2 === 0 ? `w${w}-${i}` : undefined
      const product = await send('POST', '/products', { name: `W${w} ${i}` }, idem && `${idem}-c`)
      await send('PATCH', `/products/${product.id}`, { price: i + 1 }, idem && `${idem}-p`)
      await send('PATCH', `/products/${product.id}`, { tags: [`t${i}`] })
      writes += 3
    }
  }
  const running = Object.fromEntries(
    Object.entries(readers).map(([name, make]) => [name, make({ database, app, key })]),
  )
  const following = Object.values(running).map((reader) => reader.follow(() => Date.now() < stopAt))
  await Promise.all(Array.from({ length: WRITERS }, (_, w) => writer(w)))
  await Promise.all(following)
  const { rows } = await sql<{ id: string }>`
    select id from events where store_id = 'shop'`.execute(database.kysely)
  const stored = new Set(rows.map((row) => row.id))
  assert.equal(rows.length, writes, 'one event per write')
  assert.equal(stored.size, rows.length, 'each event stored once')
  // After the load, each reader reads on until it has caught up (or 10 s have passed).
  for (const reader of Object.values(running)) {
    const deadline = Date.now() + 10_000
    while (reader.seen.length < stored.size && Date.now() < deadline) {
      const before = reader.seen.length
      await reader.read()
      if (reader.seen.length === before) await new Promise((resolve) => setTimeout(resolve, 20))
    }
  }
  return { stored, running, database }
}

interface Reader {
  seen: string[]
  /** For each id seen, the cursor of each page that held it. */
  pages: Map<string, string[]>
  read(): Promise<void>
  follow(going: () => boolean): Promise<void>
}

function reader(read: (after: string) => Promise<{ ids: string[]; next: string }>, start: string) {
  let cursor = start
  const seen: string[] = []
  const pages = new Map<string, string[]>()
  const self: Reader = {
    seen,
    pages,
    async read() {
      const page = await read(cursor)
      seen.push(...page.ids)
      for (const id of page.ids) pages.set(id, [...(pages.get(id) ?? []), cursor])
      cursor = page.next
    },
    async follow(going) {
      while (going()) {
        await self.read()
        await new Promise((resolve) => setImmediate(resolve))
      }
    },
  }
  return self
}

/** The feed of the service, as a client follows it: GET /events with its nextCursor. */
function feedReader({ app, key }: Service): Reader {
  return reader(async (after) => {
    const res = await app.inject({
      method: 'GET',
      url: `${API}/events?limit=500${after ? `&after=${after}` : ''}`,
      headers: { authorization: `Bearer ${key}` },
    })
    assert.equal(res.statusCode, 200, res.body)
    const body = res.json()
    return { ids: body.data.map((event: { id: string }) => event.id), next: body.nextCursor }
  }, '')
}

/** A deliberately naive feed: `where seq > $cursor order by seq`, as a sequence suggests. */
function naiveReader({ database }: Service): Reader {
  return reader(async (after) => {
    const { rows } = await sql<{ id: string; seq: number }>`
      select id, seq from events
      where store_id = 'shop' and seq > ${Number(after || 0)}
      order by seq limit 500`.execute(database.kysely)
    return { ids: rows.map((row) => row.id), next: String(rows.at(-1)?.seq ?? (after || 0)) }
  }, '0')
}

function missingAndRepeated(seen: string[], stored: Set<string>) {
  const once = new Set(seen)
  return {
    missing: [...stored].filter((id) => !once.has(id)).length,
    repeated: seen.length - once.size,
    unknown: [...once].filter((id) => !stored.has(id)).length,
  }
}

describe('the event feed under concurrent writes [postgres]', { skip: !POSTGRES_URL }, () => {
  it('8 writers for 10 s: a naive `seq > cursor` feed skips events; the service feed sees each event once', async (t) => {
    const result = await underLoad(t, { naive: naiveReader, feed: feedReader })
    const naive = missingAndRepeated(result.running.naive!.seen, result.stored)
    const feed = missingAndRepeated(result.running.feed!.seen, result.stored)
    t.diagnostic(
      `events: ${result.stored.size}; naive feed: ${naive.missing} missing, ${naive.repeated} repeated; ` +
        `service feed: ${feed.missing} missing, ${feed.repeated} repeated`,
    )
    assert.ok(naive.missing > 0, 'the naive feed skipped no event: the load did not show the race')
    if (feed.repeated > 0) {
      // What the database holds of each event seen twice, and after which cursors it came.
      const { database } = result
      for (const [id, cursors] of result.running.feed!.pages) {
        if (cursors.length < 2) continue
        const { rows } = await sql`
          select xid::text as xid, seq, type from events where id = ${id}`.execute(database.kysely)
        const after = cursors.map((c) => Buffer.from(c, 'base64url').toString())
        t.diagnostic(`${id} seen after ${after.join(' and ')}; stored ${JSON.stringify(rows)}`)
      }
    }
    assert.deepEqual(feed, { missing: 0, repeated: 0, unknown: 0 })
  })
})
