import type { BenchConfig } from './config.js'
import { addVariants, apiClient, createProducts } from './fixtures.js'
import type { LoadGenerator } from './load-job.js'
import { measureInTurn, type WindowFigures } from './measure.js'
import type { RequestSpec } from './requests.js'
import { countStored, type CountedTable, type StoredFigure } from './stored-rows.js'
import type { Dialect, RunningServer, ServerKind } from './targets.js'

export const SCENARIOS = [
  'create-product',
  'add-variant',
  'get-product',
  'list-page',
  'patch-product',
  'patch-variant',
] as const
export type Scenario = (typeof SCENARIOS)[number]

export const SCENARIO_LABELS: Record<Scenario, string> = {
  'create-product': 'create product',
  'add-variant': 'add variant',
  'get-product': 'get product',
  'list-page': 'list page',
  'patch-product': 'patch product',
  'patch-variant': 'patch variant',
}

/** Products the add-variant load is spread over, so that no product gets a huge variant list. */
const VARIANT_TARGET_PRODUCTS = 200
/** Products the get-product load reads, each with a few variants. */
const READ_PRODUCTS = 100
const VARIANTS_PER_READ_PRODUCT = 3
/**
 * Products the patch-product load is spread over: at 16 connections, a product is patched
 * again only after 300 other requests, so no row is a hotspot whose lock the load waits on.
 */
const PATCH_PRODUCTS = 300
/**
 * The patch-variant load: 300 variants, 3 on each of 100 products, interleaved so that the
 * requests in flight at once are of different products (the service moves a variant's
 * product's version too).
 */
const PATCH_VARIANT_PRODUCTS = 100
const VARIANTS_PER_PATCHED_PRODUCT = 3

export interface ScenarioRun extends WindowFigures {
  server: ServerKind
  dialect: Dialect
  scenario: Scenario
  /**
   * For the writes: requests the warm-up and window answered 200 for, and what the table
   * gained: rows for the creates, the sum of `version` for the patches (+1 per change).
   */
  stored?: { table: CountedTable; what: StoredFigure; acknowledged: number; found: number }
}

/** The table each write scenario writes, and how its writes are counted there. */
const WRITES: Partial<Record<Scenario, { table: CountedTable; what: StoredFigure }>> = {
  'create-product': { table: 'products', what: 'rows' },
  'add-variant': { table: 'variants', what: 'rows' },
  'patch-product': { table: 'products', what: 'versions' },
  'patch-variant': { table: 'variants', what: 'versions' },
}

/**
 * Every scenario, in order, on the servers of one dialect (the service and its baselines,
 * each on a fresh database): per scenario, their windows are taken in turn (measureInTurn).
 */
export async function runScenarios(
  servers: RunningServer[],
  load: LoadGenerator,
  config: BenchConfig,
  settle: () => Promise<void>,
  log: (line: string) => void,
): Promise<ScenarioRun[]> {
  const runs: ScenarioRun[] = []
  for (const scenario of SCENARIOS) {
    const arms = await Promise.all(
      servers.map(async (server) => ({ server, specs: await prepare(server, scenario) })),
    )
    const write = WRITES[scenario]
    const storedBefore = await Promise.all(
      servers.map((server) => (write ? countStored(server.databaseUrl, write) : 0)),
    )
    const merged = await measureInTurn(arms, load, config, settle)
    for (const [i, server] of servers.entries()) {
      const figures = merged[i]!
      const stored = write && {
        ...write,
        acknowledged: ok(figures) + ok(figures.warmup),
        found: (await countStored(server.databaseUrl, write)) - storedBefore[i]!,
      }
      log(
        `  ${SCENARIO_LABELS[scenario].padEnd(15)} ${server.kind.padEnd(11)}` +
          ` ${figures.reqPerS.toFixed(0).padStart(7)} req/s` +
          `  p50 ${figures.p50Ms.toFixed(2)} ms  p99 ${figures.p99Ms.toFixed(2)} ms` +
          `  non-2xx ${figures.non2xx}  errors ${figures.errors}`,
      )
      runs.push({ server: server.kind, dialect: server.dialect, scenario, ...figures, stored })
    }
  }
  return runs
}

const ok = (counts: { responses: number; non2xx: number }) => counts.responses - counts.non2xx

/** Makes the data a scenario needs, through the server's own API; returns its requests. */
async function prepare(server: RunningServer, scenario: Scenario): Promise<RequestSpec[]> {
  const client = apiClient(server)
  try {
    switch (scenario) {
      case 'create-product':
        return [{ kind: 'create-product' }]
      case 'add-variant':
        return [
          {
            kind: 'add-variant',
            productIds: await createProducts(client, VARIANT_TARGET_PRODUCTS),
          },
        ]
      case 'get-product': {
        const productIds = await createProducts(client, READ_PRODUCTS)
        await addVariants(client, productIds, VARIANTS_PER_READ_PRODUCT)
        return [{ kind: 'get-product', productIds }]
      }
      case 'list-page':
        return [{ kind: 'list-page' }]
      case 'patch-product':
        return [{ kind: 'patch-product', productIds: await createProducts(client, PATCH_PRODUCTS) }]
      case 'patch-variant': {
        const productIds = await createProducts(client, PATCH_VARIANT_PRODUCTS)
        const variants = await addVariants(client, productIds, VARIANTS_PER_PATCHED_PRODUCT)
        return [{ kind: 'patch-variant', variants }]
      }
    }
  } finally {
    client.close()
  }
}
