import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { describe, it } from 'node:test'
import pg from 'pg'
import { createTestDatabase, POSTGRES_URL } from './helpers.js'

/** The backends LISTENing on `channel`, as the server sees them. */
async function listening(channel: string): Promise<number> {
  const client = new pg.Client({ connectionString: POSTGRES_URL })
  await client.connect()
  try {
    const { rows } = await client.query(
      'select count(*)::int as n from pg_stat_activity where query = $1',
      [`listen ${pg.escapeIdentifier(channel)}`],
    )
    return rows[0].n
  } finally {
    await client.end()
  }
}

async function until(check: () => Promise<boolean>, what: string): Promise<void> {
  for (const deadline = Date.now() + 10_000; !(await check());) {
    if (Date.now() > deadline) assert.fail(what)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

describe('LISTEN connections [postgres]', { skip: !POSTGRES_URL }, () => {
  // A listener left running (a dispatcher that a failed test never stopped) kept its
  // connection, and so its process, alive for good: the suite hung at the file's end.
  it("closing the database ends its listeners' connections, stopped or not", async (t) => {
    const database = await createTestDatabase(t, 'postgres')
    const channel = `test_${randomBytes(4).toString('hex')}`
    const stopOne = database.listen!(channel, () => {})
    database.listen!(channel, () => {})
    await until(async () => (await listening(channel)) === 2, 'both listeners listen')
    await stopOne()
    await until(async () => (await listening(channel)) === 1, 'a stopped listener ends')
    await database.close()
    await until(async () => (await listening(channel)) === 0, 'close ends the one left')
  })
})
