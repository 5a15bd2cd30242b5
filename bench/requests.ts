import { randomInt } from 'node:crypto'
import type { HttpRequest } from './http-client.js'

export const API = '/api/commerce/v1'

/**
 * What one stream of requests does. Every server under test (the service and the bare
 * baselines) answers the same paths, so one spec drives them all.
 */
export type RequestSpec =
  /** POST /products; every name unique, or all the same `name`. */
  | { kind: 'create-product'; name?: string }
  /** POST /products/:id/variants, round robin over `productIds`, unique skus and options. */
  | { kind: 'add-variant'; productIds: string[] }
  /** GET /products/:id, round robin over `productIds`. */
  | { kind: 'get-product'; productIds: string[] }
  /** GET /products?limit=50, from the start or from `cursor`, narrowed by `filter` if any. */
  | { kind: 'list-page'; cursor?: string; filter?: ListFilter }
  /** PATCH /products/:id, round robin over `productIds`: a new name and price each time. */
  | { kind: 'patch-product'; productIds: string[] }
  /** PATCH /products/:id/variants/:variantId, round robin over `variants`, as patch-product. */
  | { kind: 'patch-variant'; variants: VariantRef[] }

/** One query parameter of the list's filters (issue 14): `tag`, `vendor` or `slug`. */
export interface ListFilter {
  name: 'tag' | 'vendor' | 'slug'
  value: string
}

export interface VariantRef {
  productId: string
  variantId: string
}

export const PAGE_SIZE = 50

/**
 * A random lowercase word that makes names and skus of one process unique across runs.
 * Letters only: a name ending in digits gives a slug the service reads as suffixed
 * (`tee-2`), which costs it an extra statement no ordinary name costs.
 */
export function randomTag(length = 8): string {
  let tag = ''
  for (let i = 0; i < length; i++) tag += String.fromCharCode(97 + randomInt(26))
  return tag
}

/** The n-th request of a spec; `tag` and n make names, skus and options unique. */
export function buildRequest(spec: RequestSpec, tag: string, n: number): HttpRequest {
  switch (spec.kind) {
    case 'create-product':
      return {
        method: 'POST',
        path: `${API}/products`,
        body: JSON.stringify({
          name: spec.name ?? `Bench ${n} ${tag} tee`,
          description: 'A product made by the load benchmark.',
          price: 19.99,
          status: 'active',
        }),
      }
    case 'add-variant':
      return {
        method: 'POST',
        path: `${API}/products/${pick(spec.productIds, n)}/variants`,
        body: JSON.stringify({
          name: `Size ${n} / ${tag}`,
          sku: `${tag}-${n}`,
          price: 21.5,
          options: { size: `s${n}`, color: tag },
        }),
      }
    case 'get-product':
      return { method: 'GET', path: `${API}/products/${pick(spec.productIds, n)}` }
    case 'list-page':
      return {
        method: 'GET',
        path:
          `${API}/products?limit=${PAGE_SIZE}` +
          (spec.filter === undefined
            ? ''
            : `&${spec.filter.name}=${encodeURIComponent(spec.filter.value)}`) +
          (spec.cursor === undefined ? '' : `&cursor=${encodeURIComponent(spec.cursor)}`),
      }
    case 'patch-product':
      return {
        method: 'PATCH',
        path: `${API}/products/${pick(spec.productIds, n)}`,
        body: changes(tag, n),
      }
    case 'patch-variant': {
      const { productId, variantId } = pick(spec.variants, n)
      return {
        method: 'PATCH',
        path: `${API}/products/${productId}/variants/${variantId}`,
        body: changes(tag, n),
      }
    }
  }
}

/**
 * A patch that really changes the row: n is new in this process, so are the name and the
 * price (a no-op patch writes nothing, which is not what is measured).
 */
function changes(tag: string, n: number): string {
  // Whole cents over 100: 10 + n / 100 would send 11.120000000000001 now and then (a 400).
  return JSON.stringify({ name: `Bench ${tag} edit ${n}`, price: (1000 + (n % 1_000_000)) / 100 })
}

function pick<T>(items: T[], n: number): T {
  const item = items[n % items.length]
  if (item === undefined) throw new Error('a request spec needs at least one product or variant')
  return item
}
