import { createHash } from 'node:crypto'
import { isUuid } from '../db/values.js'
import { validationFailed } from '../errors.js'
import type { Sort } from './search-query.js'

/**
 * A list's cursor: the sort key of the last item of a page, with a digest of what it was
 * made for (q, sort, filter values), so that a cursor of another search is refused.
 * base64url of `[sort, digest, ...key]`.
 */
export type SortKey = (string | number)[]

export function encodeListCursor(sort: Sort, binding: unknown, key: SortKey): string {
  return Buffer.from(JSON.stringify([sort, digest(binding), ...key])).toString('base64url')
}

/** The key of `cursor`, which must have been made for `sort` and `binding`; else 400. */
export function decodeListCursor(cursor: string, sort: Sort, binding: unknown): SortKey {
  let value: unknown
  try {
    value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'))
  } catch {
    value = undefined
  }
  if (Array.isArray(value) && value[0] === sort && value[1] === digest(binding)) {
    const key = value.slice(2) as unknown[]
    // Only the very text this service wrote: no padding, trailing bits or other spelling.
    if (validKey(sort, key) && encodeListCursor(sort, binding, key) === cursor) return key
  }
  throw validationFailed([
    {
      field: 'cursor',
      message: 'must be a nextCursor from a previous page of the same q, sort and filters',
    },
  ])
}

/** A time as the service writes it: years 1970 to 9999, milliseconds, UTC. */
const TIMESTAMP = /^(19[7-9]\d|[2-9]\d{3})-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/
const isTime = (value: unknown) =>
  typeof value === 'string' &&
  TIMESTAMP.test(value) &&
  !Number.isNaN(Date.parse(value)) &&
  new Date(value).toISOString() === value
const isId = (value: unknown) => typeof value === 'string' && isUuid(value)
const isNumber = (value: unknown) => typeof value === 'number' && Number.isFinite(value)

/** Each sort's key before (created_at, id), which end every key. */
const KEY_HEADS: Record<Sort, ((value: unknown) => boolean)[]> = {
  newest: [],
  oldest: [],
  updated: [isTime],
  name: [(value) => typeof value === 'string'],
  '-name': [(value) => typeof value === 'string'],
  price: [Number.isSafeInteger],
  '-price': [Number.isSafeInteger],
  relevance: [Number.isSafeInteger, isNumber],
}

function validKey(sort: Sort, key: unknown[]): key is SortKey {
  const checks = [...KEY_HEADS[sort], isTime, isId]
  return key.length === checks.length && checks.every((check, i) => check(key[i]))
}

function digest(binding: unknown): string {
  return createHash('sha256').update(JSON.stringify(binding)).digest('base64url').slice(0, 16)
}
