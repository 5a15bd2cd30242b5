/**
 * The contract's field rules, written out again for the tests from CONTRACT.md rather than
 * taken from src/: an oracle that says what the service must answer to a POST body.
 */

export type BodyKind = 'product' | 'variant'

export type Verdict =
  | { status: 200; body: Record<string, unknown> }
  | { status: 400; code: 'invalid_json' }
  | { status: 400; code: 'validation_failed'; fields: Set<string> }
  | { status: 409; code: 'duplicate_sku' }
  | { status: 409; code: 'duplicate_options' }
  | { status: 409; code: 'duplicate_slug' }
  | { status: 409; code: 'invalid_transition' }
  /** Both conflicts at once: the contract does not rank them. */
  | { status: 409; code: 'duplicate_sku or duplicate_options' }
  | { status: 413; code: 'payload_too_large' }

export const BODY_LIMIT = 256 * 1024
export const MAX_POSITION = 2_147_483_647

/** Characters counted as the contract counts them: code points, not UTF-16 units. */
function characters(value: string): number {
  let count = 0
  for (const _ of value) count++
  return count
}

/** NUL (PostgreSQL text cannot hold it) or a lone surrogate (not Unicode): see docs/decisions/0012-request-parsing-and-bad-input.md. */
const UNSTORABLE = /[\u0000\p{Cs}]/u

/** Decimal places of a number as its shortest round-trip form writes it (`1e-7` has 7). */
function decimalPlaces(value: number): number {
  const [mantissa = '', exponent = '0'] = String(value).split('e')
  const fraction = mantissa.split('.')[1] ?? ''
  return Math.max(0, fraction.length - Number(exponent))
}

const isString = (v: unknown): v is string => typeof v === 'string'
const isNumber = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v)

function trimmedLengthIn(v: unknown, min: number, max: number): boolean {
  return isString(v) && characters(v.trim()) >= min && characters(v.trim()) <= max
}

const isMoney = (v: unknown) => isNumber(v) && v >= 0 && v <= 1e9 && decimalPlaces(v) <= 4

/**
 * An absolute http(s) URL of at most 2,048 characters with a host, as written: something
 * after `//` before any path, no whitespace, control character or backslash.
 */
function isImageUrl(v: unknown): boolean {
  if (!isString(v) || characters(v) > 2048) return false
  if (!/^https?:\/\/[^/?#]/i.test(v) || /[\s\p{Cc}\\]/u.test(v)) return false
  try {
    return new URL(v).hostname !== ''
  } catch {
    return false
  }
}

function isImage(v: unknown): boolean {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return false
  const { url, alt } = v as Record<string, unknown>
  return (
    isImageUrl(url) &&
    (alt === undefined || alt === null || (isString(alt) && characters(alt) <= 512))
  )
}

const isListOf = (v: unknown, item: (x: unknown) => boolean) =>
  Array.isArray(v) && v.length <= 250 && v.every(item)

function isOptions(v: unknown): boolean {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return false
  const entries = Object.entries(v)
  return (
    entries.length <= 50 &&
    entries.every(
      ([key, value]) =>
        characters(key) >= 1 &&
        characters(key) <= 64 &&
        isString(value) &&
        characters(value) >= 1 &&
        characters(value) <= 255,
    )
  )
}

/** Each field's rule; an optional field may also be null, meaning "not sent". */
const RULES: Record<BodyKind, Record<string, (v: unknown) => boolean>> = {
  product: {
    name: (v) => trimmedLengthIn(v, 1, 255),
    description: (v) => isString(v) && characters(v) <= 20_000,
    status: (v) => v === 'draft' || v === 'active' || v === 'archived',
    price: isMoney,
    compare_at_price: isMoney,
    sku: (v) => trimmedLengthIn(v, 1, 255),
    barcode: (v) => trimmedLengthIn(v, 1, 255),
    tax_rate: (v) => isNumber(v) && v >= 0 && v <= 100,
    vendor: (v) => trimmedLengthIn(v, 1, 255),
    product_type: (v) => trimmedLengthIn(v, 1, 255),
    tags: (v) => isListOf(v, (tag) => trimmedLengthIn(tag, 1, 255)),
    images: (v) => isListOf(v, isImage),
  },
  variant: {
    name: (v) => trimmedLengthIn(v, 1, 255),
    sku: (v) => trimmedLengthIn(v, 1, 255),
    barcode: (v) => trimmedLengthIn(v, 1, 255),
    price: isMoney,
    compare_at_price: isMoney,
    options: isOptions,
    position: (v) => Number.isInteger(v) && (v as number) >= 0 && (v as number) <= MAX_POSITION,
    weight_grams: (v) => Number.isInteger(v) && (v as number) >= 0 && (v as number) <= 1e9,
  },
}

/** The fields only a PATCH takes, beyond the create fields. */
const PATCH_ONLY_RULES: Record<BodyKind, Record<string, (v: unknown) => boolean>> = {
  product: {
    slug: (v) => isString(v) && v.length <= 255 && /^[a-z0-9]+(-[a-z0-9]+)*$/.test(v),
  },
  variant: {},
}

/** Fields a PATCH may not clear: `null` for them is 400, as the contract's part 2 says. */
const NOT_NULLABLE = new Set(['name', 'status', 'price', 'slug', 'position'])

/** Top-level fields holding a `__proto__` key or an unstorable string anywhere inside. */
function refusedFields(body: unknown): Set<string> {
  const refused = new Set<string>()
  const visit = (value: unknown, field: string): void => {
    if (isString(value)) {
      if (UNSTORABLE.test(value)) refused.add(field)
    } else if (value !== null && typeof value === 'object') {
      for (const [key, child] of Object.entries(value)) {
        if (key === '__proto__' || UNSTORABLE.test(key)) refused.add(field)
        visit(child, field)
      }
    }
  }
  if (body !== null && typeof body === 'object' && !Array.isArray(body)) {
    for (const [key, child] of Object.entries(body)) {
      if (key === '__proto__') refused.add(key)
      else if (UNSTORABLE.test(key)) refused.add('body')
      visit(child, key)
    }
  } else visit(body, 'body')
  return refused
}

/** A body read as JSON, or the verdict that ends it before the field rules. */
function readBody(payload: string | Buffer): Verdict | { record: Record<string, unknown> } {
  const bytes = typeof payload === 'string' ? Buffer.from(payload) : payload
  if (bytes.length > BODY_LIMIT) return { status: 413, code: 'payload_too_large' }
  let body: unknown
  try {
    // Bytes that are not UTF-8 read as U+FFFD, as in any JSON parser.
    body = JSON.parse(bytes.toString('utf8'))
  } catch {
    return { status: 400, code: 'invalid_json' }
  }
  const refused = refusedFields(body)
  if (refused.size > 0) return { status: 400, code: 'validation_failed', fields: refused }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    return { status: 400, code: 'validation_failed', fields: new Set(['body']) }
  }
  return { record: body as Record<string, unknown> }
}

/**
 * What the service must answer to `payload` sent as a JSON body to the endpoint of `kind`, by a
 * key allowed to write, for a product without variants (so no duplicate options and the
 * first default position), given the variant skus already taken in the store.
 */
export function judgeBody(
  kind: BodyKind,
  payload: string | Buffer,
  takenSkus: Set<string>,
): Verdict {
  const read = readBody(payload)
  if (!('record' in read)) return read
  const { record } = read
  const invalid = new Set<string>()
  for (const [field, rule] of Object.entries(RULES[kind])) {
    const value = record[field]
    if (field === 'name' ? !rule(value) : value !== undefined && value !== null && !rule(value))
      invalid.add(field)
  }
  if (invalid.size > 0) return { status: 400, code: 'validation_failed', fields: invalid }
  if (kind === 'variant' && isString(record.sku) && takenSkus.has(record.sku.trim())) {
    return { status: 409, code: 'duplicate_sku' }
  }
  return { status: 200, body: record }
}

/** The record a PATCH is sent to, and what else its store holds. */
export interface PatchTarget {
  kind: BodyKind
  /** The record as the service shows it before the patch. */
  record: Record<string, any>
  /** Variant skus other variants of the store hold. */
  takenSkus: Set<string>
  /** Slugs other products of the store hold. */
  takenSlugs: Set<string>
  /** The options of the product's other variants. */
  siblingOptions: Record<string, string>[]
}

/**
 * What the service must answer to `payload` sent as a JSON merge patch of `target.record`, by
 * a key allowed to write, without If-Match: field rules (a field left out is unchanged, `null`
 * clears it unless it may not be cleared), then the status transition, then the conflicts.
 */
export function judgePatch(target: PatchTarget, payload: string | Buffer): Verdict {
  const read = readBody(payload)
  if (!('record' in read)) return read
  const { record: body } = read
  const rules = { ...RULES[target.kind], ...PATCH_ONLY_RULES[target.kind] }
  const invalid = new Set<string>()
  for (const [field, rule] of Object.entries(rules)) {
    const value = body[field]
    if (value === undefined) continue
    if (value === null ? NOT_NULLABLE.has(field) : !rule(value)) invalid.add(field)
  }
  if (invalid.size > 0) return { status: 400, code: 'validation_failed', fields: invalid }
  const current = target.record
  if (target.kind === 'product') {
    if (current.status === 'archived' && body.status === 'active') {
      return { status: 409, code: 'invalid_transition' }
    }
    if (isString(body.slug) && body.slug !== current.slug && target.takenSlugs.has(body.slug)) {
      return { status: 409, code: 'duplicate_slug' }
    }
    return { status: 200, body }
  }
  const sku = isString(body.sku) ? body.sku.trim() : undefined
  const skuTaken = sku !== undefined && sku !== current.sku && target.takenSkus.has(sku)
  const options = body.options as Record<string, string> | null | undefined
  const optionsTaken =
    options != null &&
    Object.keys(options).length > 0 &&
    !sameOptions(options, current.options) &&
    target.siblingOptions.some((other) => sameOptions(other, options))
  if (skuTaken && optionsTaken) return { status: 409, code: 'duplicate_sku or duplicate_options' }
  if (skuTaken) return { status: 409, code: 'duplicate_sku' }
  if (optionsTaken) return { status: 409, code: 'duplicate_options' }
  return { status: 200, body }
}

/** Two options objects with the same pairs, in any order. */
export function sameOptions(a: Record<string, string>, b: Record<string, string>): boolean {
  const keys = Object.keys(a)
  return (
    keys.length === Object.keys(b).length && keys.every((k) => Object.hasOwn(b, k) && b[k] === a[k])
  )
}

/** JSON has one zero: -0 is written as 0. */
const zeroless = (v: unknown) => (v === 0 ? 0 : v)
const trimmedOrNull = (v: unknown) => (isString(v) ? v.trim() : null)

/** Tags as stored: each trimmed, duplicates compared case-insensitively dropped, first kept. */
export function normalTags(tags: unknown): string[] {
  const seen = new Set<string>()
  const kept: string[] = []
  for (const tag of ((tags ?? []) as string[]).map((t) => t.trim())) {
    if (seen.has(tag.toLowerCase())) continue
    seen.add(tag.toLowerCase())
    kept.push(tag)
  }
  return kept
}

/** Images as stored: `alt` null when not sent. */
function normalImages(images: unknown): { url: string; alt: string | null }[] {
  return ((images ?? []) as { url: string; alt?: string | null }[]).map(({ url, alt }) => ({
    url,
    alt: alt ?? null,
  }))
}

/** The product record a valid body creates, without the fields the service assigns. */
export function expectedProduct(body: Record<string, unknown>): Record<string, unknown> {
  return {
    name: (body.name as string).trim(),
    status: body.status ?? 'draft',
    price: zeroless(body.price ?? 0),
    compareAtPrice: zeroless(body.compare_at_price ?? null),
    sku: trimmedOrNull(body.sku),
    description: body.description ?? null,
    barcode: trimmedOrNull(body.barcode),
    taxRate: zeroless(body.tax_rate ?? null),
    vendor: trimmedOrNull(body.vendor),
    productType: trimmedOrNull(body.product_type),
    tags: normalTags(body.tags),
    images: normalImages(body.images),
  }
}

/** The variant record a valid body creates on a product of `productPrice` without variants. */
export function expectedVariant(
  body: Record<string, unknown>,
  productId: string,
  productPrice: number,
): Record<string, unknown> {
  return {
    productId,
    name: (body.name as string).trim(),
    sku: trimmedOrNull(body.sku),
    barcode: trimmedOrNull(body.barcode),
    price: zeroless(body.price ?? productPrice),
    compareAtPrice: zeroless(body.compare_at_price ?? null),
    options: body.options ?? {},
    position: zeroless(body.position ?? 1),
    weightGrams: zeroless(body.weight_grams ?? null),
  }
}

/** Each body field's record field, and how the value sent is stored (`null` clears). */
const STORED: Record<string, [field: string, store: (v: unknown) => unknown]> = {
  name: ['name', (v) => (v as string).trim()],
  description: ['description', (v) => v],
  status: ['status', (v) => v],
  price: ['price', zeroless],
  compare_at_price: ['compareAtPrice', zeroless],
  sku: ['sku', trimmedOrNull],
  barcode: ['barcode', trimmedOrNull],
  tax_rate: ['taxRate', zeroless],
  vendor: ['vendor', trimmedOrNull],
  product_type: ['productType', trimmedOrNull],
  tags: ['tags', normalTags],
  images: ['images', normalImages],
  slug: ['slug', (v) => v],
  options: ['options', (v) => v ?? {}],
  position: ['position', zeroless],
  weight_grams: ['weightGrams', zeroless],
}

/**
 * The record a valid merge patch makes of `record` (version and updatedAt as they were), and
 * whether it changed anything: options compare as sets of pairs, the rest as JSON.
 */
export function patchedRecord(
  kind: BodyKind,
  record: Record<string, any>,
  body: Record<string, unknown>,
): { record: Record<string, any>; changed: boolean } {
  const next = { ...record }
  const fields = { ...RULES[kind], ...PATCH_ONLY_RULES[kind] }
  for (const field of Object.keys(fields)) {
    if (body[field] === undefined) continue
    const [name, store] = STORED[field]!
    next[name] = store(body[field])
  }
  const { options: a, ...restA } = next
  const { options: b, ...restB } = record
  const changed =
    JSON.stringify(restA) !== JSON.stringify(restB) || (kind === 'variant' && !sameOptions(a, b))
  return { record: changed ? next : record, changed }
}
