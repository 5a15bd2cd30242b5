import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { Database, PoolFigures } from '../db/database.js'

/** The figures of one app: its requests and its database, plus those of the process. */
export interface AppMetrics {
  /**
   * Counts a finished request and its latency; `route` is its routeLabel. `aborted` when its
   * connection closed before the answer was sent (the time is then until the close).
   */
  recordResponse(
    request: FastifyRequest,
    reply: FastifyReply,
    route: string,
    outcome?: typeof ABORTED,
  ): void
  /** Everything, in the Prometheus text format. */
  render(): Promise<string>
  readonly contentType: string
  /** Stops listening to the database. */
  close(): void
}

type RequestLabel = 'method' | 'route' | 'status_code'

/** The status_code label of a request whose client went away before its answer. */
export const ABORTED = 'aborted'

/** Seconds; the service answers most requests in a few milliseconds. */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

/** Writes per SQLite commit; a batch holds at most 256. */
const BATCH_SIZE_BUCKETS = [1, 2, 4, 8, 16, 32, 64, 128, 256]

/**
 * A registry per app, so that several apps in one process (tests) keep their own counts;
 * process figures come from one registry shared by all of them.
 */
export function createMetrics(database: Database, extra: Registry[] = []): AppMetrics {
  const registry = new Registry()
  const processFigures = processRegistry()
  const labelNames: RequestLabel[] = ['method', 'route', 'status_code']
  // The histogram's _count of each label set (below) is the number of requests: the counter
  // is set from it when scraped, rather than counted once more on every request. prom-client
  // checks and hashes the labels of every call, and a counted request cost about a µs more.
  new Counter({
    name: 'http_requests_total',
    help: 'HTTP requests, by route pattern, method and status; status aborted: the connection closed before the answer.',
    labelNames,
    registers: [registry],
    async collect() {
      const counts = (await latency.get()).values.filter(
        (value) => value.metricName === 'http_request_duration_seconds_count',
      )
      this.reset()
      for (const { labels, value } of counts) this.inc(labels, value)
    },
  })
  const latency = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'Time from the start of a request to its answer (or to its connection closing, status aborted), by route pattern, method and status.',
    labelNames,
    buckets: LATENCY_BUCKETS,
    registers: [registry],
  })
  const stopDatabaseMetrics = registerDatabaseMetrics(registry, database)

  return {
    recordResponse(request, reply, route, outcome) {
      const labels = { method: request.method, route, status_code: outcome ?? reply.statusCode }
      latency.observe(labels, reply.elapsedTime / 1000)
    },
    async render() {
      let text = await registry.metrics()
      for (const more of extra) text += await more.metrics()
      return text + (await processFigures.metrics())
    },
    contentType: registry.contentType,
    close: stopDatabaseMetrics,
  }
}

/** SQLite's group-commit batches, or PostgreSQL's pool, whichever the database offers. */
function registerDatabaseMetrics(registry: Registry, database: Database): () => void {
  const { onWriteBatch, poolFigures } = database
  if (poolFigures) {
    const gauge = (name: string, help: string, read: (figures: PoolFigures) => number) =>
      new Gauge({
        name,
        help,
        registers: [registry],
        collect() {
          this.set(read(poolFigures()))
        },
      })
    gauge(
      'catalog_db_pool_connections',
      'PostgreSQL connections open, busy or idle.',
      (f) => f.total,
    )
    gauge(
      'catalog_db_pool_idle_connections',
      'PostgreSQL connections open and idle.',
      (f) => f.idle,
    )
    gauge(
      'catalog_db_pool_waiting_queries',
      'Queries waiting for a PostgreSQL connection of the pool.',
      (f) => f.waiting,
    )
    gauge('catalog_db_pool_max_connections', 'Size of the PostgreSQL pool.', (f) => f.max)
  }
  const { writeRetries } = database
  if (writeRetries) {
    new Counter({
      name: 'catalog_db_write_retries_total',
      help: 'Writes run again because PostgreSQL aborted them, by reason (deadlock_detected, serialization_failure).',
      labelNames: ['reason'],
      registers: [registry],
      collect() {
        this.reset()
        for (const [reason, count] of Object.entries(writeRetries())) this.inc({ reason }, count)
      },
    })
  }
  if (onWriteBatch) {
    const batches = new Histogram({
      name: 'catalog_db_write_batch_size',
      help: 'Writes committed together by SQLite group commit; _count is the number of commits.',
      buckets: BATCH_SIZE_BUCKETS,
      registers: [registry],
    })
    return onWriteBatch((size) => batches.observe(size))
  }
  return () => {}
}

let sharedProcessRegistry: Registry | undefined

/** CPU, memory, event loop, GC: figures of the process, collected once however many apps run. */
function processRegistry(): Registry {
  if (sharedProcessRegistry === undefined) {
    sharedProcessRegistry = new Registry()
    collectDefaultMetrics({ register: sharedProcessRegistry })
  }
  return sharedProcessRegistry
}
