import { Migrator, sql, type Migration, type MigrationResult } from 'kysely'
import type { Database, Dialect } from './database.js'
import * as postgresInitial from './migrations/postgres/2026-11-21T00-initial.js'
import * as sqliteInitial from './migrations/sqlite/2026-11-21T00-initial.js'

/** Each dialect's migrations, by name; names sort in the order they are applied. */
const MIGRATIONS: Record<Dialect, Record<string, Migration>> = {
  sqlite: { '2026-11-21T00-initial': sqliteInitial },
  postgres: { '2026-11-21T00-initial': postgresInitial },
}

/** Applies every pending migration; returns the names applied (none when up to date). */
export async function migrateToLatest(database: Database): Promise<string[]> {
  const migrator = new Migrator({
    db: database.kysely,
    provider: { getMigrations: async () => MIGRATIONS[database.dialect] },
    // Without a schema named, Kysely looks for its bookkeeping tables in every schema of the
    // database and takes another schema's for its own.
    migrationTableSchema: await currentSchema(database),
  })
  const { error, results } = await withRetryOnSchemaDroppedMeanwhile(() =>
    migrator.migrateToLatest(),
  )
  if (error) throw error
  return (results ?? [])
    .filter((result: MigrationResult) => result.status === 'Success')
    .map((result) => result.migrationName)
}

async function currentSchema(database: Database): Promise<string | undefined> {
  if (database.dialect !== 'postgres') return undefined
  const { rows } = await sql<{ schema: string }>`select current_schema() as schema`.execute(
    database.kysely,
  )
  return rows[0]?.schema
}

/**
 * Kysely's migrator lists the tables of every schema of the database, checking its privilege
 * on each: a schema that another client drops during that listing fails it with 3F000
 * (invalid_schema_name), though nothing is wrong with ours. The migration is then run again.
 */
async function withRetryOnSchemaDroppedMeanwhile<T extends { error?: unknown }>(
  migrate: () => Promise<T>,
  attempts = 5,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const outcome = await migrate()
    const code = (outcome.error as { code?: unknown } | undefined)?.code
    if (code !== '3F000' || attempt >= attempts) return outcome
  }
}
