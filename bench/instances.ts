/**
 * Issue 3, several instances: the service's throughput with one and with two processes on
 * one PostgreSQL database, the same 16 connections shared out between them.
 */
import type { BenchConfig } from './config.js'
import { apiClient, createProducts } from './fixtures.js'
import type { LoadGenerator } from './load-job.js'
import type { RequestSpec } from './requests.js'
import { ratio } from './stats.js'
import { startAnotherInstance, startService, type TargetContext } from './targets.js'

const READ_PRODUCTS = 100

export interface InstanceFigures {
  scenario: 'create-product' | 'get-product'
  oneReqPerS: number
  twoReqPerS: number
  /** Two instances over one: above 1 when a second process adds throughput. */
  ratio: number | null
  non2xx: number
  errors: number
}

export async function runInstances(
  context: TargetContext,
  load: LoadGenerator,
  config: BenchConfig,
  log: (line: string) => void,
): Promise<InstanceFigures[]> {
  const first = await startService(context, 'postgres')
  try {
    const second = await startAnotherInstance(context, first)
    try {
      const client = apiClient(first)
      const productIds = await createProducts(client, READ_PRODUCTS).finally(() => client.close())
      const scenarios: [InstanceFigures['scenario'], RequestSpec][] = [
        ['create-product', { kind: 'create-product' }],
        ['get-product', { kind: 'get-product', productIds }],
      ]
      const figures: InstanceFigures[] = []
      for (const [scenario, spec] of scenarios) {
        const run = async (servers: (typeof first)[]) => {
          const job = {
            targets: servers.map((server) => ({ url: server.url, key: server.key })),
            specs: [spec],
            connections: config.connections,
          }
          await load.load({ ...job, until: { seconds: config.warmupS } })
          return load.load({ ...job, until: { seconds: config.durationS } })
        }
        const one = await run([first])
        const two = await run([first, second])
        figures.push({
          scenario,
          oneReqPerS: one.reqPerS,
          twoReqPerS: two.reqPerS,
          ratio: ratio(two.reqPerS, one.reqPerS),
          non2xx: one.non2xx + two.non2xx,
          errors: one.errors + two.errors,
        })
        log(
          `  ${scenario.padEnd(15)} 1 instance ${one.reqPerS.toFixed(0)} req/s,` +
            ` 2 instances ${two.reqPerS.toFixed(0)} req/s`,
        )
      }
      return figures
    } finally {
      await second.stop()
    }
  } finally {
    await first.stop()
  }
}
