import { Kysely, sql, type Transaction } from 'kysely'
import pg from 'pg'
import { POSTGRES } from './dialect.js'
import { listenTo, type Listener } from './listen.js'
import { CurrentSchemaPostgresDialect } from './postgres-introspector.js'
import type { DB, Executor } from './schema.js'
import { namedStatements } from './statements.js'
import { transactionSnapshot } from './transactions.js'
import { isoFromPostgres } from './values.js'

export interface PostgresOptions {
  /** Told about errors of idle PostgreSQL connections, which no request would see. */
  onIdleError?: (error: Error) => void
  /** Size of the PostgreSQL connection pool. */
  poolSize?: number
}

export interface PoolFigures {
  /** Connections open, busy or idle. */
  total: number
  idle: number
  /** Queries waiting for a connection. */
  waiting: number
  max: number
}

/** Why PostgreSQL aborted a transaction that lost a race. */
export type ConflictAbort = 'serialization_failure' | 'deadlock_detected'

const PG_INT8 = 20
const PG_TIMESTAMPTZ = 1184

/**
 * With either off, PostgreSQL answers a commit that a crash can still lose: `fsync` (the server's
 * setting) of the whole cluster's data, `synchronous_commit` (per session) of the last commits.
 */
const POSTGRES_DURABILITY_SETTINGS = ['fsync', 'synchronous_commit'] as const

const KEYS_CHANNEL = 'catalog_api_keys'

/**
 * The planner's cost of starting parallel workers, for this service's sessions (PostgreSQL's
 * default is 1,000): a page of the list (50 rows, LIMIT 51) was planned with workers, which
 * start late and run ahead of the page, 5 to 15 times slower than without them (a filter on a
 * custom attribute at 1,000,000 products: 100 to 200 ms p50 against 8 to 28 ms); counts over
 * many rows (facets) still cost enough to take them, and gain from them. Decision 0057.
 */
const PARALLEL_SETUP_COST = 10_000

/** PostgreSQL at `url`, as a Database (database.ts): see there what each member does. */
export function openPostgres(url: string, options: PostgresOptions) {
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
  pool.on('connect', (client) => {
    client.on('error', () => {})
    // Queued before the client's first statement. See PARALLEL_SETUP_COST.
    client.query(`set parallel_setup_cost = ${PARALLEL_SETUP_COST}`).catch(() => {})
  })
  pool.on('error', (error) => options.onIdleError?.(error))
  const kysely = new Kysely<DB>({
    dialect: new CurrentSchemaPostgresDialect({ pool: namedStatements(pool) }),
  })
  const keyChanges = listenForKeyChanges(url)
  const listeners = new Set<Listener>()
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
    dialect: 'postgres' as const,
    sqlDialect: POSTGRES,
    kysely,
    write: <T>(work: (tx: Transaction<DB>) => Promise<T>) =>
      withRetryOnConflictAbort(() => kysely.transaction().execute(work), retried).then(committed),
    writeAtomic: <T>(work: (db: Executor) => Promise<T>) =>
      withRetryOnConflictAbort(() => work(kysely), retried).then(committed),
    writeRetries: (): Readonly<Record<ConflictAbort, number>> => retries,
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
      await POSTGRES.notify(KEYS_CHANNEL)!.execute(kysely)
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
      // A listener its user forgot to stop would keep its connection, and the process, alive.
      await Promise.all([...listeners].map((listening) => listening.stop()))
      await keyChanges.stop()
      await kysely.destroy()
    },
    listen: (channel: string, listener: () => void): (() => Promise<void>) => {
      const listening = listenTo(url, channel, { notified: listener, listening: listener })
      listeners.add(listening)
      listening.start()
      return () => {
        listeners.delete(listening)
        return listening.stop()
      }
    },
    onWriteCommitted: (listener: () => void) => {
      commitListeners.add(listener)
      return () => commitListeners.delete(listener)
    },
    poolFigures: (): PoolFigures => ({
      total: pool.totalCount,
      idle: pool.idleCount,
      waiting: pool.waitingCount,
      max: pool.options.max,
    }),
  }
}

/**
 * The version of the API keys (Database.keysVersion): it moves on each NOTIFY of a change in
 * this schema, each change made here, and each time the listening connection is lost or
 * listens again (NOTIFYs may have been missed meanwhile). The connection is opened on first
 * use (CLI commands never need it); while it is not listening, the version is undefined, so
 * nothing is cached.
 */
function listenForKeyChanges(url: string) {
  let version = 0
  const moved = () => {
    version++
  }
  const listener = listenTo(url, KEYS_CHANNEL, { notified: moved, listening: moved, lost: moved })
  return {
    version(): number | undefined {
      if (listener.isListening()) return version
      listener.start()
      return undefined
    },
    changedHere: moved,
    stop: () => listener.stop(),
  }
}

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
