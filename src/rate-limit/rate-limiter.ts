/** Every budget is counted per fixed window of one minute, aligned to the clock. */
export const WINDOW_MS = 60_000

/** Counts the requests of each key in each window: in this process, or shared through Redis. */
export interface WindowCounter {
  /**
   * Counts one more request of `key` in window number `window` and returns the window's count
   * so far, this one included. `ttlMs` is how long the window has left to run.
   */
  increment(key: string, window: number, ttlMs: number): Promise<number>
  /** Resolves when the counter can count where it should (Redis: connected, or given up on). */
  ready(): Promise<void>
  close(): Promise<void>
}

/** Where one key stands after one request, as the RateLimit headers tell it. */
export interface RateLimitState {
  allowed: boolean
  limit: number
  remaining: number
  /** Whole seconds until the window ends and the budget is full again; at least 1. */
  resetSeconds: number
}

/** A budget of `perMinute` requests per key and fixed one-minute window. */
export class RateLimiter {
  constructor(
    private readonly counter: WindowCounter,
    readonly perMinute: number,
    private readonly now: () => number = Date.now,
  ) {}

  async consume(key: string): Promise<RateLimitState> {
    const now = this.now()
    const window = Math.floor(now / WINDOW_MS)
    const msLeft = (window + 1) * WINDOW_MS - now
    const count = await this.counter.increment(key, window, msLeft)
    return {
      allowed: count <= this.perMinute,
      limit: this.perMinute,
      remaining: Math.max(0, this.perMinute - count),
      resetSeconds: Math.max(1, Math.ceil(msLeft / 1000)),
    }
  }

  ready(): Promise<void> {
    return this.counter.ready()
  }

  close(): Promise<void> {
    return this.counter.close()
  }
}
