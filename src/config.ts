import { DEFAULT_RETRY_SCHEDULE_SECONDS, parseRetrySchedule } from './webhooks/retry-schedule.js'

/** Settings of the service, read from the environment once at start-up and frozen. */
export interface Config {
  readonly databaseUrl: string
  readonly host: string
  readonly port: number
  readonly logLevel: string
  /** Largest request body accepted, in bytes. */
  readonly bodyLimit: number
  /** Whole-request budget in milliseconds: a client that has not sent its request by then is cut off. */
  readonly requestTimeoutMs: number
  /** Budget for the request line and headers; at most requestTimeoutMs. */
  readonly headersTimeoutMs: number
  /** Longest silence on a connection while a request is open, either way, before it is closed. */
  readonly connectionTimeoutMs: number
  /** How long an idle keep-alive connection stays open between requests. */
  readonly keepAliveTimeoutMs: number
  /** Largest request line plus headers, in bytes. */
  readonly headerLimit: number
  /** How long `serve` waits for requests in flight after SIGTERM before it closes anyway. */
  readonly shutdownTimeoutMs: number
  /** Longest reuse of a key lookup when no change of keys has been seen; 0 turns caching off. */
  readonly keyCacheTtlMs: number
  /** Requests per minute allowed to one API key; 0 turns rate limiting off. */
  readonly rateLimitPerMinute: number
  /** Redis server that holds rate-limit budgets shared by several instances; none: in memory. */
  readonly redisUrl: string | undefined
  /** How long a completed request's answer is kept for replay under its Idempotency-Key. */
  readonly idempotencyKeyTtlSeconds: number
  /** Bearer token that GET /metrics requires; none: /metrics is open. */
  readonly metricsToken: string | undefined
  /**
   * How many days (decimals allowed) events are kept in the feed; older ones are pruned in the
   * background.
   */
  readonly eventRetentionDays: number
  /** WEBHOOK_ALLOW_PRIVATE=1: endpoints may use plain http:// and loopback or private addresses. */
  readonly webhookAllowPrivate: boolean
  /** How long one delivery attempt may take to get its answer's status. */
  readonly webhookTimeoutMs: number
  /** Seconds to wait before each retry of a failed delivery, in order; then it is failed. */
  readonly webhookRetrySchedule: readonly number[]
  /** Largest CSV file POST /imports accepts, in bytes. */
  readonly importMaxBytes: number
}

export const DEFAULT_DATABASE_URL = 'sqlite:data/catalog.db'

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const

/** A setting that cannot be used; `catalog` reports it as a usage error. */
export class ConfigError extends Error {}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const logLevel = env.LOG_LEVEL ?? 'info'
  if (!(LOG_LEVELS as readonly string[]).includes(logLevel)) {
    throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}`)
  }
  const requestTimeoutMs = integerSetting(env, 'REQUEST_TIMEOUT_MS', 30_000, 100, 600_000)
  return Object.freeze({
    databaseUrl: env.DATABASE_URL || DEFAULT_DATABASE_URL,
    host: env.HOST || '127.0.0.1',
    port: integerSetting(env, 'PORT', 3000, 0, 65535),
    logLevel,
    bodyLimit: integerSetting(env, 'BODY_LIMIT_BYTES', 256 * 1024, 1024, 64 * 1024 * 1024),
    requestTimeoutMs,
    headersTimeoutMs: integerSetting(
      env,
      'HEADERS_TIMEOUT_MS',
      Math.min(10_000, requestTimeoutMs),
      100,
      requestTimeoutMs,
    ),
    connectionTimeoutMs: integerSetting(env, 'CONNECTION_TIMEOUT_MS', 60_000, 100, 3_600_000),
    keepAliveTimeoutMs: integerSetting(env, 'KEEP_ALIVE_TIMEOUT_MS', 72_000, 100, 3_600_000),
    headerLimit: integerSetting(env, 'HEADER_LIMIT_BYTES', 16 * 1024, 1024, 1024 * 1024),
    shutdownTimeoutMs: integerSetting(env, 'SHUTDOWN_TIMEOUT_MS', 10_000, 0, 600_000),
    keyCacheTtlMs: integerSetting(env, 'API_KEY_CACHE_TTL_MS', 10_000, 0, 3_600_000),
    rateLimitPerMinute: integerSetting(env, 'RATE_LIMIT_PER_MINUTE', 6000, 0, 100_000_000),
    redisUrl: env.REDIS_URL || undefined,
    idempotencyKeyTtlSeconds: integerSetting(
      env,
      'IDEMPOTENCY_KEY_TTL_SECONDS',
      24 * 60 * 60,
      60,
      30 * 24 * 60 * 60,
    ),
    metricsToken: env.METRICS_TOKEN || undefined,
    eventRetentionDays: daysSetting(env, 'EVENT_RETENTION_DAYS', 30, 36_500),
    webhookAllowPrivate: booleanSetting(env, 'WEBHOOK_ALLOW_PRIVATE'),
    webhookTimeoutMs: integerSetting(env, 'WEBHOOK_TIMEOUT_MS', 10_000, 100, 600_000),
    webhookRetrySchedule: retryScheduleSetting(env),
    importMaxBytes: integerSetting(
      env,
      'IMPORT_MAX_BYTES',
      64 * 1024 * 1024,
      1,
      4 * 1024 * 1024 * 1024,
    ),
  })
}

/** `1` or `true` is on; unset, empty, `0` or `false` is off; anything else is refused. */
function booleanSetting(env: NodeJS.ProcessEnv, name: string): boolean {
  const raw = (env[name] ?? '').toLowerCase()
  if (raw === '1' || raw === 'true') return true
  if (raw === '' || raw === '0' || raw === 'false') return false
  throw new ConfigError(`${name} must be 1 or 0, not "${env[name]}"`)
}

function retryScheduleSetting(env: NodeJS.ProcessEnv): readonly number[] {
  const raw = env.WEBHOOK_RETRY_SCHEDULE
  if (raw === undefined || raw === '') return DEFAULT_RETRY_SCHEDULE_SECONDS
  const schedule = parseRetrySchedule(raw)
  if (schedule === undefined) {
    throw new ConfigError(
      `WEBHOOK_RETRY_SCHEDULE must be seconds separated by commas (e.g. 5,300,1800 or 0.5,2), not "${raw}"`,
    )
  }
  return schedule
}

/** A number of days, decimals allowed (`0.5` is 12 hours), from 0 to `max`. */
function daysSetting(env: NodeJS.ProcessEnv, name: string, fallback: number, max: number): number {
  const raw = env[name]
  if (raw === undefined || raw === '') return fallback
  const value = Number(raw)
  if (!/^\d+(\.\d+)?$/.test(raw) || value > max) {
    throw new ConfigError(
      `${name} must be a number of days from 0 to ${max} (e.g. 30 or 0.5), not "${raw}"`,
    )
  }
  return value
}

function integerSetting(
  env: NodeJS.ProcessEnv,
  name: string,
  fallback: number,
  min: number,
  max: number,
): number {
  const raw = env[name]
  if (raw === undefined || raw === '') return fallback
  const value = Number(raw)
  if (!/^\d+$/.test(raw) || value < min || value > max) {
    throw new ConfigError(`${name} must be a whole number from ${min} to ${max}, not "${raw}"`)
  }
  return value
}
