import { mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import SqliteDatabase from './sqlite-driver.js'
import {
  DatabaseNotDurableError,
  openSqlite,
  sqliteDurabilityProblems,
  sqliteDurabilitySettings,
} from './sqlite.js'
import type { Kysely, Transaction } from 'kysely'
import type { Dialect, SqlDialect } from './dialect.js'
import type { UnitOptions } from './group-commit.js'
import {
  openPostgres,
  type ConflictAbort,
  type PoolFigures,
  type PostgresOptions,
} from './postgres.js'
import type { DB, Executor } from './schema.js'
import type { Snapshot } from './transactions.js'

/** The database as the rest of the service sees it: Kysely, plus how writes are run. */
export interface Database {
  readonly dialect: Dialect
  /** What differs between the two databases' SQL (dialect.ts), chosen when it was opened. */
  readonly sqlDialect: SqlDialect
  readonly kysely: Kysely<DB>
  /**
   * Runs one unit of work (a whole create, say) in a transaction and commits it before
   * resolving. Services hand every write to this function or writeAtomic, so how
   * transactions are run (group commit on SQLite, retries on PostgreSQL) lives here alone.
   * `alone`: SQLite commits this long unit in a transaction of its own. `durable: false`:
   * SQLite need not sync its commit to the disk (UnitOptions).
   */
  write<T>(work: (tx: Transaction<DB>) => Promise<T>, options?: UnitOptions): Promise<T>
  /**
   * Runs a unit of work whose repository functions make it atomic on PostgreSQL without a
   * transaction block (each is a single statement there): it runs as is, sparing the BEGIN
   * and COMMIT round trips. On SQLite it is an ordinary write, in the group commit.
   */
  writeAtomic<T>(work: (db: Executor) => Promise<T>): Promise<T>
  /**
   * A read of many queries that must all see one state of the database (an export, page after
   * page): its queries, run on `db`, see what was committed when the first of them ran, whatever
   * commits later. Release it when done, also on error. PostgreSQL: a REPEATABLE READ, READ
   * ONLY transaction, holding one pooled connection. SQLite: a read transaction on a connection
   * of its own, which WAL lets read while the service writes; an in-memory database has no
   * second connection, so there `db` is the service's own and its reads see every commit.
   */
  readSnapshot(): Promise<Snapshot>
  /**
   * A number that changes whenever API keys may have changed, in this process or another
   * (the CLI), or undefined while such changes cannot be seen (then nothing may be cached).
   * SQLite: its data_version, which moves when another connection commits. PostgreSQL: the
   * count of NOTIFYs heard on a listening connection.
   */
  keysVersion(): number | undefined
  /** Tells every process serving this database that API keys changed. Call after the commit. */
  keysChanged(): Promise<void>
  /**
   * The settings that make a commit durable, as the database reports them, and those of them
   * that are off. SQLite never has any off: it refuses to open without WAL and FULL.
   */
  durability(): Promise<Durability>
  /** Resolves when the database answers a trivial query. */
  ping(): Promise<void>
  close(): Promise<void>
  /** SQLite: tells `listener` the size of each group-commit batch as it starts. Returns its removal. */
  onWriteBatch?(listener: (size: number) => void): () => void
  /**
   * PostgreSQL: calls `listener` after each write of this process (write or writeAtomic) that
   * committed, so that the webhook dispatcher looks for the deliveries it may have queued
   * without a NOTIFY in the write's transaction (docs/decisions/0020-webhook-delivery.md). Returns its removal.
   */
  onWriteCommitted?(listener: () => void): () => void
  /** PostgreSQL: the connection pool's figures at this moment. */
  poolFigures?(): PoolFigures
  /**
   * PostgreSQL: how many units of work were run again since the database was opened, by
   * the reason PostgreSQL aborted them (a deadlock, a serialization failure).
   */
  writeRetries?(): Readonly<Record<ConflictAbort, number>>
  /**
   * PostgreSQL: calls `listener` on each NOTIFY of `channel` whose payload is this database's
   * schema, from a connection of its own (opened now, reopened a second after it drops), and
   * each time that connection starts listening, since NOTIFYs sent meanwhile were missed
   * (listen.ts). Returns its stop.
   */
  listen?(channel: string, listener: () => void): () => Promise<void>
}

export interface Durability {
  /** e.g. { journal_mode: 'wal', synchronous: 'full' } or { fsync: 'on', synchronous_commit: 'on' } */
  settings: Record<string, string>
  /** The settings that let a crash lose a commit already answered, e.g. ['synchronous_commit']. */
  unsafe: string[]
}

/** Settings of the PostgreSQL connection pool; SQLite has none. */
export type DatabaseOptions = PostgresOptions

export class UnsupportedDatabaseUrlError extends Error {}

/** Opens the database at `url`: sqlite:<path> (sqlite.ts) or postgres://... (postgres.ts). */
export function createDatabase(url: string, options: DatabaseOptions = {}): Database {
  if (url.startsWith('sqlite:')) {
    const path = url.slice('sqlite:'.length)
    if (path === '') throw new UnsupportedDatabaseUrlError('DATABASE_URL sqlite: needs a path')
    return openSqlite(path, openSqliteFile)
  }
  if (url.startsWith('postgres://') || url.startsWith('postgresql://'))
    return openPostgres(url, options)
  throw new UnsupportedDatabaseUrlError(
    'DATABASE_URL must start with sqlite:, postgres:// or postgresql://',
  )
}

/**
 * Opens a SQLite file with the driver, which is imported here alone; the service's own file
 * gets its folder made first.
 */
function openSqliteFile(path: string, options?: SqliteDatabase.Options): SqliteDatabase.Database {
  if (path !== ':memory:' && options?.readonly !== true)
    mkdirSync(dirname(path), { recursive: true })
  return new SqliteDatabase(path, options)
}

// Kept for the callers outside db/ that import them from here (the new homes in brackets).
export { DatabaseNotDurableError, sqliteDurabilityProblems, sqliteDurabilitySettings } // sqlite.ts
export type { ConflictAbort, Dialect, PoolFigures, Snapshot }
