/** Measured windows: a warm-up, then load with the server's memory and CPU watched. */
import type { LoadGenerator, LoadJob, LoadResult } from './load.js'
import type { Spec } from './scenarios.js'
import { settle, type Context, type Dialect, type RunningServer } from './servers.js'
import { addCounts, readMemory, resetPeakRss, watchCpu, type BenchConfig } from './support.js'

/** What every section of a run works with. */
export interface Session {
  context: Context
  load: LoadGenerator
  config: BenchConfig
  found: Findings
  log(line: string): void
}

/** A figure of a section beyond the scenarios, with its goal if it has one. */
export interface Figure {
  section: string
  name: string
  dialect: Dialect
  value: number | null
  unit: string
  goal?: { op: '>=' | '<='; value: number }
}

/** A maker of one section's figures on one dialect; a value that is not a number is null. */
export const figureMaker =
  (section: string, dialect: Dialect) =>
  (name: string, value: number | null, unit: string, goal?: Figure['goal']): Figure => ({
    section,
    name,
    dialect,
    value: value !== null && Number.isFinite(value) ? value : null,
    unit,
    goal,
  })

/** Where a run records what went wrong, and what makes its figures suspect. */
export interface Findings {
  failures: string[]
  warnings: string[]
  /** Fails the run if `counts` saw a non-2xx answer or a connection error. */
  check(what: string, counts: { non2xx: number; errors: number; errorCounts?: object }): void
  /** Checks a window and its warm-up; warns if other work took over 15 % of a core. */
  watch(what: string, window: WindowFigures): void
}

export function findings(): Findings {
  const failures: string[] = []
  const warnings: string[] = []
  const check: Findings['check'] = (what, { non2xx, errors, errorCounts }) => {
    if (non2xx > 0 || errors > 0) {
      failures.push(`${what}: ${non2xx} non-2xx, ${errors} errors ${JSON.stringify(errorCounts)}`)
    }
  }
  return {
    failures,
    warnings,
    check,
    watch(what, window) {
      check(what, window)
      check(`${what}, warm-up`, window.warmup)
      if (window.foreignCpuPercent > 15) {
        const cpu = window.foreignCpuPercent.toFixed(0)
        warnings.push(`${what}: other processes used ${cpu} % of a core`)
      }
    },
  }
}

/**
 * Windows per arm of a comparison, taken in turn: see measureInTurn. BENCH_ROUNDS=1 is for a
 * smoke run (CI's), which looks for errors and lost writes, not at the figures.
 */
export const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS || 3))

export interface WindowFigures {
  reqPerS: number
  p50Ms: number
  p99Ms: number
  responses: number
  non2xx: number
  errors: number
  errorCounts: Record<string, number>
  /** VmHWM since the warm-up (reset by clear_refs), or since start where that is refused. */
  peakRssMiB: number
  /** CPU in the window, 100 being one core. */
  serverCpuPercent: number
  clientCpuPercent: number
  /** CPU the machine spent on work not of this benchmark: should be near 0 (watchCpu). */
  foreignCpuPercent: number
  /**
   * µs of CPU per response: the server's process, PostgreSQL's processes, and the rest of the
   * machine (the load generator, the kernel's network work, anything else that ran).
   */
  cpuUsPerRequest: { server: number; postgres: number; rest: number }
  warmup: { responses: number; non2xx: number; errors: number; errorCounts: Record<string, number> }
}

/**
 * What one server is measured on; `connections` 1 times requests one at a time. `also`: more
 * instances of the same service that share the connections (and whose CPU counts as its).
 */
export interface Arm {
  server: RunningServer
  also?: RunningServer[]
  specs: Spec[]
  connections?: number
  /** Requests per second at most (a steady rate, not closed-loop load). */
  ratePerS?: number
  /** Runs after each of the arm's windows (waiting for what it left to finish). */
  after?: () => Promise<void>
}

/**
 * The windows of a comparison, taken in turn: each arm, then each again, `rounds` times,
 * each window a ROUNDS-th of the run's duration. This machine's speed drifts by tens of
 * percent over minutes, so servers measured a minute apart differ by that alone; in turn, a
 * drift falls on every arm alike. The first window of each arm follows the full warm-up,
 * later ones 1 s. Before each, `settle` flushes what the previous arm left to write, so that
 * no arm's fsyncs wait behind another's. Returns each arm's windows merged.
 */
export async function measureInTurn(
  { load, config, context }: Session,
  arms: Arm[],
  rounds = ROUNDS,
): Promise<WindowFigures[]> {
  const windows: WindowFigures[][] = arms.map(() => [])
  const durationS = Math.ceil(config.durationS / ROUNDS)
  for (let round = 0; round < rounds; round++) {
    for (const [i, arm] of arms.entries()) {
      await settle(context)
      const warmupS = round === 0 ? config.warmupS : 1
      windows[i]!.push(await measureWindow(arm, load, config.connections, warmupS, durationS))
      await arm.after?.()
    }
  }
  return windows.map(mergeWindows)
}

export async function measureWindow(
  arm: Arm,
  load: LoadGenerator,
  connections: number,
  warmupS: number,
  durationS: number,
): Promise<WindowFigures> {
  const servers = [arm.server, ...(arm.also ?? [])]
  const job: Omit<LoadJob, 'until'> = {
    targets: servers.map(({ url, key }) => ({ url, key })),
    specs: arm.specs,
    connections: arm.connections ?? connections,
    ratePerS: arm.ratePerS,
  }
  resetPeakRss(arm.server.pid)
  const warmup = await load.load({ ...job, until: { seconds: warmupS } })
  const stopWatching = watchCpu(
    servers.map((server) => server.pid),
    load.pid,
  )
  const measured = await load.load({ ...job, until: { seconds: durationS } })
  const cpu = stopWatching()
  const percent = (seconds: number) => (100 * seconds) / cpu.elapsed
  const perRequest = (seconds: number) => (seconds * 1e6) / Math.max(1, measured.responses)
  // On SQLite, what PostgreSQL did is someone else's work: part of the rest.
  const postgres = arm.server.dialect === 'postgres' ? cpu.postgres : 0
  return {
    ...figuresOf(measured),
    peakRssMiB: readMemory(arm.server.pid).peakMiB,
    serverCpuPercent: percent(cpu.server),
    foreignCpuPercent: Math.max(0, percent(cpu.machine - cpu.ours - cpu.postgres)),
    cpuUsPerRequest: {
      server: perRequest(cpu.server),
      postgres: perRequest(postgres),
      rest: perRequest(cpu.machine - cpu.server - postgres),
    },
    warmup: counts(warmup),
  }
}

export function figuresOf(result: LoadResult) {
  return {
    reqPerS: result.reqPerS,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    clientCpuPercent: result.clientCpuPercent,
    ...counts(result),
  }
}

const counts = ({ responses, non2xx, errors, errorCounts }: LoadResult | WindowFigures) => ({
  responses,
  non2xx,
  errors,
  errorCounts,
})

/** One arm's windows as one: rates, latencies and CPU averaged, counts added, peaks the highest. */
export function mergeWindows(windows: WindowFigures[]): WindowFigures {
  const mean = (f: (w: WindowFigures) => number) =>
    windows.reduce((sum, w) => sum + f(w), 0) / windows.length
  const merged = (list: WindowFigures['warmup'][]) => ({
    responses: list.reduce((t, w) => t + w.responses, 0),
    non2xx: list.reduce((t, w) => t + w.non2xx, 0),
    errors: list.reduce((t, w) => t + w.errors, 0),
    errorCounts: addCounts(list.map((w) => w.errorCounts)),
  })
  return {
    reqPerS: mean((w) => w.reqPerS),
    p50Ms: mean((w) => w.p50Ms),
    p99Ms: mean((w) => w.p99Ms),
    ...merged(windows),
    peakRssMiB: Math.max(...windows.map((w) => w.peakRssMiB)),
    serverCpuPercent: mean((w) => w.serverCpuPercent),
    clientCpuPercent: mean((w) => w.clientCpuPercent),
    foreignCpuPercent: mean((w) => w.foreignCpuPercent),
    cpuUsPerRequest: {
      server: mean((w) => w.cpuUsPerRequest.server),
      postgres: mean((w) => w.cpuUsPerRequest.postgres),
      rest: mean((w) => w.cpuUsPerRequest.rest),
    },
    warmup: merged(windows.map((w) => w.warmup)),
  }
}
