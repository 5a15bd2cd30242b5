import assert from 'node:assert/strict'
import { it } from 'node:test'
import { sql } from 'kysely'
import { migrateToLatest } from '../src/db/migrate.js'
import { createTestDatabase, describeEachDialect } from './helpers.js'

describeEachDialect('migrations', (dialect) => {
  it('running them again applies nothing', async (t) => {
    const database = await createTestDatabase(t, dialect)
    assert.deepEqual(await migrateToLatest(database), [])
  })

  if (dialect === 'postgres') {
    it("see only the connection's own schema, whatever other schemas hold", async (t) => {
      const database = await createTestDatabase(t, dialect)
      const other = await createTestDatabase(t, dialect)
      await sql`create table stray (id int)`.execute(other.kysely)
      const tables = await database.kysely.introspection.getTables({
        withInternalKyselyTables: true,
      })
      const { rows } = await sql<{ schema: string }>`select current_schema() as schema`.execute(
        database.kysely,
      )
      assert.deepEqual(new Set(tables.map((table) => table.schema)), new Set([rows[0]!.schema]))
      assert.ok(tables.some((table) => table.name === 'products'))
      assert.ok(!tables.some((table) => table.name === 'stray'))
    })
  }
})
