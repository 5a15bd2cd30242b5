import { mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import SqliteDatabase from 'better-sqlite3'
import {
  CompiledQuery,
  Kysely,
  type ControlledTransaction,
  SqliteDialect,
  SqliteDriver,
  sql,
  type DatabaseConnection,
  type SqliteDialectConfig,
  type Transaction,
} from 'kysely'
import pg from 'pg'
import { createGroupCommit, type UnitOptions } from './group-commit.js'
import { CurrentSchemaPostgresDialect } from './postgres-introspector.js'
import type { DB, Executor } from './schema.js'
import { namedStatements, registerSynchronousReader, sqliteStatements } from './statements.js'
import { isoFromPostgres } from './values.js'
import type { Dialect } from './dialect.js'

export type { Dialect }
export { isPostgres } from './dialect.js'

/** The database as the rest of the service sees it: Kysely, plus how writes are run. */
export interface Database {
  readonly dialect: Dialect
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
   * without a NOTIFY in the write's transaction (docs/decisions.md). Returns its removal.
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
   * each time that connection starts listening, since NOTIFYs sent meanwhile were missed.
   * Returns its stop.
   */
  listen?(channel: string, listener: () => void): () => Promise<void>
}

export interface Snapshot {
  readonly db: Executor
  release(): Promise<void>
}

export interface PoolFigures {
  /** Connections open, busy or idle. */
  total: number
  idle: number
  /** Queries waiting for a connection. */
  waiting: number
  max: number
}

export interface Durability {
  /** e.g. { journal_mode: 'wal', synchronous: 'full' } or { fsync: 'on', synchronous_commit: 'on' } */
  settings: Record<string, string>
  /** The settings that let a crash lose a commit already answered, e.g. ['synchronous_commit']. */
  unsafe: string[]
}

export interface DatabaseOptions {
  /** Told about errors of idle PostgreSQL connections, which no request would see. */
  onIdleError?: (error: Error) => void
  /** Size of the PostgreSQL connection pool. */
  poolSize?: number
}

export class UnsupportedDatabaseUrlError extends Error {}

export function createDatabase(url: string, options: DatabaseOptions = {}): Database {
  if (url.startsWith('sqlite:')) return openSqlite(url.slice('sqlite:'.length))
  if (url.startsWith('postgres://') || url.startsWith('postgresql://'))
    return openPostgres(url, options)
  throw new UnsupportedDatabaseUrlError(
    'DATABASE_URL must start with sqlite:, postgres:// or postgresql://',
  )
}

function openSqlite(path: string): Database {
  if (path === '') throw new UnsupportedDatabaseUrlError('DATABASE_URL sqlite: needs a path')
  const inMemory = path === ':memory:'
  if (!inMemory) mkdirSync(dirname(path), { recursive: true })
  const handle = new SqliteDatabase(path)
  // WAL lets readers go on while one writer commits; FULL syncs the WAL on every commit,
  // so a 200 survives a power cut, not only a crash of the process.
  handle.pragma('journal_mode = WAL')
  handle.pragma('synchronous = FULL')
  handle.pragma('foreign_keys = ON')
  handle.pragma('busy_timeout = 5000')
  // SQLite answers a pragma it cannot apply by keeping the old value, silently: read back.
  const settings = sqliteDurabilitySettings(handle)
  const problems = sqliteDurabilityProblems(settings, inMemory)
  if (problems.length > 0) {
    handle.close()
    throw new DatabaseNotDurableError(
      `SQLite cannot make commits durable for ${path}: ${problems.join('; ')}`,
    )
  }
  const statements = sqliteStatements(handle)
  const kysely = new Kysely<DB>({
    dialect: new WriteTransactionsDialect({ database: statements.database }),
  })
  // Nothing else runs during a synchronous call, and with no transaction open on the
  // connection (a group commit's batch between two statements, say) a read sees only
  // committed rows, each already synced by its commit (but for the webhook dispatcher's, which
  // need not be: UnitOptions). Inside one, the read waits its turn.
  const { readRows } = statements
  registerSynchronousReader(kysely, (text, parameters) =>
    handle.inTransaction ? undefined : readRows(text, parameters),
  )
  const batchListeners = new Set<(size: number) => void>()
  const groupCommit = createGroupCommit(kysely, {
    onBatch: (size) => batchListeners.forEach((listener) => listener(size)),
    // WAL with NORMAL still commits in order and keeps the database whole through a power
    // cut; it loses only the last commits, those not yet synced by a later FULL commit's
    // fsync of the WAL (which covers every frame before it) or a checkpoint.
    relaxSync: (relaxed) => handle.pragma(relaxed ? 'synchronous = NORMAL' : 'synchronous = FULL'),
  })
  const readDataVersion = handle.prepare('pragma data_version').pluck()
  let keysVersion = 0
  let dataVersion: unknown
  let dataVersionReadAt = -Infinity
  return {
    dialect: 'sqlite',
    kysely,
    write: groupCommit,
    writeAtomic: groupCommit,
    keysVersion: () => {
      if (!handle.open) return undefined
      // Reading data_version opens a read transaction: under load, once per few milliseconds
      // is enough to see another process's commit long before it could have told anyone.
      const now = performance.now()
      if (now - dataVersionReadAt >= DATA_VERSION_INTERVAL_MS) {
        dataVersionReadAt = now
        const current = readDataVersion.get()
        if (current !== dataVersion) {
          dataVersion = current
          keysVersion++
        }
      }
      return keysVersion
    },
    keysChanged: async () => {
      keysVersion++
    },
    readSnapshot: async () => {
      if (inMemory) return { db: kysely, release: async () => {} }
      const reader = new Kysely<DB>({
        dialect: new SqliteDialect({
          database: new SqliteDatabase(path, { readonly: true, fileMustExist: true }),
          onCreateConnection: async (connection) => {
            await connection.executeQuery(CompiledQuery.raw('pragma busy_timeout = 5000'))
          },
        }),
      })
      try {
        return transactionSnapshot(await reader.startTransaction().execute(), () =>
          reader.destroy(),
        )
      } catch (error) {
        await reader.destroy()
        throw error
      }
    },
    durability: async () => ({ settings, unsafe: [] }),
    ping: async () => {
      await sql`select 1`.execute(kysely)
    },
    close: () => kysely.destroy(),
    onWriteBatch: (listener) => {
      batchListeners.add(listener)
      return () => batchListeners.delete(listener)
    },
  }
}

/** A snapshot read in a transaction: released by rolling it back (it wrote nothing). */
function transactionSnapshot(
  transaction: ControlledTransaction<DB>,
  afterwards: () => Promise<void> = async () => {},
): Snapshot {
  return {
    db: transaction,
    release: async () => {
      try {
        await transaction.rollback().execute()
      } finally {
        await afterwards()
      }
    },
  }
}

/** The database would answer 200 for commits that a crash could lose; the server refuses to start. */
export class DatabaseNotDurableError extends Error {}

const SQLITE_SYNCHRONOUS = ['off', 'normal', 'full', 'extra'] as const

/** A SQLite connection's journal mode and synchronous level, as it reports them. */
export function sqliteDurabilitySettings(handle: SqliteDatabase.Database): {
  journal_mode: string
  synchronous: string
} {
  const level = handle.pragma('synchronous', { simple: true }) as number
  return {
    journal_mode: String(handle.pragma('journal_mode', { simple: true })),
    synchronous: SQLITE_SYNCHRONOUS[level] ?? String(level),
  }
}

/**
 * What keeps SQLite from making every answered commit survive a crash of the machine:
 * `journal_mode=wal` (an in-memory database has no file to keep, so any mode) and
 * `synchronous=full` (the WAL synced on every commit; `extra` syncs more still).
 */
export function sqliteDurabilityProblems(
  settings: { journal_mode: string; synchronous: string },
  inMemory: boolean,
): string[] {
  const problems: string[] = []
  if (!inMemory && settings.journal_mode !== 'wal')
    problems.push(`journal_mode is ${settings.journal_mode}, not wal`)
  if (settings.synchronous !== 'full' && settings.synchronous !== 'extra')
    problems.push(`synchronous is ${settings.synchronous}, not full`)
  return problems
}

/**
 * SQLite's dialect with every transaction begun as a write (`BEGIN IMMEDIATE`): the service's
 * transactions all write. Begun as a read (Kysely's `BEGIN`), a transaction that reads first
 * cannot become a write once another connection (`catalog import`, another process) has
 * committed since its read: SQLite refuses at once (SQLITE_BUSY, "database is locked"), and
 * no busy_timeout can help. Begun as a write, it waits for the lock at BEGIN (busy_timeout),
 * and others wait for it.
 */
class WriteTransactionsDialect extends SqliteDialect {
  readonly #config: SqliteDialectConfig

  constructor(config: SqliteDialectConfig) {
    super(config)
    this.#config = config
  }

  override createDriver(): SqliteDriver {
    return new WriteTransactionsDriver(this.#config)
  }
}

class WriteTransactionsDriver extends SqliteDriver {
  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'))
  }
}

/** How often, at most, SQLite's data_version is read to notice other processes' commits. */
const DATA_VERSION_INTERVAL_MS = 5

const PG_INT8 = 20
const PG_TIMESTAMPTZ = 1184

function openPostgres(url: string, options: DatabaseOptions): Database {
  const pool = new pg.Pool({
    connectionString: url,
    max: options.poolSize ?? 10,
    // A request waiting for a connection to a database that is down fails within this
    // bound (and is answered 503) instead of hanging.
    connectionTimeoutMillis: 5000,
    idleTimeoutMillis: 30_000,
    // bigint columns hold money in ten-thousandths (at most 10^13) and counters: all within
    // Number's exact range, so they are read as numbers, not strings. Timestamps are read
    // straight to the ISO strings the API answers with, not through a Date.
    types: {
      getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
        oid === PG_INT8
          ? Number
          : oid === PG_TIMESTAMPTZ && format !== 'binary'
            ? isoFromPostgres
            : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
    },
  })
  // pg-pool listens for errors only on idle clients. A connection that drops while a request
  // holds it, between two of its statements, emits 'error' with nobody listening, which would
  // end the process. Hearing it is enough: the request's next statement fails (503) and the
  // pool discards the broken client when it is released.
  pool.on('connect', (client) => client.on('error', () => {}))
  pool.on('error', (error) => options.onIdleError?.(error))
  const kysely = new Kysely<DB>({
    dialect: new CurrentSchemaPostgresDialect({ pool: namedStatements(pool) }),
  })
  const keyChanges = listenForKeyChanges(url)
  const commitListeners = new Set<() => void>()
  const committed = <T>(result: T): T => {
    commitListeners.forEach((listener) => listener())
    return result
  }
  const retries: Record<ConflictAbort, number> = {
    serialization_failure: 0,
    deadlock_detected: 0,
  }
  const retried = (reason: ConflictAbort) => retries[reason]++
  return {
    dialect: 'postgres',
    kysely,
    write: (work) =>
      withRetryOnConflictAbort(() => kysely.transaction().execute(work), retried).then(committed),
    writeAtomic: (work) => withRetryOnConflictAbort(() => work(kysely), retried).then(committed),
    writeRetries: () => retries,
    readSnapshot: async () =>
      transactionSnapshot(
        await kysely
          .startTransaction()
          .setIsolationLevel('repeatable read')
          .setAccessMode('read only')
          .execute(),
      ),
    keysVersion: () => keyChanges.version(),
    keysChanged: async () => {
      keyChanges.changedHere()
      await sql`select pg_notify(${KEYS_CHANNEL}, current_schema())`.execute(kysely)
    },
    durability: async () => {
      const settings: Record<string, string> = {}
      for (const name of POSTGRES_DURABILITY_SETTINGS) {
        const { rows } = await sql<{ setting: string }>`
          select current_setting(${name}) as setting`.execute(kysely)
        settings[name] = rows[0]!.setting
      }
      return {
        settings,
        unsafe: POSTGRES_DURABILITY_SETTINGS.filter((name) => settings[name] === 'off'),
      }
    },
    ping: async () => {
      await sql`select 1`.execute(kysely)
    },
    close: async () => {
      await keyChanges.stop()
      await kysely.destroy()
    },
    listen: (channel, listener) => listenTo(url, channel, listener),
    onWriteCommitted: (listener) => {
      commitListeners.add(listener)
      return () => commitListeners.delete(listener)
    },
    poolFigures: () => ({
      total: pool.totalCount,
      idle: pool.idleCount,
      waiting: pool.waitingCount,
      max: pool.options.max,
    }),
  }
}

/**
 * With either off, PostgreSQL answers a commit that a crash can still lose: `fsync` (the server's
 * setting) of the whole cluster's data, `synchronous_commit` (per session) of the last commits.
 */
const POSTGRES_DURABILITY_SETTINGS = ['fsync', 'synchronous_commit'] as const

const KEYS_CHANNEL = 'catalog_api_keys'

/**
 * A connection of its own that LISTENs for NOTIFYs on API key changes. Opened on first use
 * (CLI commands never need it); while it is not listening, the version is undefined, so
 * nothing is cached; if it drops, the version moves and it reconnects a second later.
 * Each NOTIFY names the schema whose keys changed: services (or tests) in other schemas of
 * the same database share the channel, and their changes must not empty this cache.
 */
function listenForKeyChanges(url: string) {
  let version = 0
  let listening = false
  let connecting = false
  let stopped = false
  let client: pg.Client | undefined

  const lost = () => {
    listening = false
    connecting = false
    client = undefined
    version++
    if (!stopped) setTimeout(connect, 1000).unref()
  }

  const connect = () => {
    if (connecting || listening || stopped) return
    connecting = true
    const candidate = new pg.Client({ connectionString: url })
    let schema: string | undefined
    candidate.on('notification', (message) => {
      if (message.payload === schema) version++
    })
    candidate.on('error', () => candidate.end().catch(() => {}))
    candidate.on('end', () => {
      if (client === candidate) lost()
    })
    candidate
      .connect()
      .then(() => candidate.query<{ schema: string }>('select current_schema() as schema'))
      .then((result) => {
        schema = result.rows[0]?.schema
        return candidate.query(`listen ${KEYS_CHANNEL}`)
      })
      .then(
        () => {
          if (stopped) return candidate.end()
          client = candidate
          listening = true
          connecting = false
          version++
        },
        () => {
          candidate.end().catch(() => {})
          lost()
        },
      )
  }

  return {
    version(): number | undefined {
      if (listening) return version
      connect()
      return undefined
    },
    changedHere() {
      version++
    },
    async stop() {
      stopped = true
      await client?.end()
    },
  }
}

/** A connection of its own LISTENing on `channel` (see Database.listen). */
function listenTo(url: string, channel: string, listener: () => void): () => Promise<void> {
  let stopped = false
  let client: pg.Client | undefined
  const connect = () => {
    if (stopped) return
    const candidate = new pg.Client({ connectionString: url })
    let schema: string | undefined
    let lost = false
    const retry = () => {
      if (lost) return
      lost = true
      if (client === candidate) client = undefined
      candidate.end().catch(() => {})
      if (!stopped) setTimeout(connect, 1000).unref()
    }
    candidate.on('notification', (message) => {
      if (message.payload === schema) listener()
    })
    candidate.on('error', retry)
    candidate.on('end', retry)
    candidate
      .connect()
      .then(() => candidate.query<{ schema: string }>('select current_schema() as schema'))
      .then((result) => {
        schema = result.rows[0]?.schema
        return candidate.query(`listen ${pg.escapeIdentifier(channel)}`)
      })
      .then(() => {
        if (stopped) return void candidate.end().catch(() => {})
        client = candidate
        listener()
      }, retry)
  }
  connect()
  return async () => {
    stopped = true
    const current = client
    client = undefined
    await current?.end().catch(() => {})
  }
}

/** Why PostgreSQL aborted a transaction that lost a race. */
export type ConflictAbort = 'serialization_failure' | 'deadlock_detected'

const CONFLICT_ABORTS: Record<string, ConflictAbort> = {
  '40001': 'serialization_failure',
  '40P01': 'deadlock_detected',
}

/**
 * PostgreSQL may abort a transaction that lost a race; the whole unit of work is run again,
 * and `retried` told why.
 */
async function withRetryOnConflictAbort<T>(
  run: () => Promise<T>,
  retried: (reason: ConflictAbort) => void,
  attempts = 3,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await run()
    } catch (error) {
      const code = (error as { code?: unknown }).code
      const reason = typeof code === 'string' ? CONFLICT_ABORTS[code] : undefined
      if (attempt >= attempts || reason === undefined) throw error
      retried(reason)
    }
  }
}

/**
 * Runs `work` in a transaction: `db`'s own when it is one, else a new one. For a unit of work
 * run by `writeAtomic`, which tries a single statement first and needs a transaction only
 * when that did not settle it.
 */
export function inTransaction<T>(db: Executor, work: (tx: Transaction<DB>) => Promise<T>) {
  return db.isTransaction ? work(db as Transaction<DB>) : db.transaction().execute(work)
}
