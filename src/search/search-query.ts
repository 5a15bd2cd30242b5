import { validationFailed, type FieldProblem } from '../errors.js'
import { searchWords } from './documents/fold.js'
import { filterKindOf, type FilterKind } from './search-filters.js'
import type { Sort } from './sorts.js'

export type { Sort } from './sorts.js'

export const MAX_Q_LENGTH = 256
export const MAX_FACETS = 10
export const DEFAULT_FACET_LIMIT = 20
const FIXED_FACETS = ['status', 'vendor', 'product_type', 'tag', 'price']

/** One filter of a request: its parameter, kind and values (normalized, unique, sorted). */
export interface RequestFilter {
  param: string
  kind: FilterKind
  values: string[]
}

/** A list request read and checked: what the search path runs. */
export interface SearchRequest {
  /** The trimmed `q`, its folded words, and the text a sku or barcode must equal. */
  q: { text: string; words: string[]; code: string } | undefined
  sort: Sort
  filters: RequestFilter[]
  priceMinE4: number | undefined
  priceMaxE4: number | undefined
  /** Facet names as requested, each once, in the order asked. */
  facets: string[]
  facetLimit: number
}

/** The parameters of the list as the route hands them (single ones checked by its schema). */
export type ListQuery = Record<string, unknown>

/**
 * Reads the search parameters of a list request, naming every bad one (400). The list's own
 * (`limit`, `cursor`) are left to the caller.
 */
export function readSearchRequest(query: ListQuery): SearchRequest {
  const problems: FieldProblem[] = []
  const problem = (field: string, message: string) => problems.push({ field, message })

  let q: SearchRequest['q']
  if (typeof query.q === 'string') {
    const text = query.q.trim()
    const length = [...text].length
    if (length < 1 || length > MAX_Q_LENGTH || !/[\p{L}\p{N}]/u.test(text)) {
      problem(
        'q',
        `must be 1 to ${MAX_Q_LENGTH} characters after trimming, with a letter or a digit`,
      )
    } else {
      q = { text, words: searchWords(text), code: text.toLowerCase() }
    }
  }

  let sort: Sort = query.q === undefined ? 'newest' : 'relevance'
  if (typeof query.sort === 'string') {
    if (query.sort === 'relevance' && query.q === undefined) {
      problem('sort', 'relevance needs q')
    } else sort = query.sort as Sort
  }

  const filters: RequestFilter[] = []
  for (const [param, raw] of Object.entries(query)) {
    const kind = filterKindOf(param)
    if (kind === undefined || raw === undefined) continue
    const given = (Array.isArray(raw) ? raw : [raw]) as string[]
    const bad = given.map((value) => kind.problem?.(value)).find((message) => message)
    if (bad) {
      problem(param, bad)
      continue
    }
    const values = [...new Set(given.map(kind.normalize))].sort()
    filters.push({ param, kind, values })
  }
  filters.sort((a, b) => (a.param < b.param ? -1 : a.param > b.param ? 1 : 0))

  const facets: string[] = []
  if (typeof query.facets === 'string') {
    const names = query.facets.split(',').map((name) => name.trim())
    const unknown = names.find(
      (name) =>
        !FIXED_FACETS.includes(name) &&
        !(name.startsWith('option.') && name.length > 7) &&
        !name.startsWith('metafield.'),
    )
    if (unknown !== undefined) {
      problem(
        'facets',
        `has no facet ${JSON.stringify(unknown)}: status, vendor, product_type, tag, price, option.<Name> or metafield.<namespace>.<key>`,
      )
    } else {
      for (const name of names) if (!facets.includes(name)) facets.push(name)
      if (facets.length > MAX_FACETS) problem('facets', `must name at most ${MAX_FACETS} facets`)
    }
  }

  if (problems.length > 0) throw validationFailed(problems)
  // Inclusive bounds in the stored ten-thousandths: a bound between two amounts rounds inward.
  const price = (value: unknown, round: (n: number) => number) =>
    typeof value === 'number' ? round(Number((value * 10_000).toFixed(4))) : undefined
  return {
    q,
    sort,
    filters,
    priceMinE4: price(query.price_min, Math.ceil),
    priceMaxE4: price(query.price_max, Math.floor),
    facets,
    facetLimit: typeof query.facet_limit === 'number' ? query.facet_limit : DEFAULT_FACET_LIMIT,
  }
}

/**
 * What a cursor is bound to: `q`, the sort, and the filters' values, in any order. A cursor
 * made for another of these is refused.
 */
export function bindingOf(request: SearchRequest): unknown {
  return [
    request.q?.text ?? null,
    request.sort,
    request.filters.map((filter) => [filter.param, filter.values]),
    request.priceMinE4 ?? null,
    request.priceMaxE4 ?? null,
  ]
}
