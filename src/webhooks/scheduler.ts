/** Cancels what a Scheduler was asked to run; cancelling twice, or after it ran, is harmless. */
export type Cancel = () => void

/**
 * The time and the timers of a background component, passed in rather than read from the
 * globals, so that a test drives them (a fake clock that it moves on) instead of sleeping.
 * A run may answer a promise: the real scheduler ignores it; a test's awaits it, so that it
 * knows when the work it set off is done.
 */
export interface Scheduler {
  /** The wall clock: when deliveries are due, leases end, attempts were made. */
  now(): Date
  /** A monotonic clock in milliseconds (performance.now()): how long something has waited. */
  elapsedMs(): number
  /** Runs `run` once, `ms` from now. */
  after(ms: number, run: () => unknown): Cancel
  /** Runs `run` every `ms` until cancelled, without keeping the process alive for it. */
  every(ms: number, run: () => unknown): Cancel
  /**
   * Runs `run` once, soon: within `ms`, after the callbacks under way, so that a burst of
   * calls (wake-ups) is served by one run. It waits for no time of the clock's: a test's
   * scheduler runs it when the test says, whatever the time.
   */
  soon(ms: number, run: () => unknown): Cancel
}

/** The process's own clock and timers. */
export const systemScheduler: Scheduler = Object.freeze({
  now: () => new Date(),
  elapsedMs: () => performance.now(),
  after(ms: number, run: () => unknown): Cancel {
    const timer = setTimeout(run, ms)
    return () => clearTimeout(timer)
  },
  every(ms: number, run: () => unknown): Cancel {
    const timer = setInterval(run, ms)
    timer.unref()
    return () => clearInterval(timer)
  },
  soon(ms: number, run: () => unknown): Cancel {
    const timer = setTimeout(run, ms)
    return () => clearTimeout(timer)
  },
})
