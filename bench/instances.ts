/**
 * Issue 3, several instances: the service's throughput with one and with two processes on
 * one PostgreSQL database, the same 16 connections shared out between them.
 */
import type { BenchConfig } from './config.js'
import { apiClient, createProducts } from './fixtures.js'
import type { LoadGenerator, LoadResult } from './load-job.js'
import { ROUNDS } from './measure.js'
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
      const windowS = Math.ceil(config.durationS / ROUNDS)
      for (const [scenario, spec] of scenarios) {
        const window = async (servers: (typeof first)[], warmupS: number) => {
          const job = {
            targets: servers.map((server) => ({ url: server.url, key: server.key })),
            specs: [spec],
            connections: config.connections,
          }
          await load.load({ ...job, until: { seconds: warmupS } })
          return load.load({ ...job, until: { seconds: windowS } })
        }
        // In turn, as measureInTurn takes the scenarios: the machine's drift falls on both.
        const ones: LoadResult[] = []
        const twos: LoadResult[] = []
        for (let round = 0; round < ROUNDS; round++) {
          const warmupS = round === 0 ? config.warmupS : 1
          ones.push(await window([first], warmupS))
          twos.push(await window([first, second], warmupS))
        }
        const one = merge(ones)
        const two = merge(twos)
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

/** Windows of one arm as one: the mean rate, the failures added. */
function merge(windows: LoadResult[]): Pick<LoadResult, 'reqPerS' | 'non2xx' | 'errors'> {
  const sum = (figure: (w: LoadResult) => number) => windows.reduce((t, w) => t + figure(w), 0)
  return {
    reqPerS: sum((w) => w.reqPerS) / windows.length,
    non2xx: sum((w) => w.non2xx),
    errors: sum((w) => w.errors),
  }
}
