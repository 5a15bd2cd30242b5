import assert from 'node:assert/strict'
import { it } from 'node:test'
import { sql } from 'kysely'
import { dialectOf } from '../src/db/dialect.js'
import type { Executor } from '../src/db/schema.js'
import { statementsByKey } from '../src/db/statements.js'
import { createTestDatabase, describeEachDialect } from './helpers.js'

/** Each member of the dialect object, run on its database: the same answer on both. */
describeEachDialect('the dialect object', (dialectName) => {
  it('is chosen when the database is opened, and found from any executor', async (t) => {
    const database = await createTestDatabase(t, dialectName)
    assert.equal(database.sqlDialect.name, database.dialect)
    assert.equal(dialectOf(database.kysely), database.sqlDialect)
    await database.kysely.transaction().execute(async (tx) => {
      assert.equal(dialectOf(tx), database.sqlDialect)
    })
  })

  it('builds the pieces of SQL that differ, with one meaning', async (t) => {
    const database = await createTestDatabase(t, dialectName)
    const db = database.kysely
    const d = database.sqlDialect
    const rows = async <R>(query: ReturnType<typeof sql<R>>) => (await query.execute(db)).rows

    const elements = await rows<{ value: string }>(
      sql`select value from ${d.jsonArrayElements('["b","a"]')} as k order by value`,
    )
    assert.deepEqual(
      elements.map((r) => r.value),
      ['a', 'b'],
    )
    const keys = await rows<{ key: string }>(sql`
      select k.key from (select ${d.cast('{"y":1,"x":2}', 'json')} as j) as t
      ${d.joinJsonObjectKeys('t.j', 'k')} order by k.key`)
    assert.deepEqual(
      keys.map((r) => r.key),
      ['x', 'y'],
    )
    const listed = await rows<{ v: string }>(sql`
      select v from (select 'a' as v union all select 'c') as t
      where ${d.inList('t.v', 'text', ['a', 'b'])}`)
    assert.deepEqual(listed, [{ v: 'a' }])
    const enabled = await rows<{ n: number }>(sql`
      select b from (select ${d.cast(d.boolean(true), 'boolean')} as b
        union all select ${d.cast(d.boolean(false), 'boolean')}) as t
      where ${d.isTrue('t.b')}`)
    assert.equal(enabled.length, 1)
    // A stored time at or after the new one: a millisecond past it. Before it: the new one.
    const moved = await rows<{ later: string; earlier: string }>(sql`
      select ${d.movedOn('t.at', '2026-01-01T00:00:00.000Z')} as later,
        ${d.movedOn('t.at', '2026-01-02T00:00:00.000Z')} as earlier
      from (select ${d.cast('2026-01-01T00:00:00.000Z', 'timestamptz')} as at) as t`)
    assert.deepEqual(moved, [
      { later: '2026-01-01T00:00:00.001Z', earlier: '2026-01-02T00:00:00.000Z' },
    ])
    const notify = d.notify('catalog_dialect_test')
    assert.equal(notify === undefined, !d.concurrentWriters)
    if (notify) await notify.execute(db)
  })

  it('locks rows for update where rows have locks, and reads them either way', async (t) => {
    const database = await createTestDatabase(t, dialectName)
    await database.write(async (tx) => {
      const d = dialectOf(tx)
      const select = tx.selectFrom('products').select('id')
      assert.deepEqual(await d.forUpdate(select).execute(), [])
      assert.deepEqual(await d.forUpdateSkipLocked(select).execute(), [])
    })
  })

  it('runs a statement of a keyed family, compiled once per key', async (t) => {
    const database = await createTestDatabase(t, dialectName)
    let built = 0
    const family = statementsByKey((columns: readonly string[]) => {
      built++
      return (db: Executor, text: string) =>
        db.selectNoFrom(columns.map((name) => sql<string>`${text}`.as(name)))
    })
    assert.equal(family('a', ['a']), family('a', ['a']))
    assert.notEqual(family('a', ['a']), family('a,b', ['a', 'b']))
    assert.deepEqual(await family('a,b', ['a', 'b'])(database.kysely, 'x'), [{ a: 'x', b: 'x' }])
    assert.deepEqual(await family('a', ['a'])(database.kysely, 'y'), [{ a: 'y' }])
    assert.equal(built, 2)
  })
})
