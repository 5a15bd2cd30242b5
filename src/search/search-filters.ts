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
  type ProductSide,
} from './documents/filters.js'

/**
 * Where a facet's values come from: a column of the products (and of their documents: the
 * same name on both sides), or search_facets' rows.
 */
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
  /**
   * Its SQL on `on`'s side of the product. A kind whose `documents` is false reads only
   * `products` (`p`): a request naming it reads its matches there.
   */
  condition: (
    db: Executor,
    param: string,
    values: readonly string[],
    on: ProductSide,
    read?: MatchRead,
  ) => Condition
  /** Whether its condition can read the product's search document (`s`); yes unless false. */
  documents?: boolean
  /** Its facet of the same name, if it has one. */
  facet?: (param: string) => FacetSource
}

/**
 * How a condition's matches are read: `page` (the default), probed one candidate at a time
 * in the order of a sort or of `q`'s words, which may stop early; `whole`, every match read
 * with no word to drive the read (facets, the price range), where a kind with an index of
 * its matching products may drive the read from that index instead.
 */
export type MatchRead = 'page' | 'whole'

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
    condition: (db, _, values, on) => statusIn(db, values, on),
    facet: () => ({ column: 'status' }),
  },
  {
    param: 'slug',
    normalize: exact,
    condition: (db, _, values) => slugIn(db, values),
    documents: false,
  },
  {
    param: 'vendor',
    normalize: exact,
    condition: (db, _, values, on) => vendorIn(db, values, on),
    facet: () => ({ column: 'vendor' }),
  },
  {
    param: 'product_type',
    normalize: exact,
    condition: (db, _, values, on) => productTypeIn(db, values, on),
    facet: () => ({ column: 'product_type' }),
  },
  {
    param: 'tag',
    normalize: withoutCase,
    condition: (db, _, values, on) => tagIn(db, values, on),
    facet: () => ({ kind: 'tag', nameKey: '' }),
  },
  {
    param: 'option.',
    normalize: withoutCase,
    condition: (db, param, values, on) => optionIn(db, optionNameKey(param), values, on),
    facet: (param) => ({ kind: 'option', nameKey: optionNameKey(param) }),
  },
  {
    // An id of no collection of the store matches nothing (as Shopify's); a malformed one is 400.
    param: 'collection',
    normalize: withoutCase,
    problem: (value) => (isUuid(value) ? undefined : 'must be a collection id (a UUID)'),
    condition: (db, _, values, on) => inCollections(db, values, on),
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
