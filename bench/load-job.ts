import { fileURLToPath } from 'node:url'
import type { Cleanup } from './cleanup.js'
import { ipcCaller } from './ipc.js'
import { forkChild } from './processes.js'
import type { RequestSpec } from './requests.js'
import type { LatencySummary } from './stats.js'

/** The server a job sends its requests to. */
export interface JobTarget {
  /** http://127.0.0.1:<port> */
  url: string
  /** Sent as `Authorization: Bearer <key>` to every server, baselines included. */
  key: string
}

/** Closed-loop load: each connection sends its next request when the last one is answered. */
export interface LoadJob {
  /** The connections are shared out evenly between these (several instances of one service). */
  targets: JobTarget[]
  /** Each connection cycles through these, one request of each in turn. */
  specs: RequestSpec[]
  /** In all, over every target. */
  connections: number
  /** Either a time or a number of requests. */
  until: { seconds: number } | { requests: number }
  /** Requests per second at most, over every target (autocannon's overallRate); none by default. */
  ratePerS?: number
}

export interface LoadResult {
  /** Responses received, whatever their status. */
  responses: number
  elapsedS: number
  reqPerS: number
  latency: LatencySummary
  statusCounts: Record<string, number>
  non2xx: number
  /** Connection errors and timeouts. */
  errors: number
  /** The errors by kind: a socket error's code (ECONNRESET), or 'request timed out'. */
  errorCounts: Record<string, number>
  /** CPU used by the load generator itself; near 100 means the client may be the limit. */
  clientCpuPercent: number
}

/** Requests one at a time, arms alternating in blocks so that drift hits every arm alike. */
export interface SequenceJob {
  target: JobTarget
  /** An arm with a `target` of its own sends its requests there rather than to the job's. */
  arms: { label: string; spec: RequestSpec; target?: JobTarget }[]
  perArm: number
  block: number
}

export interface SequenceArmResult {
  label: string
  latency: LatencySummary
  statusCounts: Record<string, number>
  non2xx: number
}

/** What the parent sends the load generator: a job of either kind. */
export type Job = { kind: 'load'; job: LoadJob } | { kind: 'sequence'; job: SequenceJob }

/** The load generator: one child process (load.ts) that runs the jobs it is sent, one at a time. */
export interface LoadGenerator {
  readonly pid: number
  load(job: LoadJob): Promise<LoadResult>
  sequence(job: SequenceJob): Promise<SequenceArmResult[]>
  stop(): Promise<void>
}

const LOAD_SCRIPT = fileURLToPath(new URL('./load.ts', import.meta.url))

export function startLoadGenerator(cleanup: Cleanup): LoadGenerator {
  const child = forkChild(cleanup, 'load generator', LOAD_SCRIPT, ['--import', 'tsx'])
  const call = ipcCaller(child)
  return {
    pid: child.pid,
    load: (job) => call<LoadResult>({ kind: 'load', job } satisfies Job),
    sequence: (job) => call<SequenceArmResult[]>({ kind: 'sequence', job } satisfies Job),
    stop: child.stop,
  }
}
