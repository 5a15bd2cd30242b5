import { DEFAULT_RETRY_SCHEDULE_SECONDS, parseRetrySchedule } from './webhooks/retry-schedule.js'

/** Settings of the service, read from the environment once at start-up and frozen. */
export interface Config {
  readonly databaseUrl: string
  /** DATABASE_URL is not set: databaseUrl is the default file. */
  readonly databaseUrlIsDefault: boolean
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

/**
 * Every environment variable the service reads, with its default and what it is for: the one
 * list `loadConfig` reads from (a name not listed here does not type-check there) and
 * `catalog --help` prints.
 */
export const SETTINGS = {
  DATABASE_URL: [DEFAULT_DATABASE_URL, 'sqlite:<path>, or postgres://… / postgresql://…'],
  HOST: ['127.0.0.1', 'address to listen on (0.0.0.0: every interface)'],
  PORT: ['3000', 'port to listen on (0: any free port)'],
  LOG_LEVEL: ['info', 'fatal, error, warn, info, debug, trace or silent'],
  BODY_LIMIT_BYTES: ['262144', 'largest JSON request body (256 KiB)'],
  REQUEST_TIMEOUT_MS: ['30000', 'time a client has to send its whole request'],
  HEADERS_TIMEOUT_MS: ['10000', 'time a client has to send its headers (at most the above)'],
  CONNECTION_TIMEOUT_MS: ['60000', 'longest silence on an open request'],
  KEEP_ALIVE_TIMEOUT_MS: ['72000', 'how long an idle keep-alive connection stays open'],
  HEADER_LIMIT_BYTES: ['16384', 'largest request line plus headers'],
  SHUTDOWN_TIMEOUT_MS: ['10000', 'after SIGTERM, how long requests in flight may finish'],
  API_KEY_CACHE_TTL_MS: ['10000', 'longest reuse of a key lookup (0: no cache)'],
  RATE_LIMIT_PER_MINUTE: ['6000', 'requests per minute per API key (0: no limit)'],
  REDIS_URL: ['', 'Redis that shares rate-limit budgets between instances'],
  IDEMPOTENCY_KEY_TTL_SECONDS: ['86400', 'how long an Idempotency-Key answer is replayed'],
  METRICS_TOKEN: ['', 'Bearer token GET /metrics requires (unset: open)'],
  EVENT_RETENTION_DAYS: ['30', 'days events stay in the feed (decimals allowed)'],
  WEBHOOK_ALLOW_PRIVATE: ['0', '1: webhook URLs may be http:// and loopback or private'],
  WEBHOOK_TIMEOUT_MS: ['10000', 'time one delivery attempt may take'],
  WEBHOOK_RETRY_SCHEDULE: [
    DEFAULT_RETRY_SCHEDULE_SECONDS.join(','),
    'seconds before each retry of a failed delivery',
  ],
  IMPORT_MAX_BYTES: ['67108864', 'largest CSV file POST /imports takes (64 MiB)'],
} as const satisfies Record<string, readonly [string, string]>

export type SettingName = keyof typeof SETTINGS

/** The settings as `catalog --help` lists them: name, default, what it is for. */
export function settingsHelp(): string {
  const width = Math.max(...Object.keys(SETTINGS).map((name) => name.length))
  return Object.entries(SETTINGS)
    .map(([name, [fallback, help]]) => {
      const shown = fallback === '' ? '' : ` (default ${fallback})`
      return `  ${name.padEnd(width)}  ${help}${shown}`
    })
    .join('\n')
}

type Env = Partial<Record<SettingName, string>>

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const

/** A setting that cannot be used; `catalog` reports it as a usage error. */
export class ConfigError extends Error {}

export function loadConfig(env: Env = process.env): Config {
  const logLevel = env.LOG_LEVEL || SETTINGS.LOG_LEVEL[0]
  if (!(LOG_LEVELS as readonly string[]).includes(logLevel)) {
    throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}`)
  }
  const requestTimeoutMs = integerSetting(env, 'REQUEST_TIMEOUT_MS', 100, 600_000)
  return Object.freeze({
    databaseUrl: env.DATABASE_URL || SETTINGS.DATABASE_URL[0],
    databaseUrlIsDefault: !env.DATABASE_URL,
    host: env.HOST || SETTINGS.HOST[0],
    port: integerSetting(env, 'PORT', 0, 65535),
    logLevel,
    bodyLimit: integerSetting(env, 'BODY_LIMIT_BYTES', 1024, 64 * 1024 * 1024),
    requestTimeoutMs,
    headersTimeoutMs: integerSetting(
      env,
      'HEADERS_TIMEOUT_MS',
      100,
      requestTimeoutMs,
      Math.min(Number(SETTINGS.HEADERS_TIMEOUT_MS[0]), requestTimeoutMs),
    ),
    connectionTimeoutMs: integerSetting(env, 'CONNECTION_TIMEOUT_MS', 100, 3_600_000),
    keepAliveTimeoutMs: integerSetting(env, 'KEEP_ALIVE_TIMEOUT_MS', 100, 3_600_000),
    headerLimit: integerSetting(env, 'HEADER_LIMIT_BYTES', 1024, 1024 * 1024),
    shutdownTimeoutMs: integerSetting(env, 'SHUTDOWN_TIMEOUT_MS', 0, 600_000),
    keyCacheTtlMs: integerSetting(env, 'API_KEY_CACHE_TTL_MS', 0, 3_600_000),
    rateLimitPerMinute: integerSetting(env, 'RATE_LIMIT_PER_MINUTE', 0, 100_000_000),
    redisUrl: env.REDIS_URL || undefined,
    idempotencyKeyTtlSeconds: integerSetting(
      env,
      'IDEMPOTENCY_KEY_TTL_SECONDS',
      60,
      30 * 24 * 60 * 60,
    ),
    metricsToken: env.METRICS_TOKEN || undefined,
    eventRetentionDays: daysSetting(env, 'EVENT_RETENTION_DAYS', 36_500),
    webhookAllowPrivate: booleanSetting(env, 'WEBHOOK_ALLOW_PRIVATE'),
    webhookTimeoutMs: integerSetting(env, 'WEBHOOK_TIMEOUT_MS', 100, 600_000),
    webhookRetrySchedule: retryScheduleSetting(env),
    importMaxBytes: integerSetting(env, 'IMPORT_MAX_BYTES', 1, 4 * 1024 * 1024 * 1024),
  })
}

/** `1` or `true` is on; unset, empty, `0` or `false` is off; anything else is refused. */
function booleanSetting(env: Env, name: SettingName): boolean {
  const raw = (env[name] ?? '').toLowerCase()
  if (raw === '1' || raw === 'true') return true
  if (raw === '' || raw === '0' || raw === 'false') return false
  throw new ConfigError(`${name} must be 1 or 0, not "${env[name]}"`)
}

function retryScheduleSetting(env: Env): readonly number[] {
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
function daysSetting(env: Env, name: SettingName, max: number): number {
  const raw = env[name]
  if (raw === undefined || raw === '') return Number(SETTINGS[name][0])
  const value = Number(raw)
  if (!/^\d+(\.\d+)?$/.test(raw) || value > max) {
    throw new ConfigError(
      `${name} must be a number of days from 0 to ${max} (e.g. 30 or 0.5), not "${raw}"`,
    )
  }
  return value
}

function integerSetting(
  env: Env,
  name: SettingName,
  min: number,
  max: number,
  fallback = Number(SETTINGS[name][0]),
): number {
  const raw = env[name]
  if (raw === undefined || raw === '') return fallback
  const value = Number(raw)
  if (!/^\d+$/.test(raw) || value < min || value > max) {
    throw new ConfigError(`${name} must be a whole number from ${min} to ${max}, not "${raw}"`)
  }
  return value
}
