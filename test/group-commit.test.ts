// test:serial: counts how many writes that arrive together share a commit.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { it, describe, type TestContext } from 'node:test'
import SqliteDatabase, { sqliteDriverPackage } from '../src/db/sqlite-driver.js'
import { Kysely, SqliteDialect, sql } from 'kysely'
import { createDatabase } from '../src/db/database.js'
import { createGroupCommit } from '../src/db/group-commit.js'
import type { Executor } from '../src/db/schema.js'

const ROOT = fileURLToPath(new URL('..', import.meta.url))

interface Items {
  items: { id: number; label: string }
}

async function openFileDatabase(t: TestContext) {
  const dir = await mkdtemp(join(tmpdir(), 'group-commit-'))
  t.after(() => rm(dir, { recursive: true, force: true }))
  const path = join(dir, 'test.db')
  const handle = new SqliteDatabase(path)
  handle.pragma('journal_mode = WAL')
  handle.pragma('synchronous = FULL')
  const kysely = new Kysely<Items>({ dialect: new SqliteDialect({ database: handle }) })
  t.after(() => kysely.destroy())
  await sql`create table items (id integer primary key, label text not null unique)`.execute(kysely)
  const batches: number[] = []
  const write = createGroupCommit(kysely, { onBatch: (size) => batches.push(size) })
  return { path, kysely, write, batches, handle }
}

describe('group commit (SQLite)', () => {
  it('runs writes that arrive together in fewer transactions than writes', async (t) => {
    const { kysely, write, batches } = await openFileDatabase(t)
    await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        write((tx) =>
          tx
            .insertInto('items')
            .values({ id: i, label: `item ${i}` })
            .execute(),
        ),
      ),
    )
    const rows = await kysely.selectFrom('items').select('id').execute()
    assert.equal(rows.length, 40)
    assert.equal(
      batches.reduce((a, b) => a + b, 0),
      40,
    )
    assert.ok(batches.length < 40, `40 writes took ${batches.length} commits`)
  })

  it('commits a unit alone in a transaction of its own: those queued before it commit first, those after it next', async (t) => {
    const { write, batches } = await openFileDatabase(t)
    const resolved: string[] = []
    const insert = (id: number, options?: { alone: boolean }) =>
      write(
        (tx) =>
          tx
            .insertInto('items')
            .values({ id, label: `item ${id}` })
            .execute(),
        options,
      ).then(() => resolved.push(options?.alone ? `alone ${id}` : `${id}`))
    await Promise.all([
      insert(1),
      insert(2),
      insert(3, { alone: true }),
      insert(4, { alone: true }),
      insert(5),
      insert(6),
    ])
    assert.deepEqual(batches, [2, 1, 1, 2])
    assert.deepEqual(resolved, ['1', '2', 'alone 3', 'alone 4', '5', '6'])
  })

  it('rolls back a failing write alone: the others of its batch are committed', async (t) => {
    const { kysely, write, batches } = await openFileDatabase(t)
    const results = await Promise.allSettled(
      Array.from({ length: 20 }, (_, i) =>
        write(async (tx) => {
          // Every fourth unit writes a row, then fails: that row must not survive.
          await tx
            .insertInto('items')
            .values({ id: i, label: `item ${i}` })
            .execute()
          if (i % 4 === 0) throw new Error(`unit ${i} failed`)
          return i
        }),
      ),
    )
    assert.ok(
      batches.some((size) => size > 1),
      'the writes were batched',
    )
    results.forEach((result, i) => {
      if (i % 4 === 0) assert.equal(result.status, 'rejected')
      else assert.deepEqual(result, { status: 'fulfilled', value: i })
    })
    const ids = (await kysely.selectFrom('items').select('id').orderBy('id').execute()).map(
      (row) => row.id,
    )
    assert.deepEqual(
      ids,
      Array.from({ length: 20 }, (_, i) => i).filter((i) => i % 4 !== 0),
    )
  })

  it('sees earlier writes of its own batch: a duplicate in one batch is refused', async (t) => {
    const { write } = await openFileDatabase(t)
    const results = await Promise.allSettled(
      Array.from({ length: 10 }, (_, i) =>
        write((tx) => tx.insertInto('items').values({ id: i, label: 'same' }).execute()),
      ),
    )
    assert.equal(results.filter((result) => result.status === 'fulfilled').length, 1)
  })

  it('resolves a write only once it is committed: another connection already sees it', async (t) => {
    const { path, write } = await openFileDatabase(t)
    const reader = new SqliteDatabase(path, { readonly: true })
    t.after(() => reader.close())
    const seen = await Promise.all(
      Array.from({ length: 25 }, (_, i) =>
        write((tx) =>
          tx
            .insertInto('items')
            .values({ id: i, label: `item ${i}` })
            .execute(),
        ).then(() => reader.prepare('select count(*) as n from items where id = ?').get(i)),
      ),
    )
    assert.deepEqual(
      seen,
      Array.from({ length: 25 }, () => ({ n: 1 })),
    )
  })

  it('commits a batch of units that need not be durable without the fsync, and only such a batch', async (t) => {
    const { kysely, handle } = await openFileDatabase(t)
    const relaxed: boolean[] = []
    const write = createGroupCommit(kysely, {
      relaxSync: (relax) => {
        relaxed.push(relax)
        handle.pragma(relax ? 'synchronous = NORMAL' : 'synchronous = FULL')
      },
    })
    const synchronous = async (tx: Kysely<Items>) =>
      Object.values((await sql.raw('pragma synchronous').execute(tx)).rows[0] as object)[0]
    const levels = await Promise.all([
      write((tx) => synchronous(tx), { durable: false }),
      write((tx) => synchronous(tx), { durable: false }),
    ])
    assert.deepEqual(levels, [1, 1]) // NORMAL
    assert.deepEqual(relaxed, [true, false])
    // One durable unit among them: the batch's commit waits for the disk.
    const mixed = await Promise.all([
      write((tx) => synchronous(tx), { durable: false }),
      write((tx) => synchronous(tx)),
    ])
    assert.deepEqual(mixed, [2, 2]) // FULL
    assert.deepEqual(relaxed, [true, false])
    assert.equal(handle.pragma('synchronous', { simple: true }), 2)
    // A batch that fails restores FULL all the same.
    await assert.rejects(
      write(
        async () => {
          throw new Error('refused')
        },
        { durable: false },
      ),
    )
    assert.deepEqual(relaxed, [true, false, true, false])
    assert.equal(handle.pragma('synchronous', { simple: true }), 2)
  })

  it('rejects every write of a batch whose transaction cannot run', async (t) => {
    const { kysely, write } = await openFileDatabase(t)
    await kysely.destroy()
    const results = await Promise.allSettled(
      Array.from({ length: 5 }, (_, i) =>
        write((tx) =>
          tx
            .insertInto('items')
            .values({ id: i, label: `${i}` })
            .execute(),
        ),
      ),
    )
    assert.ok(results.every((result) => result.status === 'rejected'))
  })
})

describe('SQLite durability settings', () => {
  it('opens file databases in WAL mode with synchronous=FULL and foreign keys on', async (t) => {
    const dir = await mkdtemp(join(tmpdir(), 'durability-'))
    t.after(() => rm(dir, { recursive: true, force: true }))
    const database = createDatabase(`sqlite:${join(dir, 'c.db')}`)
    t.after(() => database.close())
    const pragma = async (name: string) =>
      Object.values((await sql.raw(`pragma ${name}`).execute(database.kysely)).rows[0] as object)[0]
    assert.equal(await pragma('journal_mode'), 'wal')
    assert.equal(await pragma('synchronous'), 2) // FULL
    assert.equal(await pragma('foreign_keys'), 1)
    assert.equal(await pragma('busy_timeout'), 5000)
  })

  it('commits a write that need not be durable with synchronous=NORMAL, the others with FULL', async (t) => {
    const dir = await mkdtemp(join(tmpdir(), 'durability-'))
    t.after(() => rm(dir, { recursive: true, force: true }))
    const database = createDatabase(`sqlite:${join(dir, 'c.db')}`)
    t.after(() => database.close())
    const synchronous = async (db: Executor) =>
      Object.values((await sql.raw('pragma synchronous').execute(db)).rows[0] as object)[0]
    assert.equal(await database.write((tx) => synchronous(tx), { durable: false }), 1)
    assert.equal(await database.write((tx) => synchronous(tx)), 2)
    assert.equal(await synchronous(database.kysely), 2)
  })
})

describe('SQLite beside another process on the same file', () => {
  it("a write that reads first keeps its turn: another process's commit in between does not fail it", async (t) => {
    const dir = await mkdtemp(join(tmpdir(), 'two-processes-'))
    t.after(() => rm(dir, { recursive: true, force: true }))
    const path = join(dir, 'c.db')
    const database = createDatabase(`sqlite:${path}`)
    t.after(() => database.close())
    await sql`create table items (id integer primary key, label text not null)`.execute(
      database.kysely,
    )
    // Another process (`catalog import`, or a second server) writing to the same file. It
    // waits for the lock at most 200 ms, then gives up.
    const otherProcessWrites = () =>
      spawnSync(
        process.execPath,
        [
          '-e',
          `const db = new (require(${JSON.stringify(sqliteDriverPackage)}))(${JSON.stringify(path)})
           db.pragma('busy_timeout = 200')
           try { db.exec("insert into items (label) values ('other')") } catch { process.exit(3) }`,
        ],
        { cwd: ROOT },
      ).status
    const label = await database.write(async (tx) => {
      await sql`select count(*) as n from items`.execute(tx)
      // Started as a read, a transaction could not become a write once the other commit
      // landed (SQLITE_BUSY, "database is locked", at once: no busy wait can help). Begun
      // as a write, it holds the lock, and the other process waits for it instead.
      assert.equal(otherProcessWrites(), 3)
      await sql`insert into items (label) values ('mine')`.execute(tx)
      return 'mine'
    })
    assert.equal(label, 'mine')
    assert.equal(otherProcessWrites(), 0)
    const { rows } = await sql<{ label: string }>`select label from items order by id`.execute(
      database.kysely,
    )
    assert.deepEqual(
      rows.map((row) => row.label),
      ['mine', 'other'],
    )
  })
})
