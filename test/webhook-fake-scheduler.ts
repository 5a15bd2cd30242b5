import type { Cancel, Scheduler } from '../src/webhooks/scheduler.js'

/**
 * A Scheduler whose clock stands still until the test moves it on: the dispatcher's polls,
 * retry times, leases, stop grace and waits run on it, so a test says when time passes
 * instead of sleeping through it. Its clock starts an hour ahead of the wall clock: what the
 * API writes at its own (real) time, a delivery enqueued or retried by hand, is due at once,
 * and nothing comes due by itself while the test runs, however slowly.
 */
export interface FakeScheduler extends Scheduler {
  /**
   * Runs what was asked to run soon (the dispatcher's wake-ups: a pass), and what those runs
   * ask for in turn, awaiting each; the clock does not move.
   */
  flush(): Promise<void>
  /** Moves the clock on by `ms`, running each timer when its time comes, then flushes. */
  advance(ms: number): Promise<void>
  /** How many runs are waiting for a flush. */
  queued(): number
  /** Moves the clock from timer to timer (flushing too) until `work` settles. */
  settle<T>(work: Promise<T>): Promise<T>
}

interface Timer {
  at: number
  every: number | undefined
  run: () => unknown
  order: number
}

/** A turn of the real event loop, for I/O callbacks to run. */
const turn = () => new Promise<void>((resolve) => setImmediate(resolve))

export function fakeScheduler(start = Date.now() + 60 * 60 * 1000): FakeScheduler {
  let now = start
  let order = 0
  const timers = new Set<Timer>()
  const soon = new Set<() => unknown>()

  const add = (ms: number, run: () => unknown, every: number | undefined): Cancel => {
    const timer: Timer = { at: now + ms, every, run, order: order++ }
    timers.add(timer)
    return () => timers.delete(timer)
  }
  const next = (until: number) =>
    [...timers]
      .filter((timer) => timer.at <= until)
      .sort((a, b) => a.at - b.at || a.order - b.order)[0]

  const flush = async () => {
    await turn()
    while (soon.size > 0) {
      const runs = [...soon]
      soon.clear()
      await Promise.all(runs.map((run) => run()))
      await turn()
    }
  }

  const advance = async (ms: number) => {
    const target = now + ms
    await flush()
    for (let timer = next(target); timer; timer = next(target)) {
      now = Math.max(now, timer.at)
      if (timer.every === undefined) timers.delete(timer)
      else timer.at += timer.every
      await timer.run()
      await flush()
    }
    now = target
    await flush()
  }

  return {
    now: () => new Date(now),
    elapsedMs: () => now - start,
    after: (ms, run) => add(ms, run, undefined),
    every: (ms, run) => add(ms, run, ms),
    soon(_ms, run) {
      const entry = () => run()
      soon.add(entry)
      return () => soon.delete(entry)
    },
    flush,
    advance,
    queued: () => soon.size,
    async settle<T>(work: Promise<T>) {
      let settled: { value: T } | { error: unknown } | undefined
      work.then(
        (value) => (settled = { value }),
        (error: unknown) => (settled = { error }),
      )
      // Let the work start what it waits for.
      await flush()
      while (settled === undefined) {
        const timer = next(Infinity)
        if (timer) await advance(timer.at - now)
        // Waiting for I/O, not for a timer.
        else await new Promise((resolve) => setTimeout(resolve, 5))
      }
      if ('error' in settled) throw settled.error
      return settled.value
    },
  }
}
