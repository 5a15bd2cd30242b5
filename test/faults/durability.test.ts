import assert from 'node:assert/strict'
import { join } from 'node:path'
import { it } from 'node:test'
import SqliteDatabase from '../../src/db/sqlite-driver.js'
import {
  createDatabase,
  sqliteDurabilityProblems,
  sqliteDurabilitySettings,
} from '../../src/db/database.js'
import { API, describeEachDialect } from '../helpers.js'
import { createKey, request, startServe, tempDir, type ServeProcess } from '../process-helpers.js'
import { scratchDatabaseUrl } from './scratch-database.js'

/** The server's JSON log lines. */
function logLines(server: ServeProcess): { level: number; msg: string; durability?: unknown }[] {
  return server
    .stdout()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line))
}

describeEachDialect('faults: durability settings checked at start-up', (dialect) => {
  it('serve reads back the settings that make a 200 durable, logs them, and warns of nothing', async (t) => {
    const server = await startServe(t, { DATABASE_URL: await scratchDatabaseUrl(t, dialect) })
    const lines = logLines(server)
    const reported = lines.find((line) => line.msg === 'database durability settings')
    assert.deepEqual(
      reported?.durability,
      dialect === 'sqlite'
        ? { journal_mode: 'wal', synchronous: 'full' }
        : { fsync: 'on', synchronous_commit: 'on' },
    )
    assert.deepEqual(
      lines.filter((line) => line.level >= 40),
      [],
    )
    t.diagnostic(`durability [${dialect}]: ${JSON.stringify(reported?.durability)}`)
  })

  if (dialect === 'postgres') {
    it('synchronous_commit=off (set in the URL) is logged as one warning line; the server serves anyway', async (t) => {
      const url = new URL(await scratchDatabaseUrl(t, dialect))
      url.searchParams.set('options', '-c synchronous_commit=off')
      const DATABASE_URL = url.toString()
      const { key } = await createKey(DATABASE_URL, 'shop')
      const server = await startServe(t, { DATABASE_URL })
      const warnings = logLines(server).filter((line) => line.level === 40)
      assert.equal(warnings.length, 1, JSON.stringify(warnings))
      assert.match(warnings[0]!.msg, /^synchronous_commit off: /)
      assert.deepEqual(warnings[0]!.durability, { fsync: 'on', synchronous_commit: 'off' })
      t.diagnostic(`warning: ${warnings[0]!.msg}`)
      const created = await request(server, 'POST', `${API}/products`, {
        key,
        body: { name: 'Still served' },
      })
      assert.equal(created.status, 200, JSON.stringify(created.body))
    })
  }

  if (dialect === 'sqlite') {
    it('the start-up check names what keeps a SQLite connection from WAL with synchronous=FULL', async (t) => {
      // No SQLite file lets the service's own pragmas fail silently on this build, so the
      // check is driven with real connections left in other modes.
      const path = join(await tempDir(t), 'rollback.db')
      const file = new SqliteDatabase(path)
      t.after(() => file.close())
      file.pragma('synchronous = NORMAL')
      const settings = sqliteDurabilitySettings(file)
      assert.deepEqual(settings, { journal_mode: 'delete', synchronous: 'normal' })
      assert.deepEqual(sqliteDurabilityProblems(settings, false), [
        'journal_mode is delete, not wal',
        'synchronous is normal, not full',
      ])
      file.pragma('journal_mode = WAL')
      file.pragma('synchronous = FULL')
      assert.deepEqual(sqliteDurabilityProblems(sqliteDurabilitySettings(file), false), [])
      // EXTRA syncs more, never less.
      file.pragma('synchronous = EXTRA')
      assert.deepEqual(sqliteDurabilityProblems(sqliteDurabilitySettings(file), false), [])

      // An in-memory database has no file to keep, so its journal mode does not matter.
      const memory = new SqliteDatabase(':memory:')
      t.after(() => memory.close())
      memory.pragma('synchronous = FULL')
      const inMemory = sqliteDurabilitySettings(memory)
      assert.equal(inMemory.journal_mode, 'memory')
      assert.deepEqual(sqliteDurabilityProblems(inMemory, true), [])
      assert.deepEqual(sqliteDurabilityProblems(inMemory, false), [
        'journal_mode is memory, not wal',
      ])
      memory.pragma('synchronous = OFF')
      assert.deepEqual(sqliteDurabilityProblems(sqliteDurabilitySettings(memory), true), [
        'synchronous is off, not full',
      ])
    })

    it('a SQLite file left in rollback-journal mode is switched to WAL when the service opens it', async (t) => {
      const path = join(await tempDir(t), 'rollback.db')
      const file = new SqliteDatabase(path)
      file.exec('create table leftover (id integer)')
      assert.equal(file.pragma('journal_mode', { simple: true }), 'delete')
      file.close()
      const database = createDatabase(`sqlite:${path}`)
      t.after(() => database.close())
      assert.deepEqual(await database.durability(), {
        settings: { journal_mode: 'wal', synchronous: 'full' },
        unsafe: [],
      })
    })
  }
})
