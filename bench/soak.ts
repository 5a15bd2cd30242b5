/**
 * Memory under sustained load: the service's peak RSS after 100,000 requests of a mix of all
 * six scenarios, and (BENCH_LONG=1) after 1,000,000, with the growth between the two.
 */
import type { BenchConfig } from './config.js'
import { addVariants, apiClient, createProducts } from './fixtures.js'
import type { LoadGenerator } from './load-job.js'
import { readMemory } from './proc.js'
import type { RequestSpec } from './requests.js'
import { describeErrors, ratio } from './stats.js'
import { startService, type Dialect, type TargetContext } from './targets.js'

export const SOAK_CHECKPOINTS = [100_000, 1_000_000] as const

export interface SoakCheckpoint {
  /** Requests answered since the soak began. */
  requests: number
  /** VmHWM: the highest RSS since the process started. */
  peakRssMiB: number
  rssMiB: number
  reqPerS: number
  non2xx: number
  errors: number
  errorCounts: Record<string, number>
}

export interface SoakFigures {
  dialect: Dialect
  checkpoints: SoakCheckpoint[]
  /** Peak RSS growth from the first checkpoint to the last, in percent; null with one checkpoint. */
  growthPercent: number | null
}

export async function runSoak(
  context: TargetContext,
  dialect: Dialect,
  load: LoadGenerator,
  config: BenchConfig,
  log: (line: string) => void,
): Promise<SoakFigures> {
  const server = await startService(context, dialect)
  const client = apiClient(server)
  try {
    const variantTargets = await createProducts(client, 200)
    const readTargets = await createProducts(client, 100)
    const patchTargets = await addVariants(client, readTargets, 3)
    const specs: RequestSpec[] = [
      { kind: 'create-product' },
      { kind: 'add-variant', productIds: variantTargets },
      { kind: 'get-product', productIds: readTargets },
      { kind: 'list-page' },
      { kind: 'patch-product', productIds: readTargets },
      { kind: 'patch-variant', variants: patchTargets },
    ]
    const checkpoints: SoakCheckpoint[] = []
    let done = 0
    for (const total of config.long ? SOAK_CHECKPOINTS : SOAK_CHECKPOINTS.slice(0, 1)) {
      const result = await load.load({
        targets: [{ url: server.url, key: server.key }],
        specs,
        connections: config.connections,
        until: { requests: total - done },
      })
      done = total
      const memory = readMemory(server.pid)
      checkpoints.push({
        requests: total,
        peakRssMiB: memory.peakMiB,
        rssMiB: memory.rssMiB,
        reqPerS: result.reqPerS,
        non2xx: result.non2xx,
        errors: result.errors,
        errorCounts: result.errorCounts,
      })
      log(
        `  after ${total.toLocaleString('en')} requests: peak RSS ${memory.peakMiB.toFixed(1)} MiB` +
          ` (${result.reqPerS.toFixed(0)} req/s, non-2xx ${result.non2xx},` +
          ` errors ${result.errors}${describeErrors(result.errorCounts)})`,
      )
    }
    const first = checkpoints[0]
    const last = checkpoints.at(-1)
    const growth = checkpoints.length > 1 ? ratio(last?.peakRssMiB, first?.peakRssMiB) : null
    return { dialect, checkpoints, growthPercent: growth === null ? null : (growth - 1) * 100 }
  } finally {
    client.close()
    await server.stop()
  }
}
