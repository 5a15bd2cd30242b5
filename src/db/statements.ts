import { randomBytes } from 'node:crypto'
import type SqliteDatabase from 'better-sqlite3'
import type {
  Compilable,
  CompiledQuery,
  RawBuilder,
  SqliteDatabase as SqliteDialectDatabase,
} from 'kysely'
import type pg from 'pg'
import { dialectOf, type Dialect } from './dialect.js'
import type { Executor } from './schema.js'

/**
 * The one statement mechanism, for both drivers. A hot statement of fixed shape is built and
 * compiled by Kysely once per dialect, then run with new parameter values: on a point query,
 * building and compiling costs more than SQLite takes to answer it. The same SQL text each
 * time also lets SQLite reuse its prepared statement (sqliteStatements) and PostgreSQL its
 * named one (namedStatements); on SQLite a read runs at once where it safely can
 * (readSynchronously).
 */

/** A compiled statement: run it, or, for a read, try to run it at once (see `now`). */
export interface Statement<P extends unknown[], R> {
  (db: Executor, ...params: P): Promise<R[]>
  /**
   * The rows of the read, run at once on SQLite's connection when that is safe; undefined
   * when it is not (PostgreSQL, an open transaction), or the query is not a read. Two reads
   * run this way one after the other see the same commit: nothing else runs between them.
   */
  now(db: Executor, ...params: P): R[] | undefined
}

/** Builds a statement: `params` are stand-ins, to be used as values only (never branched on). */
export type StatementBuilder<P extends unknown[], R> = (db: Executor, ...params: P) => Compilable<R>

interface Compiled<R> {
  query: CompiledQuery<R>
  /** For each compiled parameter, the index of the caller's that fills it, or -1: a constant. */
  sources: number[]
  read: boolean
}

/**
 * A statement built by `build` the first time it runs on a dialect. `build` receives a
 * stand-in for each parameter and must use each only as a value: the stand-ins are found in
 * the compiled parameters and replaced.
 */
export function statement<P extends unknown[], R>(build: StatementBuilder<P, R>): Statement<P, R> {
  const compiledFor: { [D in Dialect]?: Compiled<R> } = {}
  const tag = randomBytes(8).toString('hex')
  const compile = (db: Executor, params: P): Compiled<R> => {
    const standIns = params.map((_, i) => `\u0000${tag}:${i}`)
    const query = build(db, ...(standIns as P)).compile()
    const sources = query.parameters.map((value) => standIns.indexOf(value as string))
    nameStatement(query.sql)
    return { query, sources, read: query.query.kind === 'SelectQueryNode' }
  }
  const bind = (db: Executor, params: P) => {
    const dialect = dialectOf(db).name
    let compiled = compiledFor[dialect]
    if (compiled === undefined) {
      compiled = compile(db, params)
      compiledFor[dialect] = compiled
    }
    const { query, sources, read } = compiled
    const parameters = sources.map((source, i) =>
      source < 0 ? query.parameters[i] : params[source],
    )
    return { query, parameters, read }
  }
  const run = async (db: Executor, ...params: P): Promise<R[]> => {
    const { query, parameters, read } = bind(db, params)
    const rows = read ? readSynchronously(db, query.sql, parameters) : undefined
    if (rows !== undefined) return rows as R[]
    const result = await db.executeQuery<R>({ ...query, parameters })
    return result.rows
  }
  return Object.assign(run, {
    now: (db: Executor, ...params: P): R[] | undefined => {
      const { query, parameters, read } = bind(db, params)
      return read ? (readSynchronously(db, query.sql, parameters) as R[] | undefined) : undefined
    },
  })
}

/**
 * A statement written as SQL text (Kysely's `sql` tag) rather than built: compiled once and
 * named on PostgreSQL as `statement`'s are. Its shape must not depend on the values (arrays
 * and JSON go as one parameter each).
 */
export function sqlStatement<P extends unknown[], R>(
  build: (...params: P) => RawBuilder<R>,
): Statement<P, R> {
  return statement((db: Executor, ...params: P) => ({
    compile: () => build(...params).compile(db),
  }))
}

/**
 * A family of statements of one purpose whose shape varies (a list's filters, say): one
 * statement per shape, named by `key`. `shape` is whatever `build` needs to write that
 * shape's statement; it is read only the first time its key is met, so pass values already
 * at hand. The family's shapes must be few: each is compiled and kept for good.
 */
export function statementsByKey<S, P extends unknown[], R>(
  build: (shape: S, key: string) => StatementBuilder<P, R>,
): (key: string, shape: S) => Statement<P, R> {
  const made = new Map<string, Statement<P, R>>()
  return (key, shape) => {
    let found = made.get(key)
    if (found === undefined) {
      found = statement(build(shape, key))
      made.set(key, found)
    }
    return found
  }
}

/**
 * SQL text written by hand (multi-row inserts), kept by a `key` that says everything the
 * text depends on, the dialect included: statementText(key) ?? keepStatementText(key, text).
 * Not named on PostgreSQL, as before: their shapes (tables, clauses, pieces) are more than
 * the hot statements'.
 */
const texts = new Map<string, string>()

export function statementText(key: string): string | undefined {
  return texts.get(key)
}

export function keepStatementText(key: string, text: string): string {
  texts.set(key, text)
  return text
}

// PostgreSQL: named statements.

/**
 * Names for the SQL texts of the compiled statements, so that PostgreSQL parses and plans
 * each once per connection instead of on every request: a query sent with a name is
 * prepared the first time a connection sees it, then only bound and executed. Only these
 * texts are named: a small, fixed set (a few dozen shapes), so the statements each
 * connection keeps cannot grow without bound.
 */
const names = new Map<string, string>()

function nameStatement(text: string): void {
  if (!names.has(text)) names.set(text, `catalog_${names.size + 1}`)
}

/** The subset of pg.Pool that Kysely's PostgreSQL driver uses. */
interface KyselyPool {
  connect(): Promise<KyselyPoolClient>
  end(): Promise<void>
}

interface KyselyPoolClient {
  query: pg.PoolClient['query']
  release(error?: Error | boolean): void
}

/**
 * The pool as Kysely sees it: each client it checks out sends the compiled statements' texts
 * as named statements, and everything else (streams, other texts) as before.
 */
export function namedStatements(pool: pg.Pool): KyselyPool {
  const clients = new WeakMap<pg.PoolClient, KyselyPoolClient>()
  const wrap = (client: pg.PoolClient): KyselyPoolClient => {
    const query = ((config: unknown, values?: unknown, callback?: unknown) => {
      const name = typeof config === 'string' ? names.get(config) : undefined
      if (name === undefined || typeof values === 'function') {
        return (client.query as (...args: unknown[]) => unknown)(config, values, callback)
      }
      return client.query({ name, text: config as string, values: values as unknown[] })
    }) as pg.PoolClient['query']
    return { query, release: (error) => client.release(error) }
  }
  return {
    connect: async () => {
      const client = await pool.connect()
      let wrapped = clients.get(client)
      if (wrapped === undefined) {
        wrapped = wrap(client)
        clients.set(client, wrapped)
      }
      return wrapped
    },
    end: () => pool.end(),
  }
}

// SQLite: prepared statements kept, and reads made at once.

/** Runs a read on the connection now, or answers undefined when that is not safe. */
export type SynchronousReader = (
  sql: string,
  parameters: readonly unknown[],
) => unknown[] | undefined

/**
 * SQLite answers a point read in a few microseconds, less than Kysely's asynchronous path
 * around it (the connection's lock, a chain of promises): under load a product read ran at
 * about 0.9x the CPU with reads made at once (docs/decisions/0017-hot-path-statements.md). The embedded database
 * registers its reader here; compiled reads on that instance use it.
 */
const readers = new WeakMap<Executor, SynchronousReader>()

export function registerSynchronousReader(db: Executor, reader: SynchronousReader): void {
  readers.set(db, reader)
}

/**
 * The rows of a read run at once on `db`'s connection, or undefined when `db` has no such
 * reader (PostgreSQL, a transaction) or it declined.
 */
export function readSynchronously(
  db: Executor,
  sql: string,
  parameters: readonly unknown[],
): unknown[] | undefined {
  return readers.get(db)?.(sql, parameters)
}

/**
 * A SQLite connection's statements: `database`, as Kysely's dialect takes it, prepares each
 * text once (Kysely prepares every query it runs; better-sqlite3 statements can be run again
 * and again, and the service's queries are a few dozen shapes); `readRows` runs a read and
 * answers its rows as objects, as Kysely does, but asks better-sqlite3 for arrays and names
 * the values here: it builds an object row in C++ one property at a time, which made the two
 * statements of a product read 40 % slower (docs/decisions/0017-hot-path-statements.md). It keeps statements of its
 * own, since `raw` is a statement's setting and Kysely's path expects objects.
 */
export function sqliteStatements(handle: SqliteDatabase.Database): {
  database: SqliteDialectDatabase
  readRows: (text: string, parameters: readonly unknown[]) => Record<string, unknown>[]
} {
  const readOf = oncePerText((text) => {
    const statement = handle.prepare(text).raw(true)
    return { statement, columns: statement.columns().map((column) => column.name) }
  })
  return {
    database: { close: () => handle.close(), prepare: oncePerText((text) => handle.prepare(text)) },
    readRows: (text, parameters) => {
      const { statement, columns } = readOf(text)
      const tuples = statement.all(parameters) as unknown[][]
      const rows: Record<string, unknown>[] = new Array(tuples.length)
      for (let i = 0; i < tuples.length; i++) {
        const tuple = tuples[i]!
        const row: Record<string, unknown> = {}
        for (let c = 0; c < columns.length; c++) row[columns[c]!] = tuple[c]
        rows[i] = row
      }
      return rows
    },
  }
}

/** `make(text)`, made once per SQL text and kept for the last `capacity` texts. */
function oncePerText<T>(make: (text: string) => T, capacity = 500): (text: string) => T {
  const made = new Map<string, T>()
  return (text) => {
    let value = made.get(text)
    if (value === undefined) {
      value = make(text)
      if (made.size >= capacity) made.delete(made.keys().next().value!)
      made.set(text, value)
    }
    return value
  }
}
