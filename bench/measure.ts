import type { BenchConfig } from './config.js'
import type { LoadGenerator, LoadResult } from './load-job.js'
import { readMemory, resetPeakRss, watchServer } from './proc.js'
import type { RequestSpec } from './requests.js'
import { addCounts } from './stats.js'
import type { RunningServer } from './targets.js'

/** One measured window against one server. */
export interface WindowFigures {
  reqPerS: number
  p50Ms: number
  p99Ms: number
  meanMs: number
  responses: number
  non2xx: number
  errors: number
  errorCounts: Record<string, number>
  statusCounts: Record<string, number>
  /** VmHWM after the window; it covers this window and its warm-up when peakRssSince is 'warm-up'. */
  peakRssMiB: number
  peakRssSince: 'warm-up' | 'process start'
  /** Highest VmRSS of the samples taken during the measured window. */
  sampledMaxRssMiB: number
  /** CPU used in the window, 100 being one core fully busy. */
  serverCpuPercent: number
  clientCpuPercent: number
  /** CPU the machine spent on work not of this benchmark (see watchServer): should be near 0. */
  foreignCpuPercent: number
  warmup: { responses: number; non2xx: number; errors: number; errorCounts: Record<string, number> }
}

/** Windows of a comparison, taken in turn on each server: see measureInTurn. */
export const ROUNDS = 3

/** What one server is measured on in a comparison. */
export interface Arm {
  server: RunningServer
  specs: RequestSpec[]
}

/**
 * The windows of a comparison, taken in turn: each arm, then each again, `rounds` times
 * (ROUNDS unless told), each window a ROUNDS-th of the run's duration (rounded up). This
 * machine's speed drifts by tens of percent over minutes, so two servers measured a minute
 * apart can differ by that alone; in turn, a drift falls on every arm alike. The first
 * window of each arm follows the full warm-up, later ones a second of it. Before each warm-up
 * `settle` flushes what the previous arm left to write (a synchronous=NORMAL baseline leaves
 * the kernel much), so that no arm's fsyncs wait behind another's. Figures are merged per arm
 * (mergeWindows).
 */
export async function measureInTurn(
  arms: Arm[],
  load: LoadGenerator,
  config: BenchConfig,
  settle: () => Promise<void>,
  rounds = ROUNDS,
): Promise<WindowFigures[]> {
  const windows: WindowFigures[][] = arms.map(() => [])
  const durationS = Math.ceil(config.durationS / ROUNDS)
  for (let round = 0; round < rounds; round++) {
    for (const [i, arm] of arms.entries()) {
      const warmupS = round === 0 ? config.warmupS : 1
      await settle()
      windows[i]!.push(
        await measureWindow(arm.server, load, { ...config, warmupS, durationS }, arm.specs),
      )
    }
  }
  return windows.map(mergeWindows)
}

/** One arm's windows as one: rates and latencies averaged, counts added, peaks the highest. */
export function mergeWindows(windows: WindowFigures[]): WindowFigures {
  const [first] = windows
  if (!first) throw new Error('no window to merge')
  const mean = (figure: (w: WindowFigures) => number) =>
    windows.reduce((sum, w) => sum + figure(w), 0) / windows.length
  const sum = (figure: (w: WindowFigures) => number) =>
    windows.reduce((total, w) => total + figure(w), 0)
  const max = (figure: (w: WindowFigures) => number) => Math.max(...windows.map(figure))
  return {
    reqPerS: mean((w) => w.reqPerS),
    p50Ms: mean((w) => w.p50Ms),
    p99Ms: mean((w) => w.p99Ms),
    meanMs: mean((w) => w.meanMs),
    responses: sum((w) => w.responses),
    non2xx: sum((w) => w.non2xx),
    errors: sum((w) => w.errors),
    errorCounts: addCounts(windows.map((w) => w.errorCounts)),
    statusCounts: addCounts(windows.map((w) => w.statusCounts)),
    peakRssMiB: max((w) => w.peakRssMiB),
    peakRssSince: first.peakRssSince,
    sampledMaxRssMiB: max((w) => w.sampledMaxRssMiB),
    serverCpuPercent: mean((w) => w.serverCpuPercent),
    clientCpuPercent: mean((w) => w.clientCpuPercent),
    foreignCpuPercent: mean((w) => w.foreignCpuPercent),
    warmup: {
      responses: sum((w) => w.warmup.responses),
      non2xx: sum((w) => w.warmup.non2xx),
      errors: sum((w) => w.warmup.errors),
      errorCounts: addCounts(windows.map((w) => w.warmup.errorCounts)),
    },
  }
}

/** A warm-up whose figures are dropped, then the measured window, at the run's connections. */
export async function measureWindow(
  server: RunningServer,
  load: LoadGenerator,
  config: BenchConfig,
  specs: RequestSpec[],
): Promise<WindowFigures> {
  const target = { url: server.url, key: server.key }
  const peakRssSince = resetPeakRss(server.pid) ? 'warm-up' : 'process start'
  const warmup = await load.load({
    targets: [target],
    specs,
    connections: config.connections,
    until: { seconds: config.warmupS },
  })
  const stopWatching = watchServer(server.pid, load.pid)
  const measured = await load.load({
    targets: [target],
    specs,
    connections: config.connections,
    until: { seconds: config.durationS },
  })
  const usage = stopWatching()
  return {
    ...figuresOf(measured),
    peakRssMiB: readMemory(server.pid).peakMiB,
    peakRssSince,
    sampledMaxRssMiB: usage.sampledMaxRssMiB,
    serverCpuPercent: usage.serverCpuPercent,
    foreignCpuPercent: usage.foreignCpuPercent,
    warmup: {
      responses: warmup.responses,
      non2xx: warmup.non2xx,
      errors: warmup.errors,
      errorCounts: warmup.errorCounts,
    },
  }
}

function figuresOf(result: LoadResult) {
  return {
    reqPerS: result.reqPerS,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    meanMs: result.latency.mean,
    responses: result.responses,
    non2xx: result.non2xx,
    errors: result.errors,
    errorCounts: result.errorCounts,
    statusCounts: result.statusCounts,
    clientCpuPercent: result.clientCpuPercent,
  }
}
