import { PRODUCT_STATUSES } from '../catalog/catalog.schemas.js'
import type { Executor } from '../db/schema.js'
import { isUuid } from '../db/values.js'
import {
  inCollections,
  optionIn,
  productTypeIn,
  slugIn,
  statusIn,
  tagIn,
  vendorIn,
  type Condition,
} from './filters.js'

/** Where a facet's values come from: a column of the products, or search_facets' rows. */
export type FacetSource = { column: string } | { kind: string; nameKey: string }

/**
 * A kind of filter of the list: its query parameter (a name, or a prefix ending in `.` for
 * a family such as `option.<Name>`), how its values are compared, its SQL, and its facet.
 * Collections (`collection`) and custom attributes (`metafield.`) are one more entry each.
 */
export interface FilterKind {
  param: string
  /** The value as the filter compares it (and as the cursor is bound to it). */
  normalize: (value: string) => string
  /** Why the value cannot be one of this filter's, or undefined. */
  problem?: (value: string) => string | undefined
  condition: (db: Executor, param: string, values: readonly string[]) => Condition
  /** Its facet of the same name, if it has one. */
  facet?: (param: string) => FacetSource
}

const exact = (value: string) => value
const withoutCase = (value: string) => value.toLowerCase()

export const FILTER_KINDS: readonly FilterKind[] = [
  {
    param: 'status',
    normalize: exact,
    problem: (value) =>
      (PRODUCT_STATUSES as readonly string[]).includes(value)
        ? undefined
        : `must be one of ${PRODUCT_STATUSES.join(', ')}`,
    condition: (db, _, values) => statusIn(db, values),
    facet: () => ({ column: 'p.status' }),
  },
  { param: 'slug', normalize: exact, condition: (db, _, values) => slugIn(db, values) },
  {
    param: 'vendor',
    normalize: exact,
    condition: (db, _, values) => vendorIn(db, values),
    facet: () => ({ column: 'p.vendor' }),
  },
  {
    param: 'product_type',
    normalize: exact,
    condition: (db, _, values) => productTypeIn(db, values),
    facet: () => ({ column: 'p.product_type' }),
  },
  {
    param: 'tag',
    normalize: withoutCase,
    condition: (db, _, values) => tagIn(db, values),
    facet: () => ({ kind: 'tag', nameKey: '' }),
  },
  {
    param: 'option.',
    normalize: withoutCase,
    condition: (db, param, values) => optionIn(db, optionNameKey(param), values),
    facet: (param) => ({ kind: 'option', nameKey: optionNameKey(param) }),
  },
  {
    // An id of no collection of the store matches nothing (as Shopify's); a malformed one is 400.
    param: 'collection',
    normalize: withoutCase,
    problem: (value) => (isUuid(value) ? undefined : 'must be a collection id (a UUID)'),
    condition: (db, _, values) => inCollections(db, values),
  },
]

function optionNameKey(param: string): string {
  return param.slice('option.'.length).toLowerCase()
}

/** The filter kind of a query parameter, or undefined when it is none. */
export function filterKindOf(param: string): FilterKind | undefined {
  return FILTER_KINDS.find((kind) =>
    kind.param.endsWith('.')
      ? param.startsWith(kind.param) && param.length > kind.param.length
      : param === kind.param,
  )
}
