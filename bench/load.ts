/**
 * The load generator: autocannon in a child process of its own (so that its CPU is not the
 * orchestrator's), which runs each job it is sent over IPC and answers with the figures.
 * `startLoadGenerator` is the parent's side; run with --load-generator, this file is the child.
 */
import { fileURLToPath } from 'node:url'
import autocannon from 'autocannon'
import { buildRequest, randomTag, type Spec } from './scenarios.js'
import { BENCH_HOST, spawnChild, summarize, type Cleanup, type LatencySummary } from './support.js'

/** Closed-loop load: each connection sends its next request when the last is answered. */
export interface LoadJob {
  /** The connections are shared out evenly between these (instances of one service). */
  targets: { url: string; key: string }[]
  /** Each connection cycles through these, one request of each in turn. */
  specs: Spec[]
  connections: number
  until: { seconds: number } | { requests: number }
  /** Requests per second at most, over every target (autocannon's overallRate). */
  ratePerS?: number
}

export interface LoadResult {
  /** Responses received, whatever their status. */
  responses: number
  reqPerS: number
  latency: LatencySummary
  statusCounts: Record<string, number>
  non2xx: number
  /** Connection errors and timeouts, and by kind (a socket error's code, or a timeout). */
  errors: number
  errorCounts: Record<string, number>
  /** CPU of the load generator itself; near 100 means the client may be the limit. */
  clientCpuPercent: number
}

export interface LoadGenerator {
  readonly pid: number
  load(job: LoadJob): Promise<LoadResult>
  stop(): Promise<void>
}

export function startLoadGenerator(cleanup: Cleanup): LoadGenerator {
  const script = fileURLToPath(import.meta.url)
  const child = spawnChild(
    cleanup,
    'load generator',
    process.execPath,
    ['--import', 'tsx', script, '--load-generator'],
    process.env,
    true,
  )
  // One job at a time (the callers await each): its answer is the next message.
  const load = (job: LoadJob) =>
    new Promise<LoadResult>((resolve, reject) => {
      void child.exited.then((code) => reject(new Error(`load generator exited (${code})`)))
      child.process.once('message', (reply: { result?: LoadResult; error?: string }) => {
        if (reply.error === undefined) resolve(reply.result!)
        else reject(new Error(`load generator: ${reply.error}`))
      })
      child.process.send(job)
    })
  return { pid: child.pid, load, stop: child.stop }
}

/** Names, skus and options stay unique across every job of the process (warm-ups too). */
const tag = randomTag()
let requestNumber = 0

async function runLoad(job: LoadJob): Promise<LoadResult> {
  if (job.targets.length === 0 || job.connections < job.targets.length) {
    throw new Error('a load job needs a target, and a connection for each')
  }
  const latencies: number[] = []
  const statusCounts: Record<string, number> = {}
  const errorCounts: Record<string, number> = {}
  const cpuAtStart = process.cpuUsage()
  const startedAt = performance.now()
  const counts = await Promise.all(
    job.targets.map((target, index) => {
      if (new URL(target.url).hostname !== BENCH_HOST) throw new Error(`not local: ${target.url}`)
      const connections =
        Math.floor(job.connections / job.targets.length) +
        (index < job.connections % job.targets.length ? 1 : 0)
      const share = connections / job.connections
      return new Promise<number>((resolve, reject) => {
        const instance = autocannon(
          {
            url: target.url,
            connections,
            timeout: 30,
            ...('seconds' in job.until
              ? { duration: job.until.seconds }
              : { amount: Math.round(job.until.requests * share) }),
            ...(job.ratePerS === undefined ? {} : { overallRate: job.ratePerS * share }),
            requests: job.specs.map((spec) => ({
              // Over autocannon's own fields (host, port): method, path, headers, body.
              setupRequest: (request: autocannon.Request) => {
                const { method, path, body } = buildRequest(spec, tag, requestNumber++)
                const headers: Record<string, string> = { authorization: `Bearer ${target.key}` }
                if (body !== undefined) headers['content-type'] = 'application/json'
                return {
                  ...request,
                  method,
                  path,
                  headers,
                  ...(body === undefined ? {} : { body }),
                }
              },
            })),
          },
          (error: unknown, result: autocannon.Result) => {
            if (error) reject(error instanceof Error ? error : new Error(String(error)))
            else resolve(result.errors)
          },
        )
        // autocannon's own histogram keeps whole milliseconds; these are exact.
        instance.on('response', (_client, status, _bytes, responseTime) => {
          latencies.push(responseTime)
          statusCounts[status] = (statusCounts[status] ?? 0) + 1
        })
        instance.on('reqError', (error: Error & { code?: string }) => {
          const kind = error.code ?? error.message
          errorCounts[kind] = (errorCounts[kind] ?? 0) + 1
        })
      })
    }),
  )
  const elapsedS = (performance.now() - startedAt) / 1000
  const cpu = process.cpuUsage(cpuAtStart)
  return {
    responses: latencies.length,
    reqPerS: latencies.length / elapsedS,
    latency: summarize(latencies),
    statusCounts,
    non2xx: Object.entries(statusCounts)
      .filter(([status]) => !status.startsWith('2'))
      .reduce((sum, [, count]) => sum + count, 0),
    errors: counts.reduce((sum, count) => sum + count, 0),
    errorCounts,
    clientCpuPercent: (100 * (cpu.user + cpu.system)) / 1e6 / elapsedS,
  }
}

if (process.argv.includes('--load-generator')) {
  process.on('message', (job: LoadJob) => {
    runLoad(job).then(
      (result) => process.send?.({ result }),
      (error: unknown) => process.send?.({ error: String(error) }),
    )
  })
  process.on('disconnect', () => process.exit(0))
}
