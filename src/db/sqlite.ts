import type SqliteDatabase from 'better-sqlite3'
import {
  CompiledQuery,
  Kysely,
  SqliteDialect,
  SqliteDriver,
  sql,
  type DatabaseConnection,
  type SqliteDialectConfig,
} from 'kysely'
import { SQLITE } from './dialect.js'
import { createGroupCommit } from './group-commit.js'
import type { DB } from './schema.js'
import { registerSynchronousReader, sqliteStatements } from './statements.js'
import { transactionSnapshot, type Snapshot } from './transactions.js'

/** Opens a SQLite file (or `:memory:`) with the driver: database.ts's, the one place it is loaded. */
export type OpenSqliteFile = (
  path: string,
  options?: SqliteDatabase.Options,
) => SqliteDatabase.Database

/** The database would answer 200 for commits that a crash could lose; the server refuses to start. */
export class DatabaseNotDurableError extends Error {}

/** How often, at most, SQLite's data_version is read to notice other processes' commits. */
const DATA_VERSION_INTERVAL_MS = 5

/** SQLite at `path`, as a Database (database.ts): see there what each member does. */
export function openSqlite(path: string, openFile: OpenSqliteFile) {
  const inMemory = path === ':memory:'
  const handle = openFile(path)
  // WAL lets readers go on while one writer commits; FULL syncs the WAL on every commit,
  // so a 200 survives a power cut, not only a crash of the process.
  handle.pragma('journal_mode = WAL')
  handle.pragma('synchronous = FULL')
  handle.pragma('foreign_keys = ON')
  handle.pragma('busy_timeout = 5000')
  registerFunctions(handle)
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
    dialect: 'sqlite' as const,
    sqlDialect: SQLITE,
    kysely,
    write: groupCommit,
    writeAtomic: groupCommit,
    keysVersion: (): number | undefined => {
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
    readSnapshot: async (): Promise<Snapshot> => {
      if (inMemory) return { db: kysely, release: async () => {} }
      const reader = new Kysely<DB>({
        dialect: new SqliteDialect({
          database: openFile(path, { readonly: true, fileMustExist: true }),
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
    onWriteBatch: (listener: (size: number) => void) => {
      batchListeners.add(listener)
      return () => batchListeners.delete(listener)
    },
  }
}

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

/** SQL functions the statements need that SQLite lacks (dialect.ts names them). */
function registerFunctions(handle: SqliteDatabase.Database): void {
  handle.function('unicode_lower', { deterministic: true }, (text: unknown) =>
    typeof text === 'string' ? text.toLowerCase() : text,
  )
}
