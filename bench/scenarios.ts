/**
 * The scenarios, as data: what each request is (method, path, body), what it needs made
 * first (seed, through the server's own API, never timed), how its writes are counted, and
 * its goal. Every server under test (the service and the bare baselines) answers the same
 * paths, so one scenario drives them all.
 */
import { randomInt } from 'node:crypto'
import type { ApiClient } from './support.js'

export const API = '/api/commerce/v1'
export const PAGE_SIZE = 50

/** What a request addresses; a scenario's requests take its targets round robin. */
export interface Target {
  productId?: string
  variantId?: string
  /** Appended to a list page's query: `&cursor=...`, `&tag=...`. */
  query?: string
}

export interface Scenario {
  label: string
  method: 'GET' | 'POST' | 'PATCH'
  path(target: Target): string
  /** The n-th request's body; `tag` and n make names, skus and options unique. */
  body?(n: number, tag: string): unknown
  seed(api: ApiClient): Promise<Target[]>
  /** The table a write scenario writes, and how: new rows, or versions moved by 1. */
  writes?: { table: 'products' | 'variants'; what: 'rows' | 'versions' }
  /** Issues 3 and 14: the least service / goal-baseline req/s. */
  goal?: number
  /** Measured by a section of its own (service only), not against the baselines. */
  ownSection?: true
}

const product = (t: Target) => `${API}/products/${t.productId}`

/**
 * A patch that really changes the row: n is new in this process, so are the name and the
 * price (a no-op patch writes nothing). Whole cents: 10 + n / 100 would send
 * 11.120000000000001 now and then (a 400).
 */
const change = (n: number, tag: string) => ({
  name: `Bench ${tag} edit ${n}`,
  price: (1000 + (n % 1_000_000)) / 100,
})

export type ScenarioName =
  | 'create-product'
  | 'add-variant'
  | 'get-product'
  | 'list-page'
  | 'patch-product'
  | 'patch-variant'
  | 'create-product-metafields'
  | 'patch-product-metafields'

const PLAIN = {
  'create-product': {
    label: 'create product',
    method: 'POST',
    path: () => `${API}/products`,
    body: (n, tag) => ({
      name: `Bench ${n} ${tag} tee`,
      description: 'A product made by the load benchmark.',
      price: 19.99,
      status: 'active',
    }),
    seed: async () => [{}],
    writes: { table: 'products', what: 'rows' },
    goal: 0.75,
  },
  'add-variant': {
    label: 'add variant',
    method: 'POST',
    path: (t) => `${product(t)}/variants`,
    body: (n, tag) => ({
      name: `Size ${n} / ${tag}`,
      sku: `${tag}-${n}`,
      price: 21.5,
      options: { size: `s${n}`, color: tag },
    }),
    // 200 products, so that none gets a huge variant list.
    seed: async (api) => ids(await createProducts(api, 200)),
    writes: { table: 'variants', what: 'rows' },
    goal: 0.7,
  },
  'get-product': {
    label: 'get product',
    method: 'GET',
    path: product,
    seed: async (api) => {
      const products = await createProducts(api, 100)
      await addVariants(api, products, 3)
      return ids(products)
    },
    goal: 0.75,
  },
  'list-page': {
    label: 'list page',
    method: 'GET',
    path: (t) => `${API}/products?limit=${PAGE_SIZE}${t.query ?? ''}`,
    seed: async () => [{}],
  },
  'patch-product': {
    label: 'patch product',
    method: 'PATCH',
    path: product,
    body: change,
    // At 16 connections a product is patched again only after 300 other requests: no row is
    // a hotspot whose lock the load waits on.
    seed: async (api) => ids(await createProducts(api, 300)),
    writes: { table: 'products', what: 'versions' },
    goal: 0.75,
  },
  'patch-variant': {
    label: 'patch variant',
    method: 'PATCH',
    path: (t) => `${product(t)}/variants/${t.variantId}`,
    body: change,
    // 3 variants on each of 100 products, interleaved so that requests in flight at once are
    // of different products (the service moves a variant's product's version too).
    seed: async (api) => addVariants(api, await createProducts(api, 100), 3),
    writes: { table: 'variants', what: 'versions' },
    goal: 0.75,
  },
} satisfies Record<string, Scenario>
/** Issue 35's twin of a create or a PATCH: the same request with 20 metafield values. */
const withMetafields = ({ body, goal: _, ...plain }: Scenario): Scenario => ({
  ...plain,
  label: `${plain.label}, 20 metafields`,
  body: (n, tag) => ({ ...(body!(n, tag) as object), metafields: metafieldValues(n) }),
  ownSection: true,
})

export const SCENARIOS: Record<ScenarioName, Scenario> = {
  ...PLAIN,
  'create-product-metafields': withMetafields(PLAIN['create-product']),
  'patch-product-metafields': withMetafields(PLAIN['patch-product']),
}
/** The scenarios measured against the baselines. */
export const SCENARIO_NAMES = (Object.keys(SCENARIOS) as ScenarioName[]).filter(
  (name) => !SCENARIOS[name].ownSection,
)

/** The metafield definitions the metafield scenarios write: 20 of several types. */
export const BENCH_METAFIELDS = Array.from({ length: 20 }, (_, i) => ({
  key: `field-${String(i).padStart(2, '0')}`,
  type: (
    ['single_line_text_field', 'number_integer', 'boolean', 'list.single_line_text_field'] as const
  )[i % 4]!,
  filterable: i % 2 === 0,
}))

/** The request bodies that make the BENCH_METAFIELDS definitions (`bench.<key>`). */
export const METAFIELD_DEFINITIONS = BENCH_METAFIELDS.map(({ key, type, filterable }) => ({
  owner: 'product' as const,
  namespace: 'bench',
  key,
  type,
  name: key,
  filterable,
}))

/** 20 values that differ with n, one per BENCH_METAFIELDS definition. */
export function metafieldValues(n: number): Record<string, unknown> {
  const values: Record<string, unknown> = {}
  for (const { key, type } of BENCH_METAFIELDS) {
    values[`bench.${key}`] =
      type === 'number_integer'
        ? n
        : type === 'boolean'
          ? n % 2 === 0
          : type === 'list.single_line_text_field'
            ? [`a${n % 7}`, `b${n % 5}`]
            : `value ${n}`
  }
  return values
}

/** One stream of requests of a load job: plain data, sent to the load generator. */
export interface Spec {
  scenario: ScenarioName
  targets: Target[]
  /** Every create of this spec gets this name (the scale's same-name figure). */
  name?: string
}

export interface HttpRequest {
  method: Scenario['method']
  path: string
  body?: string
}

export function buildRequest(spec: Spec, tag: string, n: number): HttpRequest {
  const { method, path, body } = SCENARIOS[spec.scenario]
  const target = spec.targets[n % spec.targets.length]
  if (target === undefined) throw new Error(`${spec.scenario} has no target`)
  const made = body?.(n, tag) as Record<string, unknown> | undefined
  return {
    method,
    path: path(target),
    body: made && JSON.stringify(spec.name === undefined ? made : { ...made, name: spec.name }),
  }
}

/**
 * A random lowercase word that makes names and skus unique across runs. Letters only: a
 * name ending in digits gives a slug the service reads as suffixed (`tee-2`).
 */
export function randomTag(length = 8): string {
  return Array.from({ length }, () => String.fromCharCode(97 + randomInt(26))).join('')
}

const tag = randomTag()
let made = 0
const ids = (productIds: string[]): Target[] => productIds.map((productId) => ({ productId }))

/** Creates `count` products, 4 at a time; all named `name`, or each uniquely. */
export async function createProducts(api: ApiClient, count: number, name?: string) {
  const spec: Spec = { scenario: 'create-product', targets: [{}], name }
  const productIds: string[] = []
  const worker = async () => {
    while (productIds.length + inFlight < count) {
      inFlight++
      const { method, path, body } = buildRequest(spec, tag, made++)
      const created = await api.json<{ data: { id: string } }>(method, path, JSON.parse(body!))
      inFlight--
      productIds.push(created.data.id)
    }
  }
  let inFlight = 0
  await Promise.all(Array.from({ length: Math.min(4, count) }, worker))
  return productIds
}

/**
 * Adds `perProduct` variants to each product; returns them round by round (the first of
 * every product, then the second, ...) so that neighbours are of different products.
 */
export async function addVariants(api: ApiClient, productIds: string[], perProduct: number) {
  const variants: Target[] = []
  for (let i = 0; i < perProduct; i++) {
    for (const productId of productIds) {
      const spec: Spec = { scenario: 'add-variant', targets: [{ productId }] }
      const { method, path, body } = buildRequest(spec, tag, made++)
      const added = await api.json<{ data: { id: string } }>(method, path, JSON.parse(body!))
      variants.push({ productId, variantId: added.data.id })
    }
  }
  return variants
}
