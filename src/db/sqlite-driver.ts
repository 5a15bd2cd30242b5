import { createRequire } from 'node:module'
import type BetterSqlite3 from 'better-sqlite3'

/**
 * The one module that loads the SQLite driver (docs/decisions/node-versions.md).
 * better-sqlite3 13 is built on Node-API 10, which Node has from 22.14 on (and every 24); older
 * Nodes cannot load it. 12, installed under the alias `better-sqlite3-node20`, loads there but
 * aborts now and then on Node 24 (in a Statement's finalizer). So: 13 wherever Node-API 10 is
 * there, 12 only where it is not (Node 20, and 22 before 22.14).
 */
export const sqliteDriverPackage =
  Number(process.versions.napi) >= 10 ? 'better-sqlite3' : 'better-sqlite3-node20'

const require = createRequire(import.meta.url)
let driver: typeof BetterSqlite3 | undefined

function load(): typeof BetterSqlite3 {
  try {
    return require(sqliteDriverPackage) as typeof BetterSqlite3
  } catch (error) {
    throw new Error(
      `SQLite's driver (${sqliteDriverPackage}) could not be loaded on Node ${process.version}: ` +
        'run `npm ci` under this Node, or use Node 22.14 or newer',
      { cause: error },
    )
  }
}

/**
 * better-sqlite3's `Database` class, as `import SqliteDatabase from 'better-sqlite3'` gives it:
 * `new SqliteDatabase(path, options)`. The driver is loaded at the first database opened, not
 * at import, so that a service on PostgreSQL never needs it.
 */
const SqliteDatabase = function SqliteDatabase(
  filename?: string | Buffer,
  options?: BetterSqlite3.Options,
) {
  driver ??= load()
  return new driver(filename, options)
} as unknown as typeof BetterSqlite3

// Both majors have one API (13 only added to it: `explain()`, opening from a file descriptor),
// typed by @types/better-sqlite3, as 13 ships no types of its own. Re-exported under the same
// name, so that `SqliteDatabase.Database` reads as before.
declare namespace SqliteDatabase {
  type Database = BetterSqlite3.Database
  type Options = BetterSqlite3.Options
  type Statement<
    BindParameters extends unknown[] | {} = unknown[],
    Result = unknown,
  > = BetterSqlite3.Statement<BindParameters, Result>
  type RunResult = BetterSqlite3.RunResult
}

export default SqliteDatabase
