import { PostgresAdapter, sql, type RawBuilder } from 'kysely'
import type { Executor } from './schema.js'

/** The databases the service runs on. */
export type Dialect = 'sqlite' | 'postgres'

/** A query that can lock the rows it reads (Kysely's select builders). */
interface Lockable<Q> {
  forUpdate(): Q
}

/** A query that can take shared locks on the rows it reads. */
interface ShareLockable<Q> {
  forShare(): Q
}

/**
 * What differs between SQLite and PostgreSQL, held in one object per dialect and chosen when
 * the database is opened (Database.sqlDialect), or found from any executor (dialectOf). Code
 * outside db/ asks this object for the piece of SQL that differs instead of branching on the
 * database; where two dialects need different statements altogether, a repository writes
 * two small functions and picks one by `name` (a `Record<Dialect, ...>` constant).
 *
 * Members that build SQL are meant for statement builders (run once per compiled statement,
 * statements.ts), not for the per-request path: each call makes a new RawBuilder.
 */
export interface SqlDialect {
  readonly name: Dialect
  /**
   * Whether transactions write concurrently. PostgreSQL: yes, so rows are locked (`for
   * update`), advisory locks taken, and a commit may become visible after a later one's.
   * SQLite: one writer at a time, which commits in order; locks are needless.
   */
  readonly concurrentWriters: boolean
  /**
   * Whether a create or a PATCH runs as one statement (data-modifying CTEs, RETURNING from
   * each), sparing the transaction's round trips: PostgreSQL. SQLite runs such a unit as
   * steps in the group commit's transaction (Database.writeAtomic).
   */
  readonly oneStatementWrites: boolean
  /**
   * Whether a write that breaks two unique indexes is refused naming the newest of them
   * (SQLite) rather than the first made (PostgreSQL): where the older one must be named (a
   * variant's sku before its options), the caller looks it up.
   */
  readonly newestUniqueIndexFirst: boolean
  /** The placeholder of the `n`th parameter (from 1) in SQL text written by hand. */
  placeholder(n: number): string
  /** `query` locking the rows it reads until the transaction ends, where rows have locks. */
  forUpdate<Q extends Lockable<Q>>(query: Q): Q
  /** `query` holding its rows against updates and deletes until the transaction ends. */
  forShare<Q extends ShareLockable<Q>>(query: Q): Q
  /** `query` locking its rows and skipping those another transaction holds. */
  forUpdateSkipLocked<Q extends Lockable<Q> & { skipLocked(): Q }>(query: Q): Q
  /** A boolean as a column stores it: true and false, or 1 and 0 (SQLite has no booleans). */
  boolean(value: boolean): boolean | number
  /** A boolean column as a condition. */
  isTrue(column: string): RawBuilder<boolean>
  /**
   * A parameter as PostgreSQL's `type` (`timestamptz`, `uuid`, `xid8`...), which it needs
   * to compare or infer. SQLite's columns hold the text or number as sent: as is.
   */
  cast<T>(value: unknown, type: string): RawBuilder<T>
  /**
   * `value` for a timestamp column, or a millisecond past the time the column holds when that
   * is later: a record's updatedAt moves with every change, also with two changes in the
   * same millisecond, and never moves back when two writes that read the clock in one order
   * commit in the other. Both dialects compare the stored time (SQLite's ISO text sorts as
   * time).
   */
  movedOn(column: string, value: unknown): RawBuilder<string>
  /**
   * `column in (values)` with the values as one parameter (a PostgreSQL array, a JSON array
   * on SQLite): one statement text whatever their number, so one compiled and cached
   * statement.
   */
  inList(column: string, type: 'text' | 'uuid', values: readonly string[]): RawBuilder<boolean>
  /**
   * `column` among the rows of `subquery` (one column), probed by an index on `column`:
   * PostgreSQL plans `in (subquery)` over a CTE as a hash join with a scan of the whole table.
   */
  inSubquery(column: string, subquery: RawBuilder<unknown>): RawBuilder<boolean>
  /** The elements of a JSON array (text, a parameter), as rows of one column, `value`. */
  jsonArrayElements(json: unknown): RawBuilder<{ value: string }>
  /**
   * A join clause that adds, to the rows before it, one row per key of the JSON object in
   * `column`, the key as `${alias}.key`.
   */
  joinJsonObjectKeys(column: string, alias: string): RawBuilder<unknown>
  /** Whether the JSON object in `column` has the key `key` (a parameter). */
  jsonObjectHasKey(column: string, key: string): RawBuilder<boolean>
  /** The JSON object in `column` without the key `key` (a parameter), as the column stores it. */
  jsonObjectWithoutKey(column: string, key: string): RawBuilder<string>
  /** `select` of a NOTIFY of `channel` to this schema's listeners; undefined where none listen. */
  notify(channel: string): RawBuilder<unknown> | undefined
  /**
   * Text lowercased as JavaScript's toLowerCase does it (PostgreSQL's lower; SQLite's own
   * lower folds ASCII only, so a function registered on its connection, sqlite.ts).
   */
  lower(expression: RawBuilder<unknown>): RawBuilder<string>
  /** The entries of a JSON object (a column), as rows of two text columns, `key` and `value`. */
  jsonObjectEntries(column: string): RawBuilder<{ key: string; value: string }>
  /** A JSON number's text as a number to compare (a metafield rule's bound). */
  jsonNumber(expression: RawBuilder<unknown>): RawBuilder<number>
  /**
   * The statement that refreshes the planner's statistics of `tables` after a bulk load
   * (PostgreSQL's ANALYZE); undefined on SQLite, which plans by its indexes without them.
   */
  refreshStatistics(tables: readonly string[]): RawBuilder<unknown> | undefined
}

export const SQLITE: SqlDialect = Object.freeze({
  name: 'sqlite',
  concurrentWriters: false,
  oneStatementWrites: false,
  newestUniqueIndexFirst: true,
  placeholder: () => '?',
  forUpdate: (query) => query,
  forShare: (query) => query,
  forUpdateSkipLocked: (query) => query,
  boolean: (value) => (value ? 1 : 0),
  isTrue: (column) => sql<boolean>`${sql.ref(column)} = 1`,
  cast: <T>(value: unknown) => sql<T>`${value}`,
  movedOn: (column, value) =>
    sql<string>`max(strftime('%Y-%m-%dT%H:%M:%fZ', ${sql.ref(column)}, '+0.001 seconds'), ${value})`,
  inList: (column, _type, values) =>
    sql<boolean>`${sql.ref(column)} in (select value from json_each(${JSON.stringify(values)}))`,
  inSubquery: (column, subquery) => sql<boolean>`${sql.ref(column)} in (${subquery})`,
  jsonArrayElements: (json) => sql<{ value: string }>`json_each(${json})`,
  joinJsonObjectKeys: (column, alias) =>
    sql`cross join json_each(${sql.ref(column)}) as ${sql.id(alias)}`,
  jsonObjectHasKey: (column, key) =>
    sql<boolean>`json_type(${sql.ref(column)}, '$."' || ${key} || '"') is not null`,
  jsonObjectWithoutKey: (column, key) =>
    sql<string>`json_remove(${sql.ref(column)}, '$."' || ${key} || '"')`,
  notify: () => undefined,
  lower: (expression) => sql<string>`unicode_lower(${expression})`,
  jsonNumber: (expression) => sql<number>`cast(${expression} as real)`,
  jsonObjectEntries: (column) => sql<{ key: string; value: string }>`json_each(${sql.ref(column)})`,
  refreshStatistics: () => undefined,
} satisfies SqlDialect)

export const POSTGRES: SqlDialect = Object.freeze({
  name: 'postgres',
  concurrentWriters: true,
  oneStatementWrites: true,
  newestUniqueIndexFirst: false,
  placeholder: (n) => `$${n}`,
  forUpdate: (query) => query.forUpdate(),
  forShare: (query) => query.forShare(),
  forUpdateSkipLocked: (query) => query.forUpdate().skipLocked(),
  boolean: (value) => value,
  isTrue: (column) => sql<boolean>`${sql.ref(column)}`,
  cast: <T>(value: unknown, type: string) => sql<T>`${value}::${sql.raw(type)}`,
  movedOn: (column, value) =>
    sql<string>`greatest(${sql.ref(column)} + interval '1 millisecond', ${value}::timestamptz)`,
  inList: (column, type, values) =>
    sql<boolean>`${sql.ref(column)} = any(${values}::${sql.raw(type)}[])`,
  inSubquery: (column, subquery) => sql<boolean>`${sql.ref(column)} = any(array(${subquery}))`,
  jsonArrayElements: (json) => sql<{ value: string }>`json_array_elements_text(${json}::json)`,
  joinJsonObjectKeys: (column, alias) =>
    sql`cross join lateral json_object_keys(${sql.ref(column)}) as ${sql.id(alias)}(key)`,
  jsonObjectHasKey: (column, key) =>
    sql<boolean>`jsonb_exists(${sql.ref(column)}::jsonb, ${key}::text)`,
  jsonObjectWithoutKey: (column, key) =>
    sql<string>`(${sql.ref(column)}::jsonb - ${key}::text)::json`,
  notify: (channel) => sql`select pg_notify(${channel}, current_schema())`,
  lower: (expression) => sql<string>`lower(${expression})`,
  jsonNumber: (expression) => sql<number>`(${expression})::numeric`,
  jsonObjectEntries: (column) =>
    sql<{ key: string; value: string }>`json_each_text(${sql.ref(column)})`,
  refreshStatistics: (tables) => sql`analyze ${sql.join(tables.map((table) => sql.table(table)))}`,
} satisfies SqlDialect)

/**
 * The dialect `db` runs on: its Kysely's adapter, chosen when the database was opened. As
 * cheap as a property read: fit for the per-request path.
 */
export function dialectOf(db: Executor): SqlDialect {
  return db.getExecutor().adapter instanceof PostgresAdapter ? POSTGRES : SQLITE
}
