/**
 * The load generator, a child process of run.ts so that its CPU is not the orchestrator's:
 * runs each job it is sent over IPC (autocannon, or timed requests one at a time) and
 * answers with the figures. Exits when its parent goes away.
 */
import autocannon from 'autocannon'
import { assertLocalUrl, HttpClient } from './http-client.js'
import { answerIpc } from './ipc.js'
import type {
  Job,
  JobTarget,
  LoadJob,
  LoadResult,
  SequenceArmResult,
  SequenceJob,
} from './load-job.js'
import { buildRequest, randomTag, type RequestSpec } from './requests.js'
import { summarizeLatencies } from './stats.js'

/** Names, skus and options stay unique across every job of this process (warm-ups too). */
const tag = randomTag()
let requestNumber = 0

function nextRequest(spec: RequestSpec, target: JobTarget): autocannon.Request {
  const request = buildRequest(spec, tag, requestNumber++)
  return {
    method: request.method,
    path: request.path,
    headers: {
      authorization: `Bearer ${target.key}`,
      ...(request.body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(request.body === undefined ? {} : { body: request.body }),
  }
}

async function runLoad(job: LoadJob): Promise<LoadResult> {
  if (job.targets.length === 0 || job.connections < job.targets.length) {
    throw new Error('a load job needs a target, and a connection for each')
  }
  const latencies: number[] = []
  const statusCounts: Record<string, number> = {}
  const errorCounts: Record<string, number> = {}
  const cpuAtStart = process.cpuUsage()
  const startedAt = performance.now()
  const onResponse = (statusCode: number, responseTime: number) => {
    latencies.push(responseTime)
    statusCounts[statusCode] = (statusCounts[statusCode] ?? 0) + 1
  }
  const share = (index: number) =>
    Math.floor(job.connections / job.targets.length) +
    (index < job.connections % job.targets.length ? 1 : 0)
  const onError = (error: Error & { code?: string }) => {
    const kind = error.code ?? error.message
    errorCounts[kind] = (errorCounts[kind] ?? 0) + 1
  }
  const errors = await Promise.all(
    job.targets.map((target, index) =>
      runAutocannon(job, target, share(index), onResponse, onError),
    ),
  )
  const elapsedS = (performance.now() - startedAt) / 1000
  const cpu = process.cpuUsage(cpuAtStart)
  const non2xx = Object.entries(statusCounts)
    .filter(([status]) => !status.startsWith('2'))
    .reduce((sum, [, count]) => sum + count, 0)
  return {
    responses: latencies.length,
    elapsedS,
    reqPerS: latencies.length / elapsedS,
    latency: summarizeLatencies(latencies),
    statusCounts,
    non2xx,
    errors: errors.reduce((sum, count) => sum + count, 0),
    errorCounts,
    clientCpuPercent: (100 * (cpu.user + cpu.system)) / 1e6 / elapsedS,
  }
}

/** One autocannon instance against one target; resolves with its count of errors. */
function runAutocannon(
  job: LoadJob,
  target: JobTarget,
  connections: number,
  onResponse: (statusCode: number, responseTime: number) => void,
  onError: (error: Error & { code?: string }) => void,
): Promise<number> {
  assertLocalUrl(target.url)
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: target.url,
        connections,
        ...('seconds' in job.until
          ? { duration: job.until.seconds }
          : { amount: Math.round((job.until.requests * connections) / job.connections) }),
        timeout: 30,
        ...(job.ratePerS === undefined
          ? {}
          : { overallRate: (job.ratePerS * connections) / job.connections }),
        requests: job.specs.map((spec) => ({
          // Spread over autocannon's own fields (host, port) and replace method, path, body.
          setupRequest: (request: autocannon.Request) => ({
            ...request,
            ...nextRequest(spec, target),
          }),
        })),
      },
      (error: unknown, result: autocannon.Result) => {
        if (error) reject(error instanceof Error ? error : new Error(String(error)))
        else resolve(result.errors)
      },
    )
    // autocannon's own histogram keeps whole milliseconds; these are exact.
    instance.on('response', (_client, statusCode, _bytes, responseTime) =>
      onResponse(statusCode, responseTime),
    )
    instance.on('reqError', onError)
  })
}

async function runSequence(job: SequenceJob): Promise<SequenceArmResult[]> {
  const clients = new Map<string, HttpClient>()
  const clientOf = ({ url, key }: JobTarget) => {
    let client = clients.get(url)
    if (!client) {
      client = new HttpClient(url, { authorization: `Bearer ${key}` }, 1)
      clients.set(url, client)
    }
    return client
  }
  const arms = job.arms.map((arm) => ({
    ...arm,
    client: clientOf(arm.target ?? job.target),
    latencies: [] as number[],
    statusCounts: {} as Record<string, number>,
  }))
  try {
    for (let done = 0; done < job.perArm; done += job.block) {
      for (const arm of arms) {
        for (let i = 0; i < Math.min(job.block, job.perArm - done); i++) {
          const request = buildRequest(arm.spec, tag, requestNumber++)
          const startedAt = performance.now()
          const response = await arm.client.send(request)
          arm.latencies.push(performance.now() - startedAt)
          arm.statusCounts[response.status] = (arm.statusCounts[response.status] ?? 0) + 1
        }
      }
    }
  } finally {
    for (const client of clients.values()) client.close()
  }
  return arms.map((arm) => ({
    label: arm.label,
    latency: summarizeLatencies(arm.latencies),
    statusCounts: arm.statusCounts,
    non2xx: arm.latencies.length - (arm.statusCounts[200] ?? 0),
  }))
}

answerIpc((message: Job) =>
  message.kind === 'load' ? runLoad(message.job) : runSequence(message.job),
)
