import { Migrator, type Migration, type MigrationResult } from 'kysely'
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
  })
  const { error, results } = await migrator.migrateToLatest()
  if (error) throw error
  return (results ?? [])
    .filter((result: MigrationResult) => result.status === 'Success')
    .map((result) => result.migrationName)
}
