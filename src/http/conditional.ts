import { Type } from 'typebox'

/**
 * Conditional requests (RFC 9110, section 13) on one record, whose `version` is its entity
 * tag: `ETag: "7"`. A write sent with `If-Match` runs only on the version it names, so two
 * clients editing the same record cannot overwrite each other; a read sent with
 * `If-None-Match` answers 304 when the client's copy is current.
 */
export function etagOf(version: number): string {
  return `"${version}"`
}

/**
 * The versions an `If-Match` header lets a write go on against: any (no header, or `*`, which
 * matches any current record), or those named by its entity tags. The comparison is strong,
 * as the RFC requires for If-Match: a weak tag (`W/"7"`) never matches. A value that is not a
 * list of entity tags names no version, nor does a number past any version's range.
 */
export function ifMatchVersions(header: string | undefined): 'any' | number[] {
  if (header === undefined || header.trim() === '*') return 'any'
  const versions: number[] = []
  for (const tag of entityTags(header) ?? []) {
    if (tag.weak || !/^[1-9][0-9]{0,9}$/.test(tag.opaque)) continue
    // A version is an integer column: past its range a tag names no version there can be.
    const version = Number(tag.opaque)
    if (version <= MAX_VERSION) versions.push(version)
  }
  return versions
}

/** Whether an `If-Match` header lets a write go on against `version` (see ifMatchVersions). */
export function ifMatchAllows(header: string | undefined, version: number): boolean {
  const versions = ifMatchVersions(header)
  return versions === 'any' || versions.includes(version)
}

/**
 * Whether an `If-None-Match` header makes a read of `version` answer 304: `*`, or a list of
 * entity tags one of which is the version's. The comparison is weak, as the RFC requires for
 * If-None-Match: `W/"7"` matches version 7 too.
 */
export function ifNoneMatchHits(header: string | undefined, version: number): boolean {
  if (header === undefined) return false
  if (header.trim() === '*') return true
  const tags = entityTags(header)
  return tags !== undefined && tags.some((tag) => tag.opaque === String(version))
}

/**
 * Whether a header is one RFC 9110 lets If-Match and If-None-Match carry: `*`, or a
 * comma-separated list of quoted entity tags, strong or weak. `3` (unquoted) is not.
 */
export function isEntityTagCondition(header: string): boolean {
  if (header.trim() === '*') return true
  const tags = entityTags(header)
  return tags !== undefined && tags.length > 0
}

/** The schema keyword of the two conditional headers, checked with the request's other fields. */
export const ENTITY_TAGS = 'x-entity-tags'

export const ENTITY_TAGS_MESSAGE =
  'must be * or a list of quoted versions such as "3" (with the quotes: If-Match: "3", not 3)'

/** The largest version a record can have: PostgreSQL's `integer`. */
const MAX_VERSION = 2_147_483_647

const ENTITY_TAG = /^(W\/)?"([\x21\x23-\x7e\x80-\xff]*)"$/

/** The entity tags of a comma-separated list, or undefined when it is not one. */
function entityTags(header: string): { weak: boolean; opaque: string }[] | undefined {
  const tags: { weak: boolean; opaque: string }[] = []
  for (const part of header.split(',')) {
    const item = part.trim()
    if (item === '') continue
    const match = ENTITY_TAG.exec(item)
    if (match === null) return undefined
    tags.push({ weak: match[1] !== undefined, opaque: match[2]! })
  }
  return tags
}

const ETagHeader = Type.String({
  description: 'The version of the record, quoted: "7". Send it back in If-Match or If-None-Match',
})

/** The response headers of an answer that carries one record. */
export const RECORD_RESPONSE_HEADERS = { ETag: ETagHeader }

/** The request header of the writes that may be made conditional. */
export const IfMatchHeader = Type.Optional(
  Type.String({
    [ENTITY_TAGS]: true,
    description:
      'Run the write only if the record is at one of these versions: `"7"`, `"7", "8"` or `*`. ' +
      'Otherwise 412 precondition_failed and nothing changes. Weak tags (W/"7") never match. ' +
      'Anything else (an unquoted `7`) is 400 validation_failed.',
  }),
)

/** The request header of the reads of one record. */
export const IfNoneMatchHeader = Type.Optional(
  Type.String({
    [ENTITY_TAGS]: true,
    description:
      'Answer 304 without a body if the record is still at one of these versions ' +
      '(`"7"`, a list, or `*`). Anything else (an unquoted `7`) is 400 validation_failed.',
  }),
)

/** The 304 answer of a read whose If-None-Match matched: no body, the current ETag. */
export const NotModified = {
  type: 'null',
  description: 'Not modified: the version named in If-None-Match is the current one',
  headers: RECORD_RESPONSE_HEADERS,
} as const
