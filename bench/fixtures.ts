/** Data made through a server's API before a measurement (never timed). */
import { HttpClient } from './http-client.js'
import { buildRequest, randomTag, type RequestSpec, type VariantRef } from './requests.js'
import type { RunningServer } from './targets.js'

const tag = randomTag()
let requestNumber = 0

export function apiClient(server: RunningServer, maxSockets = 8): HttpClient {
  return new HttpClient(server.url, { authorization: `Bearer ${server.key}` }, maxSockets)
}

/** Creates `count` products, `concurrency` at a time; all named `name`, or each uniquely. */
export async function createProducts(
  client: HttpClient,
  count: number,
  options: { name?: string; concurrency?: number } = {},
): Promise<string[]> {
  const spec: RequestSpec = { kind: 'create-product', ...options }
  const ids: string[] = []
  await concurrently(count, options.concurrency ?? 4, async () => {
    const created = await client.json<{ data: { id: string } }>(
      buildRequest(spec, tag, requestNumber++),
    )
    ids.push(created.data.id)
  })
  return ids
}

/**
 * Adds `perProduct` variants, with unique skus and options, to each product. Returns them
 * product by product within each round: the first variant of every product, then the second
 * of every product, ... so that variants next to each other in the list are of different
 * products.
 */
export async function addVariants(
  client: HttpClient,
  productIds: string[],
  perProduct: number,
): Promise<VariantRef[]> {
  const variants: VariantRef[] = []
  for (let i = 0; i < perProduct; i++) {
    for (const productId of productIds) {
      const added = await client.json<{ data: { id: string } }>(
        buildRequest({ kind: 'add-variant', productIds: [productId] }, tag, requestNumber++),
      )
      variants.push({ productId, variantId: added.data.id })
    }
  }
  return variants
}

/** Runs `task` `count` times with at most `concurrency` at once. */
async function concurrently(count: number, concurrency: number, task: () => Promise<void>) {
  let started = 0
  const worker = async () => {
    while (started < count) {
      started++
      await task()
    }
  }
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker))
}

/**
 * What one scenario of the benchmark needs on `server` (300 products to read or change, 60
 * for a list page, a variant of each to PATCH), and its request spec.
 */
export async function scenarioSpec(server: RunningServer, scenario: string): Promise<RequestSpec> {
  const client = apiClient(server)
  try {
    switch (scenario) {
      case 'create-product':
        return { kind: 'create-product' }
      case 'list-page':
        await createProducts(client, 60)
        return { kind: 'list-page' }
      case 'add-variant':
      case 'get-product':
      case 'patch-product':
        return { kind: scenario, productIds: await createProducts(client, 300) }
      case 'patch-variant':
        return {
          kind: 'patch-variant',
          variants: await addVariants(client, await createProducts(client, 300), 1),
        }
      default:
        throw new Error(`unknown scenario ${scenario}`)
    }
  } finally {
    await client.close()
  }
}
