import type { RawBuilder } from 'kysely'
import { POSTGRES, SQLITE } from './dialect.js'

/**
 * SqlDialect.movedOn of PostgreSQL (`postgres`) or SQLite. Kept for the callers that import
 * it from here; dialectOf(db).movedOn(column, value) says the same without the flag.
 */
export function movedOn(postgres: boolean, column: string, value: unknown): RawBuilder<string> {
  return (postgres ? POSTGRES : SQLITE).movedOn(column, value)
}
