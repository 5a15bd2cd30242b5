import { sql, type RawBuilder } from 'kysely'

/**
 * `value` for a timestamp column, or a millisecond past the time the column holds when that
 * is later: a record's updatedAt moves with every change, also with two changes in the same
 * millisecond, and never moves back when two writes that read the clock in one order commit
 * in the other. Both dialects compare the stored time (SQLite's ISO text sorts as time).
 */
export function movedOn(postgres: boolean, column: string, value: unknown): RawBuilder<string> {
  return postgres
    ? sql<string>`greatest(${sql.ref(column)} + interval '1 millisecond', ${value}::timestamptz)`
    : sql<string>`max(strftime('%Y-%m-%dT%H:%M:%fZ', ${sql.ref(column)}, '+0.001 seconds'), ${value})`
}
