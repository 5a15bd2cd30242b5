import {
  filterableDefinitions,
  isMetafieldParameter,
  metafieldCondition,
  metafieldFacet,
  queryValue,
} from '../attributes/metafield-filters.js'
import type { Executor } from '../db/schema.js'
import { validationFailed, type FieldProblem } from '../errors.js'
import type { FilterKind } from './search-filters.js'
import type { ListQuery, RequestFilter, SearchRequest } from './search-query.js'
import { matchingProductIds } from './search-conditions.js'

/**
 * The list's `metafield.<namespace>.<key>` filters and facets (decision 0042): the store's
 * filterable definitions are read once per request that names one, before the statements are
 * built; each filter becomes one more of the request's filters (and so binds the cursor).
 */

export type MetafieldRequest = SearchRequest & {
  /** The definition of each `metafield.` facet asked. */
  metafieldFacets: Map<string, { id: string; owner: string }>
}

export async function withMetafields(
  db: Executor,
  storeId: string,
  query: ListQuery,
  request: SearchRequest,
): Promise<MetafieldRequest> {
  const params = Object.keys(query).filter(
    (name) => name.startsWith('metafield.') && query[name] !== undefined,
  )
  const facetNames = request.facets.filter((name) => name.startsWith('metafield.'))
  const metafieldFacets: MetafieldRequest['metafieldFacets'] = new Map()
  if (params.length === 0 && facetNames.length === 0) return { ...request, metafieldFacets }
  const definitions = await filterableDefinitions(db, storeId)
  const problems: FieldProblem[] = []
  const notFilterable = 'must name a filterable metafield definition of the store'
  const filters: RequestFilter[] = []
  for (const param of params) {
    const definition = isMetafieldParameter(param) ? definitions.get(param) : undefined
    if (definition === undefined) {
      problems.push({ field: param, message: notFilterable })
      continue
    }
    const raw = query[param]
    const given = (Array.isArray(raw) ? raw : [raw]) as string[]
    const values = given.map((text) => queryValue(definition.type, text))
    if (values.some((value) => value === undefined)) {
      problems.push({ field: param, message: `must be a value of type ${definition.type}` })
      continue
    }
    filters.push({
      param,
      kind: metafieldKind(storeId, definition.id, definition.type),
      values: [...new Set(values as string[])].sort(),
    })
  }
  for (const name of facetNames) {
    const definition = definitions.get(name)
    if (definition === undefined)
      problems.push({ field: 'facets', message: `${name} ${notFilterable}` })
    else metafieldFacets.set(name, { id: definition.id, owner: definition.owner })
  }
  if (problems.length > 0) throw validationFailed(problems)
  const all = [...request.filters, ...filters].sort((a, b) =>
    a.param < b.param ? -1 : a.param > b.param ? 1 : 0,
  )
  return { ...request, filters: all, metafieldFacets }
}

function metafieldKind(
  storeId: string,
  definitionId: string,
  type: Parameters<typeof queryValue>[0],
): FilterKind {
  return {
    param: 'metafield.',
    normalize: (value) => value,
    condition: (_db, _param, values, on, read) =>
      metafieldCondition(storeId, on.id, { definitionId, type, values: [...values] }, read),
  }
}

export interface MetafieldFacetCount {
  /** The attribute's JSON value (a json attribute's object or array is not a facet value). */
  value: string | number | boolean
  count: number
}

/**
 * A metafield facet: every value's count of the products matching all but the facet's own
 * filter, most first, then numbers from lowest, other values A to Z without case, then by
 * code point; at most `limit`.
 */
export async function metafieldFacetCounts(
  db: Executor,
  storeId: string,
  request: MetafieldRequest,
  name: string,
  limit: number,
): Promise<MetafieldFacetCount[]> {
  const { id, owner } = request.metafieldFacets.get(name)!
  const counts = await metafieldFacet(
    db,
    storeId,
    id,
    matchingProductIds(db, storeId, request, name),
    2_147_483_647,
    owner,
  )
  return (counts as MetafieldFacetCount[]).sort(byCountThenJsonValue).slice(0, limit)
}

export function byCountThenJsonValue(a: MetafieldFacetCount, b: MetafieldFacetCount): number {
  if (b.count !== a.count) return b.count - a.count
  if (typeof a.value === 'number' && typeof b.value === 'number') return a.value - b.value
  const x = typeof a.value === 'string' ? a.value : JSON.stringify(a.value)
  const y = typeof b.value === 'string' ? b.value : JSON.stringify(b.value)
  return compareCodePoints(x.toLowerCase(), y.toLowerCase()) || compareCodePoints(x, y)
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
