/**
 * Calling the catalogue API with types generated from its OpenAPI document, with plain fetch:
 *
 *   npm run openapi:types      # openapi.json -> examples/catalog-api.d.ts
 *   CATALOG_KEY=ck_... npx tsx examples/typed-client.ts
 *
 * `npm test` type-checks this file against types generated afresh, and runs it.
 */
import { fileURLToPath } from 'node:url'
import type { components, paths } from './catalog-api.js'

type ErrorBody = components['schemas']['ErrorBody']

type CreateProduct = paths['/api/commerce/v1/products']['post']
type AddVariant = paths['/api/commerce/v1/products/{id}/variants']['post']
type GetProduct = paths['/api/commerce/v1/products/{id}']['get']
type ListProducts = paths['/api/commerce/v1/products']['get']
/** The list's query: `q`, `sort`, filters, `facets`; `option.<Name>` too, as extra keys. */
type SearchQuery = NonNullable<ListProducts['parameters']['query']>

/** The JSON body an operation takes, and the one it answers with on success. */
type RequestBody<Op> = Op extends { requestBody: { content: { 'application/json': infer B } } }
  ? B
  : never
type Success<Op> = Op extends { responses: { 200: { content: { 'application/json': infer R } } } }
  ? R
  : never

/** An answer other than 200, with the contract's error body. */
export class CatalogApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: ErrorBody,
  ) {
    super(`${status} ${body.error}: ${body.message}`)
  }
}

export function catalogClient(baseUrl: string, key: string) {
  async function call<Op>(method: 'GET' | 'POST', path: string, body?: RequestBody<Op>) {
    const response = await fetch(`${baseUrl}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${key}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    })
    const json: unknown = await response.json()
    if (!response.ok) throw new CatalogApiError(response.status, json as ErrorBody)
    return json as Success<Op>
  }
  const product = (id: string) => `/api/commerce/v1/products/${encodeURIComponent(id)}`
  return {
    createProduct: (body: RequestBody<CreateProduct>) =>
      call<CreateProduct>('POST', '/api/commerce/v1/products', body),
    addVariant: (productId: string, body: RequestBody<AddVariant>) =>
      call<AddVariant>('POST', `${product(productId)}/variants`, body),
    getProduct: (productId: string) => call<GetProduct>('GET', product(productId)),
    /** A search: repeated filters (`vendor: ['Acme', 'Globex']`) mean any of their values. */
    searchProducts: (query: SearchQuery) => {
      const params = new URLSearchParams()
      for (const [name, value] of Object.entries(query)) {
        for (const one of Array.isArray(value) ? value : [value]) {
          if (one !== undefined) params.append(name, String(one))
        }
      }
      return call<ListProducts>('GET', `/api/commerce/v1/products?${params}`)
    },
  }
}

/** Creates a product, adds a variant to it, and reads the product back with its variants. */
export async function createAndReadBack(baseUrl: string, key: string) {
  const api = catalogClient(baseUrl, key)
  const { data: product } = await api.createProduct({
    name: 'Crème Brûlée T-Shirt',
    price: 19.99,
    status: 'active',
  })
  const { data: variant } = await api.addVariant(product.id, {
    name: 'M / Red',
    sku: `TEE-M-RED-${product.id.slice(-6)}`,
    options: { size: 'M', color: 'red' },
  })
  const { data: stored } = await api.getProduct(product.id)
  const lines = stored.variants.map((v) => `${v.position}. ${v.name} at ${v.price.toFixed(2)}`)
  // A search box as the shopper types: without accents or case, the last word a prefix.
  const found = await api.searchProducts({
    q: 'creme brul',
    status: 'active',
    facets: 'vendor,price',
  })
  return { product, variant, stored, found, summary: `${stored.slug}: ${lines.join(', ')}` }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const key = process.env.CATALOG_KEY
  if (!key) throw new Error('Set CATALOG_KEY to an API key with the write scope')
  const { summary } = await createAndReadBack(
    process.env.CATALOG_URL ?? 'http://127.0.0.1:3000',
    key,
  )
  console.log(summary)
}
