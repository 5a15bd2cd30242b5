import type { WindowCounter } from './rate-limiter.js'

/**
 * Counts in this process. Only the current window is kept: when the clock enters a new one,
 * every count of the old one is dropped, so memory holds at most one entry per key that made
 * a request this minute (and only authenticated keys are counted).
 */
export class MemoryWindowCounter implements WindowCounter {
  private window = -Infinity
  private counts = new Map<string, number>()

  /** How many keys are counted in the current window. */
  get size(): number {
    return this.counts.size
  }

  async increment(key: string, window: number): Promise<number> {
    // A clock that steps back a little keeps counting in the newer window rather than reset it.
    if (window > this.window) {
      this.window = window
      this.counts = new Map()
    }
    const count = (this.counts.get(key) ?? 0) + 1
    this.counts.set(key, count)
    return count
  }

  async ready(): Promise<void> {}

  async close(): Promise<void> {
    this.counts.clear()
  }
}
