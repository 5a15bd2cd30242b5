import { createRequire } from 'node:module'
import type { FastifyBaseLogger } from 'fastify'
import type { Redis } from 'ioredis'
import { MemoryWindowCounter } from './memory-counter.js'
import type { WindowCounter } from './rate-limiter.js'

/** One round trip: count the request, and give a new window's key its expiry. */
const INCREMENT_SCRIPT = `
local count = redis.call('INCR', KEYS[1])
if count == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return count
`

const CONNECT_TIMEOUT_MS = 500
/** After a failure, requests are counted locally for this long before Redis is asked again. */
export const PAUSE_AFTER_FAILURE_MS = 1000
/** While Redis is unreachable, one warning per this interval, not one per request. */
const WARNING_INTERVAL_MS = 10_000

/**
 * ioredis is loaded when a counter is made, not when the service starts: only services given
 * a REDIS_URL use it, and loading it costs every process about 10 MiB.
 */
function loadIoredis(): typeof import('ioredis') {
  return createRequire(import.meta.url)('ioredis') as typeof import('ioredis')
}

interface RateLimitRedis extends Redis {
  incrementWindow(key: string, ttlMs: number): Promise<number>
}

export interface RedisCounterOptions {
  /** Namespace of the counters' keys: `<prefix><api key id>:<window>`. */
  keyPrefix: string
  /** Longest wait for Redis on a request's path; past it the request is counted locally. */
  timeoutMs: number
  log: FastifyBaseLogger
}

/**
 * Counts in Redis, so that every instance given the same REDIS_URL shares one budget per key.
 * It never holds a request up for long: commands are not queued while disconnected and time
 * out after `timeoutMs`. When Redis fails, requests are counted in this process instead for a
 * second (each instance then enforces the budget on its own: fail open, but not unlimited),
 * and a warning is logged, at most every 10 seconds.
 */
export class RedisWindowCounter implements WindowCounter {
  private readonly redis: RateLimitRedis
  private readonly fallback = new MemoryWindowCounter()
  private lastWarningAt = -Infinity
  private localUntil = 0

  constructor(
    url: string,
    private readonly options: RedisCounterOptions,
  ) {
    this.redis = new (loadIoredis().Redis)(url, {
      connectTimeout: CONNECT_TIMEOUT_MS,
      commandTimeout: options.timeoutMs,
      enableOfflineQueue: false,
      // The ready check (INFO) only waits out a Redis still loading its data, and is one more
      // command that can time out: an INCR on a loading Redis fails and is counted here instead.
      enableReadyCheck: false,
      maxRetriesPerRequest: 0,
      retryStrategy: (attempts) => Math.min(attempts * 200, 2000),
    }) as RateLimitRedis
    this.redis.defineCommand('incrementWindow', { numberOfKeys: 1, lua: INCREMENT_SCRIPT })
    this.redis.on('error', (error: Error) => this.warn(error))
  }

  async increment(key: string, window: number, ttlMs: number): Promise<number> {
    if (Date.now() < this.localUntil) return this.fallback.increment(key, window)
    try {
      return await this.redis.incrementWindow(`${this.options.keyPrefix}${key}:${window}`, ttlMs)
    } catch (error) {
      // A Redis that hangs would otherwise cost every request the whole timeout.
      this.localUntil = Date.now() + PAUSE_AFTER_FAILURE_MS
      this.warn(error)
      return this.fallback.increment(key, window)
    }
  }

  /**
   * Waits for the first connection, at most the connect timeout, so that the first requests
   * after a start are counted in Redis too. A Redis that is down does not hold the start up.
   */
  ready(): Promise<void> {
    return new Promise((resolve) => {
      if (this.redis.status === 'ready') return resolve()
      const done = () => {
        clearTimeout(timer)
        this.redis.off('ready', done).off('error', done)
        resolve()
      }
      const timer = setTimeout(done, CONNECT_TIMEOUT_MS)
      this.redis.once('ready', done).once('error', done)
    })
  }

  async close(): Promise<void> {
    this.redis.disconnect()
    await this.fallback.close()
  }

  private warn(error: unknown): void {
    const now = Date.now()
    if (now - this.lastWarningAt < WARNING_INTERVAL_MS) return
    this.lastWarningAt = now
    this.options.log.warn(
      { err: error },
      'Redis is unavailable for rate limits: counting in this instance only',
    )
  }
}
