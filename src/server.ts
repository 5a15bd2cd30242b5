import type { FastifyInstance } from 'fastify'
import { buildApp } from './app.js'
import { ensureFirstApiKey, type CreatedApiKey } from './auth/api-key.service.js'
import type { Config } from './config.js'
import { createDatabase, type Database } from './db/database.js'
import { migrateToLatest } from './db/migrate.js'
import { startEventPruning } from './events/pruning.js'
import { startIdempotencyPruning } from './idempotency/pruning.js'
import { createImportJobs } from './import/import-jobs.js'
import { Registry } from 'prom-client'
import { startDispatcher } from './webhooks/dispatcher.js'
import { createThreadSender } from './webhooks/sender-thread.js'

export interface RunningServer {
  app: FastifyInstance
  database: Database
  /** The address the server listens on, e.g. http://127.0.0.1:3000 */
  url: string
  /** The key made on first run, when the database had none. */
  firstKey: CreatedApiKey | undefined
  /** Stops accepting connections, finishes requests in flight, closes the database. */
  close(): Promise<void>
}

/** Expired idempotency records are deleted this often, at most this many per write. */
const IDEMPOTENCY_PRUNING_INTERVAL_MS = 60_000
const IDEMPOTENCY_PRUNING_BATCH = 1000

/**
 * Events past their retention are deleted this often (or once per retention, at least a
 * second apart, when EVENT_RETENTION_DAYS is shorter than that), at most this many per write.
 */
const EVENT_PRUNING_INTERVAL_MS = 60_000
const EVENT_PRUNING_BATCH = 1000

/**
 * Logs the durability settings in force; one warning line when the database may lose a commit
 * already answered 200 (PostgreSQL with fsync or synchronous_commit off: its operator's choice,
 * so the service serves anyway; SQLite refuses to open in that state).
 */
async function reportDurability(app: FastifyInstance, database: Database): Promise<void> {
  const { settings, unsafe } = await database.durability()
  if (unsafe.length === 0) {
    app.log.info({ durability: settings }, 'database durability settings')
  } else {
    app.log.warn(
      { durability: settings },
      `${unsafe.join(' and ')} off: a crash of the database may lose writes already answered 200`,
    )
  }
}

/** Process start-up: config, database and migrations, app, listen. */
export async function startServer(config: Config): Promise<RunningServer> {
  const logger = {
    level: config.logLevel,
    redact: ['req.headers.authorization'],
  }
  let app: FastifyInstance | undefined
  const database = createDatabase(config.databaseUrl, {
    onIdleError: (error) => app?.log.warn({ err: error }, 'idle database connection failed'),
  })
  try {
    await migrateToLatest(database)
    const dispatcherMetrics = new Registry()
    const importJobs = createImportJobs(database, {
      maxBytes: config.importMaxBytes,
      onError: (error) => app?.log.error({ err: error }, 'import failed'),
    })
    // Imports a stopped process left running are marked failed, with the reason.
    await importJobs.start()
    app = buildApp({
      importJobs,
      database,
      logger,
      bodyLimit: config.bodyLimit,
      requestTimeoutMs: config.requestTimeoutMs,
      headersTimeoutMs: config.headersTimeoutMs,
      connectionTimeoutMs: config.connectionTimeoutMs,
      keepAliveTimeoutMs: config.keepAliveTimeoutMs,
      headerLimit: config.headerLimit,
      keyCacheTtlMs: config.keyCacheTtlMs,
      metricsToken: config.metricsToken,
      idempotencyKeyTtlSeconds: config.idempotencyKeyTtlSeconds,
      rateLimit: { perMinute: config.rateLimitPerMinute, redisUrl: config.redisUrl },
      webhooks: { allowPrivate: config.webhookAllowPrivate },
      extraMetrics: [dispatcherMetrics],
    })
    await reportDurability(app, database)
    const url = await app.listen({ host: config.host, port: config.port })
    // Made once the server listens: a key made by a start that then fails (a port in use)
    // would never be shown, and the next start would find a key and show none.
    const firstKey = await ensureFirstApiKey(database)
    const running = app
    const pruning = startIdempotencyPruning(database, {
      intervalMs: IDEMPOTENCY_PRUNING_INTERVAL_MS,
      batchSize: IDEMPOTENCY_PRUNING_BATCH,
      onError: (error) => running.log.warn({ err: error }, 'pruning idempotency keys failed'),
    })
    const eventPruning = startEventPruning(database, {
      retentionDays: config.eventRetentionDays,
      intervalMs: Math.min(
        EVENT_PRUNING_INTERVAL_MS,
        Math.max(1000, config.eventRetentionDays * 24 * 60 * 60 * 1000),
      ),
      batchSize: EVENT_PRUNING_BATCH,
      onError: (error) => running.log.warn({ err: error }, 'pruning events failed'),
    })
    // Deliveries run beside the HTTP server, never in a request: a slow receiver holds none.
    // Their attempts run on a thread of their own (sender-thread.ts).
    const sender = createThreadSender({
      timeoutMs: config.webhookTimeoutMs,
      allowPrivate: config.webhookAllowPrivate,
    })
    const dispatcher = startDispatcher({
      database,
      sender,
      timeoutMs: config.webhookTimeoutMs,
      schedule: config.webhookRetrySchedule,
      log: running.log,
      registry: dispatcherMetrics,
    })
    return {
      app: running,
      database,
      url,
      firstKey,
      close: async () => {
        // Node closes the connections that are idle when closing starts; a keep-alive
        // connection whose request was in flight turns idle later, and would hold the
        // close open until its client left. Sweep those as they finish.
        const sweep = setInterval(() => running.server.closeIdleConnections(), 50)
        try {
          await running.close()
        } finally {
          clearInterval(sweep)
        }
        await pruning.stop()
        await eventPruning.stop()
        // An import still running is stopped and marked failed: running it again is safe.
        await importJobs.stop()
        // Attempts in flight finish (within the timeout) and are recorded; any cut short is
        // due again when its lease ends.
        await dispatcher.stop()
        sender.close()
        await database.close()
      },
    }
  } catch (error) {
    await app?.close()
    await database.close()
    throw error
  }
}
