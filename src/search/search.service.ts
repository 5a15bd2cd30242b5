import { rowToProduct } from '../catalog/catalog.mappers.js'
import { DEFAULT_PAGE_SIZE } from '../catalog/catalog.schemas.js'
import { type Product } from '../catalog/catalog-records.schemas.js'
import { fromStoredAmount } from '../catalog/money.js'
import { listProductRows } from '../catalog/product-list.repository.js'
import type { Database } from '../db/database.js'
import type { ProductRow } from '../db/schema.js'
import { toIso } from '../db/values.js'
import { decodeListCursor, encodeListCursor, type SortKey } from './search-cursor.js'
import { filterKindOf } from './search-filters.js'
import { bindingOf, readSearchRequest, type ListQuery, type SearchRequest } from './search-query.js'
import { facetKey } from './search-conditions.js'
import {
  facetCounts,
  priceRange,
  sharedFacets,
  type FacetCount,
  type SharedFacet,
  type SharedFacetAnswer,
} from './search-facets.repository.js'
import { searchPage } from './search.repository.js'
import {
  metafieldFacetCounts,
  withMetafields,
  type MetafieldFacetCount,
  type MetafieldRequest,
} from './metafield-search.js'

type PriceRange = { min: number | null; max: number | null }
export type Facets = Record<string, FacetCount[] | MetafieldFacetCount[] | PriceRange>

export interface ProductListPage {
  data: Product[]
  nextCursor: string | null
  facets?: Facets
}

/** The filters the list of part 2 serves from its own indexes, one value each. */
const PLAIN_FILTERS = ['status', 'slug', 'vendor', 'product_type', 'tag']

/**
 * The product list: its search, filters, sorts and facets. A request of part 2's shape
 * (newest first, single-valued filters) is served by its statements; every other by the
 * search statements.
 */
export async function listProducts(
  database: Database,
  storeId: string,
  query: ListQuery & { limit?: number; cursor?: string },
): Promise<ProductListPage> {
  const request = await withMetafields(database.kysely, storeId, query, readSearchRequest(query))
  const limit = query.limit ?? DEFAULT_PAGE_SIZE
  const binding = bindingOf(request)
  const after =
    query.cursor === undefined ? undefined : decodeListCursor(query.cursor, request.sort, binding)
  const db = database.kysely
  let rows: ProductRow[]
  let keys: SortKey[]
  if (isPlain(request)) {
    const value = (param: string) => request.filters.find((f) => f.param === param)?.values[0]
    rows = await listProductRows(db, {
      storeId,
      filters: {
        status: value('status'),
        slug: value('slug'),
        vendor: value('vendor'),
        productType: value('product_type'),
        tag: value('tag'),
      },
      after: after && { createdAt: after[0] as string, id: after[1] as string },
      limit: limit + 1,
    })
    keys = rows.map((row) => [toIso(row.created_at), row.id])
  } else {
    ;({ rows, keys } = await searchPage(db, storeId, request, after, limit + 1))
  }
  const page: ProductListPage = {
    data: rows.slice(0, limit).map(rowToProduct),
    nextCursor:
      rows.length > limit ? encodeListCursor(request.sort, binding, keys[limit - 1]!) : null,
  }
  if (request.facets.length > 0) page.facets = await facetsOf(database, storeId, request)
  return page
}

function isPlain(request: SearchRequest): boolean {
  return (
    request.q === undefined &&
    request.sort === 'newest' &&
    request.facets.length === 0 &&
    request.priceMinE4 === undefined &&
    request.priceMaxE4 === undefined &&
    request.filters.every(
      (filter) => PLAIN_FILTERS.includes(filter.param) && filter.values.length === 1,
    )
  )
}

async function facetsOf(
  database: Database,
  storeId: string,
  request: MetafieldRequest,
): Promise<Facets> {
  const db = database.kysely
  const priceBounded = request.priceMinE4 !== undefined || request.priceMaxE4 !== undefined
  const filtered = new Set(request.filters.map((filter) => facetKey(filter.param)))
  // Facets without a filter of their own count the same products: read once for them all.
  const shared: SharedFacet[] = request.facets
    .filter((name) => !request.metafieldFacets.has(name))
    .filter((name) => (name === 'price' ? !priceBounded : !filtered.has(facetKey(name))))
    .map((name) => (name === 'price' ? { name } : { name, source: sourceOf(name) }))
  const sharedAnswers =
    shared.length > 1
      ? await sharedFacets(db, storeId, request, shared)
      : new Map<string, SharedFacetAnswer>()
  const facets: Facets = {}
  for (const name of request.facets) {
    const answer = sharedAnswers.get(name)
    if (name === 'price') {
      const range = (answer as PriceRange | undefined) ?? (await priceRange(db, storeId, request))
      facets[name] = {
        min: range.min === null ? null : fromStoredAmount(range.min),
        max: range.max === null ? null : fromStoredAmount(range.max),
      }
      continue
    }
    if (request.metafieldFacets.has(name)) {
      facets[name] = await metafieldFacetCounts(db, storeId, request, name, request.facetLimit)
      continue
    }
    const counts =
      (answer as FacetCount[] | undefined) ??
      (await facetCounts(db, storeId, request, name, sourceOf(name)))
    facets[name] = counts.sort(byCountThenValue).slice(0, request.facetLimit)
  }
  return facets
}

const sourceOf = (name: string) => filterKindOf(name)!.facet!(name)

/** Most first, then by value A to Z without case, then by code point. */
export function byCountThenValue(a: FacetCount, b: FacetCount): number {
  return (
    b.count - a.count ||
    compareCodePoints(a.value.toLowerCase(), b.value.toLowerCase()) ||
    compareCodePoints(a.value, b.value)
  )
}

function compareCodePoints(a: string, b: string): number {
  const x = [...a]
  const y = [...b]
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const d = x[i]!.codePointAt(0)! - y[i]!.codePointAt(0)!
    if (d !== 0) return d
  }
  return x.length - y.length
}
