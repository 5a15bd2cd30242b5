import { randomBytes } from 'node:crypto'
import type { TestContext } from 'node:test'
import pg from 'pg'
import type { Dialect } from '../../src/db/database.js'
import { POSTGRES_URL } from '../helpers.js'
import { databaseUrlFor } from '../process-helpers.js'

/**
 * A DATABASE_URL of the test's own: a SQLite file in a temporary directory, or a PostgreSQL
 * database created for the test and dropped after it. A database rather than a schema: the
 * migrator looks at the tables of every schema of its database, and fails when another test
 * drops its schema at that moment; these tests start many servers, each migrating.
 */
export async function scratchDatabaseUrl(t: TestContext, dialect: Dialect): Promise<string> {
  if (dialect === 'sqlite') return databaseUrlFor(t, 'sqlite')
  if (!POSTGRES_URL) throw new Error('TEST_POSTGRES_URL is not set')
  const name = `faults_${randomBytes(6).toString('hex')}`
  await asAdmin(`create database ${name}`)
  t.after(() => asAdmin(`drop database if exists ${name} with (force)`))
  const url = new URL(POSTGRES_URL)
  url.pathname = `/${name}`
  return url.toString()
}

async function asAdmin(statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: POSTGRES_URL })
  await client.connect()
  try {
    await client.query(statement)
  } finally {
    await client.end()
  }
}
