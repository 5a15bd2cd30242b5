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
  | { status: 413; code: 'payload_too_large' }

export const BODY_LIMIT = 256 * 1024
export const MAX_POSITION = 2_147_483_647

/** Characters counted as the contract counts them: code points, not UTF-16 units. */
function characters(value: string): number {
  let count = 0
  for (const _ of value) count++
  return count
}

/** NUL (PostgreSQL text cannot hold it) or a lone surrogate (not Unicode): see decisions.md. */
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
    sku: (v) => trimmedLengthIn(v, 1, 64),
    barcode: (v) => trimmedLengthIn(v, 1, 64),
    tax_rate: (v) => isNumber(v) && v >= 0 && v <= 100,
  },
  variant: {
    name: (v) => trimmedLengthIn(v, 1, 255),
    sku: (v) => trimmedLengthIn(v, 1, 64),
    barcode: (v) => trimmedLengthIn(v, 1, 64),
    price: isMoney,
    compare_at_price: isMoney,
    options: isOptions,
    position: (v) => Number.isInteger(v) && (v as number) >= 0 && (v as number) <= MAX_POSITION,
  },
}

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
  const record = body as Record<string, unknown>
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

/** JSON has one zero: -0 is written as 0. */
const zeroless = (v: unknown) => (v === 0 ? 0 : v)
const trimmedOrNull = (v: unknown) => (isString(v) ? v.trim() : null)

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
  }
}
