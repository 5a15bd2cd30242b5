/**
 * The scale figures of the service, each a ratio of two measurements on one server in one
 * run: a store of a million products, a name shared by 10,000 products, page 1,000 of a list.
 */
import type { BenchConfig } from './config.js'
import { apiClient, createProducts } from './fixtures.js'
import type { HttpClient } from './http-client.js'
import type { LoadGenerator, SequenceArmResult } from './load-job.js'
import { measureInTurn, measureWindow, ROUNDS, type WindowFigures } from './measure.js'
import { buildRequest, PAGE_SIZE } from './requests.js'
import { FIRST_SEEDED, seedProducts } from './seed.js'
import { ratio, type LatencySummary } from './stats.js'
import {
  settle,
  startService,
  type Dialect,
  type RunningServer,
  type TargetContext,
} from './targets.js'

export const SEEDED_PRODUCTS = 1_000_000
export const SAME_NAME_EXISTING = 10_000
const SAME_NAME = 'Classic Crew Neck T-Shirt'
const SEQUENTIAL_REQUESTS = 500
const DEEP_PAGE = 1_000
const PAGE_REQUESTS = 200
/** Requests of one arm in a row before the other arm's turn. */
const BLOCK = 25
/**
 * The two stores' create rates differ by a few percent at most, less than this machine's
 * speed moves in a few seconds: nine repeats of a three-round comparison of an empty and a 1M
 * store read from 0.91x to 1.18x. This comparison gets twice the rounds of the others.
 */
const STORE_ROUNDS = 2 * ROUNDS

export interface ScaleFigures {
  dialect: Dialect
  seed: { products: number; seconds: number }
  /** (a) create product at full load: a store of a million products vs an empty one, in turn. */
  millionProducts: {
    emptyStore: WindowFigures
    millionStore: WindowFigures
    ratio: number | null
  }
  /** (b) creating a product whose name 10,000 products already have, vs a fresh name. */
  sameName: {
    existing: number
    seedSeconds: number
    /** One request at a time, the two kinds alternating in blocks. */
    sameNameLatency: LatencySummary
    freshNameLatency: LatencySummary
    /** Fresh-name median over same-name median: 1 means a shared name costs nothing. */
    speedRatio: number | null
    p99Ratio: number | null
    /** All connections creating the same name at once. */
    concurrentSameName: WindowFigures
    /** concurrentSameName req/s over the unique-name req/s on this same store. */
    concurrentRatio: number | null
  }
  /** (c) a list page reached by following nextCursor, vs the first page. */
  deepPage: {
    page: number
    pageSize: number
    firstPageLatency: LatencySummary
    deepPageLatency: LatencySummary
    p50Ratio: number | null
    p99Ratio: number | null
  }
  /** Non-2xx answers of the one-at-a-time requests (each must be 0). */
  sequentialNon2xx: number
}

/**
 * Runs (a), (b) and (c) on one service whose store holds a million seeded products; for (a),
 * a second service on an empty store is measured in turn with it.
 */
export async function runScale(
  context: TargetContext,
  dialect: Dialect,
  load: LoadGenerator,
  config: BenchConfig,
  log: (line: string) => void,
): Promise<ScaleFigures> {
  const empty = await startService(context, dialect)
  try {
    return await runScaleBeside(empty, context, dialect, load, config, log)
  } finally {
    await empty.stop()
  }
}

async function runScaleBeside(
  empty: RunningServer,
  context: TargetContext,
  dialect: Dialect,
  load: LoadGenerator,
  config: BenchConfig,
  log: (line: string) => void,
): Promise<ScaleFigures> {
  let seedSeconds = 0
  const server = await startService(context, dialect, async (databaseUrl) => {
    const startedAt = performance.now()
    await seedProducts(databaseUrl, SEEDED_PRODUCTS)
    seedSeconds = (performance.now() - startedAt) / 1000
  })
  const client = apiClient(server)
  const target = { url: server.url, key: server.key }
  try {
    log(`  seeded ${SEEDED_PRODUCTS.toLocaleString('en')} products in ${seedSeconds.toFixed(1)} s`)
    await checkSeededSlugs(client)
    const creates = [{ kind: 'create-product' as const }]
    const [emptyStore, millionStore] = (await measureInTurn(
      [
        { server: empty, specs: creates },
        { server, specs: creates },
      ],
      load,
      config,
      () => settle(context),
      STORE_ROUNDS,
    )) as [WindowFigures, WindowFigures]
    log(
      `  create product, 1M store: ${millionStore.reqPerS.toFixed(0)} req/s,` +
        ` empty store in turn: ${emptyStore.reqPerS.toFixed(0)} req/s`,
    )

    const sameNameStartedAt = performance.now()
    await createProducts(client, SAME_NAME_EXISTING, { name: SAME_NAME, concurrency: 4 })
    const sameNameSeedSeconds = (performance.now() - sameNameStartedAt) / 1000
    const [sameName, freshName] = pair(
      await load.sequence({
        target,
        arms: [
          { label: 'same name', spec: { kind: 'create-product', name: SAME_NAME } },
          { label: 'fresh name', spec: { kind: 'create-product' } },
        ],
        perArm: SEQUENTIAL_REQUESTS,
        block: BLOCK,
      }),
    )
    const concurrentSameName = await measureWindow(server, load, config, [
      { kind: 'create-product', name: SAME_NAME },
    ])
    log(
      `  same name: p50 ${sameName.latency.p50.toFixed(2)} ms vs fresh ${freshName.latency.p50.toFixed(2)} ms;` +
        ` 16 connections ${concurrentSameName.reqPerS.toFixed(0)} req/s`,
    )

    const deepCursor = await cursorOfPage(client, DEEP_PAGE)
    const [firstPage, deepPage] = pair(
      await load.sequence({
        target,
        arms: [
          { label: 'page 1', spec: { kind: 'list-page' } },
          { label: `page ${DEEP_PAGE}`, spec: { kind: 'list-page', cursor: deepCursor } },
        ],
        perArm: PAGE_REQUESTS,
        block: BLOCK,
      }),
    )
    log(
      `  list page ${DEEP_PAGE}: p50 ${deepPage.latency.p50.toFixed(2)} ms vs page 1 ${firstPage.latency.p50.toFixed(2)} ms`,
    )

    return {
      dialect,
      seed: { products: SEEDED_PRODUCTS, seconds: seedSeconds },
      millionProducts: {
        emptyStore,
        millionStore,
        ratio: ratio(millionStore.reqPerS, emptyStore.reqPerS),
      },
      sameName: {
        existing: SAME_NAME_EXISTING,
        seedSeconds: sameNameSeedSeconds,
        sameNameLatency: sameName.latency,
        freshNameLatency: freshName.latency,
        speedRatio: ratio(freshName.latency.p50, sameName.latency.p50),
        p99Ratio: ratio(sameName.latency.p99, freshName.latency.p99),
        concurrentSameName,
        concurrentRatio: ratio(concurrentSameName.reqPerS, millionStore.reqPerS),
      },
      deepPage: {
        page: DEEP_PAGE,
        pageSize: PAGE_SIZE,
        firstPageLatency: firstPage.latency,
        deepPageLatency: deepPage.latency,
        p50Ratio: ratio(deepPage.latency.p50, firstPage.latency.p50),
        p99Ratio: ratio(deepPage.latency.p99, firstPage.latency.p99),
      },
      sequentialNon2xx: [sameName, freshName, firstPage, deepPage].reduce(
        (sum, arm) => sum + arm.non2xx,
        0,
      ),
    }
  } finally {
    client.close()
    await server.stop()
  }
}

/**
 * The seeded rows must be what the service would have written, or the figures measure a
 * store the service could not have made. A product named like a seeded one must get the
 * next suffix: this fails (409 or 500, or another slug) when seed.ts is out of date.
 */
async function checkSeededSlugs(client: HttpClient): Promise<void> {
  const request = buildRequest({ kind: 'create-product', name: FIRST_SEEDED.name }, '', 0)
  const response = await client.send(request)
  const slug =
    response.status === 200
      ? (JSON.parse(response.body) as { data: { slug: string } }).data.slug
      : undefined
  if (slug !== FIRST_SEEDED.nextSlug) {
    throw new Error(
      `seeded rows do not match the service's schema: "${FIRST_SEEDED.name}" got ` +
        `${response.status} ${slug ?? response.body.slice(0, 200)}, not slug ${FIRST_SEEDED.nextSlug}` +
        ' (bench/seed.ts must write what src/catalog/product.repository.ts writes)',
    )
  }
}

/** Follows nextCursor from page 1; returns the cursor that fetches page `page` (2 or more). */
async function cursorOfPage(client: HttpClient, page: number): Promise<string> {
  let cursor: string | undefined
  for (let current = 1; current < page; current++) {
    const { nextCursor } = await client.json<{ nextCursor: string | null }>(
      buildRequest({ kind: 'list-page', cursor }, '', 0),
    )
    if (nextCursor === null) throw new Error(`the store has fewer than ${page} pages`)
    cursor = nextCursor
  }
  if (cursor === undefined) throw new Error('page 1 has no cursor of its own')
  return cursor
}

/** The two arms of a sequence, in the order they were asked for. */
function pair(arms: SequenceArmResult[]): [SequenceArmResult, SequenceArmResult] {
  const [first, second] = arms
  if (!first || !second) throw new Error('a sequence answered without both of its arms')
  return [first, second]
}
