import type { FastifyBaseLogger, FastifyReply } from 'fastify'
import type { Principal } from '../auth/api-key.service.js'
import { AppError } from '../errors.js'
import { MemoryWindowCounter } from './memory-counter.js'
import { RateLimiter, WINDOW_MS } from './rate-limiter.js'
import { RedisWindowCounter } from './redis-counter.js'

export interface RateLimitOptions {
  /** Requests per minute allowed to one API key; 0 turns rate limiting off. */
  perMinute: number
  /** A Redis server that holds the budgets, shared by every instance given it; none: in memory. */
  redisUrl?: string | undefined
  /** Namespace of the Redis keys; `catalog:rate:` unless given. */
  redisKeyPrefix?: string
  /** Longest wait for Redis on a request's path before it is counted locally; 100 ms unless given. */
  redisTimeoutMs?: number
  /** The clock budgets are counted by; Date.now unless given. */
  now?: () => number
}

/** The one policy, as named in the RateLimit and RateLimit-Policy headers. */
const POLICY = '"default"'

/** A limiter for the options, or none when rate limiting is off. */
export function createRateLimiter(
  options: RateLimitOptions,
  log: FastifyBaseLogger,
): RateLimiter | undefined {
  if (options.perMinute === 0) return undefined
  const counter = options.redisUrl
    ? new RedisWindowCounter(options.redisUrl, {
        keyPrefix: options.redisKeyPrefix ?? 'catalog:rate:',
        timeoutMs: options.redisTimeoutMs ?? 100,
        log,
      })
    : new MemoryWindowCounter()
  return new RateLimiter(counter, options.perMinute, options.now)
}

/**
 * Counts a request against its key's budget and says where the key stands in the IETF
 * RateLimit headers (draft-ietf-httpapi-ratelimit-headers), which stay on the answer whatever
 * it turns out to be. Past the budget: 429 rate_limited with Retry-After.
 */
export async function enforceRateLimit(
  limiter: RateLimiter,
  principal: Principal,
  reply: FastifyReply,
): Promise<void> {
  const state = await limiter.consume(principal.keyId)
  reply.header('ratelimit-policy', `${POLICY};q=${state.limit};w=${WINDOW_MS / 1000}`)
  reply.header('ratelimit', `${POLICY};r=${state.remaining};t=${state.resetSeconds}`)
  if (!state.allowed) {
    reply.header('retry-after', String(state.resetSeconds))
    throw new AppError(
      'rate_limited',
      `This API key has used its ${state.limit} requests for this minute; retry in ${state.resetSeconds} s.`,
    )
  }
}
