import type { BenchConfig } from './config.js'
import type { LoadGenerator, LoadResult } from './load-job.js'
import { readMemory, resetPeakRss, watchServer } from './proc.js'
import type { RequestSpec } from './requests.js'
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
  warmup: { responses: number; non2xx: number; errors: number }
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
    warmup: { responses: warmup.responses, non2xx: warmup.non2xx, errors: warmup.errors },
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
    statusCounts: result.statusCounts,
    clientCpuPercent: result.clientCpuPercent,
  }
}
