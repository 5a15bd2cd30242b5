import { sql, type RawBuilder } from 'kysely'

/**
 * `value` for a timestamp column, unless the column already holds a later time: a record's
 * updatedAt never moves back when two writes that read the clock in one order commit in the
 * other. Both dialects compare the stored time (SQLite's ISO text sorts as time).
 */
export function notBefore(postgres: boolean, column: string, value: unknown): RawBuilder<string> {
  return postgres
    ? sql<string>`greatest(${sql.ref(column)}, ${value}::timestamptz)`
    : sql<string>`max(${sql.ref(column)}, ${value})`
}
