import { sql, type RawBuilder } from 'kysely'

/**
 * The SQL of a JSON Merge Patch run as one PostgreSQL statement (the PATCH routes' fast
 * path). Each column the patch may set comes as two parameters, whether it was sent and its
 * value, so that one statement, compiled once, serves every patch: a column not sent keeps
 * its stored value.
 */

/** Column name to its PostgreSQL type, in the order of the statement's parameters. */
export type PatchColumns = Readonly<Record<string, string>>

/** The (sent, value) parameters of `changes` for `columns`; undefined means not sent. */
export function sentPairs(
  columns: PatchColumns,
  changes: Readonly<Record<string, unknown>>,
): unknown[] {
  return Object.keys(columns).flatMap((column) => {
    const value = changes[column]
    return [value !== undefined, value ?? null]
  })
}

export interface PatchedColumn {
  column: string
  /** The column's new value: the one sent, else the stored one. */
  set: RawBuilder<unknown>
  /** True when the column was sent with a value other than the stored one. */
  changed: RawBuilder<unknown>
}

/**
 * The SET value and the change test of each column of `table`, from the statement's
 * parameters `params`, whose (sent, value) pairs start at `offset`. json has no equality:
 * its text, as written, is compared.
 */
export function patchedColumns(
  table: string,
  columns: PatchColumns,
  params: readonly unknown[],
  offset: number,
): PatchedColumn[] {
  return Object.entries(columns).map(([column, type], i) => {
    const sent = params[offset + 2 * i]
    const value = sql`${params[offset + 2 * i + 1]}::${sql.raw(type)}`
    const stored = sql.ref(`${table}.${column}`)
    const differs =
      type === 'json'
        ? sql`${value}::text is distinct from ${stored}::text`
        : sql`${value} is distinct from ${stored}`
    return {
      column,
      set: sql`case when ${sent}::boolean then ${value} else ${stored} end`,
      changed: sql`(${sent}::boolean and ${differs})`,
    }
  })
}

/** The SET entries of the columns, as Kysely's `set` takes them. */
export function setEntries(columns: PatchedColumn[]): Record<string, never> {
  return Object.fromEntries(columns.map((c) => [c.column, c.set])) as Record<string, never>
}
