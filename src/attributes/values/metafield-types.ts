import type { FieldProblem } from '../../errors.js'
import { compileLinearPattern, type LinearPattern } from './linear-regex.js'

/** The types of a custom attribute (Shopify's names) and the JSON value each takes. */
export const METAFIELD_TYPES = [
  'single_line_text_field',
  'multi_line_text_field',
  'number_integer',
  'number_decimal',
  'boolean',
  'date',
  'date_time',
  'url',
  'color',
  'json',
  'list.single_line_text_field',
  'list.number_integer',
] as const
export type MetafieldType = (typeof METAFIELD_TYPES)[number]

export const METAFIELD_OWNERS = ['product', 'variant'] as const
export type MetafieldOwner = (typeof METAFIELD_OWNERS)[number]

export interface Validations {
  min?: number
  max?: number
  choices?: string[]
  regex?: string
}

const TEXT_TYPES = new Set<string>([
  'single_line_text_field',
  'multi_line_text_field',
  'list.single_line_text_field',
])
const NUMBER_TYPES = new Set<string>(['number_integer', 'number_decimal', 'list.number_integer'])

export const MAX_LIST_ITEMS = 128
export const MAX_JSON_BYTES = 65_536
export const MAX_REGEX_LENGTH = 256

/** A definition as the values' checks need it: its validations parsed, its pattern compiled once. */
export interface ValueRules {
  type: MetafieldType
  validations: Validations
  pattern: LinearPattern | undefined
}

/**
 * The problems of a definition's validations for its type, named `validations.<name>`: a
 * validation that does not fit the type, or a pattern the linear-time engine cannot run
 * (back-references, lookaround) or that is not a pattern at all.
 */
export function validationsProblems(type: MetafieldType, validations: Validations): FieldProblem[] {
  const problems: FieldProblem[] = []
  const text = TEXT_TYPES.has(type)
  const number = NUMBER_TYPES.has(type)
  const refuse = (name: string, message: string) =>
    problems.push({ field: `validations.${name}`, message })
  for (const name of ['min', 'max'] as const) {
    const value = validations[name]
    if (value === undefined) continue
    if (!text && !number) refuse(name, `does not apply to type ${type}`)
    else if (text && !(Number.isInteger(value) && value >= 0)) {
      refuse(name, 'must be a whole number of characters, >= 0')
    }
  }
  if (
    validations.min !== undefined &&
    validations.max !== undefined &&
    validations.min > validations.max
  ) {
    refuse('min', 'must be <= max')
  }
  if (validations.choices !== undefined) {
    if (!TEXT_TYPES.has(type) || type === 'multi_line_text_field') {
      refuse('choices', `does not apply to type ${type}`)
    } else if (validations.choices.some((choice) => /[\r\n]/.test(choice))) {
      refuse('choices', 'must not hold a line break')
    }
  }
  if (validations.regex !== undefined) {
    if (!text) refuse('regex', `does not apply to type ${type}`)
    else {
      const compiled = compileLinearPattern(validations.regex)
      if (typeof compiled === 'string') refuse('regex', compiled)
    }
  }
  return problems
}

/** The rules of a definition, its pattern compiled (checked valid when it was stored). */
export function valueRules(type: MetafieldType, validations: Validations): ValueRules {
  const compiled =
    validations.regex === undefined ? undefined : compileLinearPattern(validations.regex)
  return { type, validations, pattern: typeof compiled === 'string' ? undefined : compiled }
}

/** A value as stored and answered, or the reason it is refused. */
export type Checked = { value: unknown } | { problem: string }

/**
 * Checks a value against its definition's type and validations and gives it as stored:
 * date_time in UTC with `Z`, color in lowercase; other values as sent.
 */
export function checkValue(rules: ValueRules, value: unknown): Checked {
  const { type } = rules
  if (type === 'list.single_line_text_field' || type === 'list.number_integer') {
    if (!Array.isArray(value)) return { problem: 'must be a list' }
    if (value.length < 1 || value.length > MAX_LIST_ITEMS) {
      return { problem: `must hold 1 to ${MAX_LIST_ITEMS} items` }
    }
    const itemType = type === 'list.number_integer' ? 'number_integer' : 'single_line_text_field'
    const items: unknown[] = []
    for (const [i, item] of value.entries()) {
      const checked = checkScalar({ ...rules, type: itemType }, item)
      if ('problem' in checked) return { problem: `item ${i}: ${checked.problem}` }
      items.push(checked.value)
    }
    return { value: items }
  }
  return checkScalar(rules, value)
}

function checkScalar(rules: ValueRules, value: unknown): Checked {
  switch (rules.type) {
    case 'single_line_text_field':
      if (typeof value !== 'string') return { problem: 'must be a string' }
      if (/[\r\n]/.test(value)) return { problem: 'must not hold a line break' }
      return checkText(rules, value, 5_000)
    case 'multi_line_text_field':
      if (typeof value !== 'string') return { problem: 'must be a string' }
      return checkText(rules, value, 65_535)
    case 'number_integer':
      if (typeof value !== 'number' || !Number.isSafeInteger(value)) {
        return { problem: 'must be an integer, |n| < 2^53' }
      }
      return checkNumber(rules, value)
    case 'number_decimal':
      if (typeof value !== 'number' || !Number.isFinite(value))
        return { problem: 'must be a number' }
      if (decimals(value) > 9) return { problem: 'must have at most 9 decimals' }
      return checkNumber(rules, value)
    case 'boolean':
      return typeof value === 'boolean' ? { value } : { problem: 'must be a boolean' }
    case 'date':
      return typeof value === 'string' && isRealDay(value)
        ? { value }
        : { problem: 'must be a real day, YYYY-MM-DD' }
    case 'date_time': {
      const utc = typeof value === 'string' ? dateTimeInUtc(value) : undefined
      return utc === undefined
        ? { problem: 'must be an ISO 8601 date and time with an offset' }
        : { value: utc }
    }
    case 'url':
      return typeof value === 'string' && isWebUrl(value)
        ? { value }
        : { problem: 'must be an absolute http(s) URL of at most 2048 characters' }
    case 'color':
      return typeof value === 'string' && /^#[0-9a-fA-F]{6}$/.test(value)
        ? { value: value.toLowerCase() }
        : { problem: 'must be a color #rrggbb' }
    case 'json':
      return Buffer.byteLength(JSON.stringify(value), 'utf8') <= MAX_JSON_BYTES
        ? { value }
        : { problem: `must be at most ${MAX_JSON_BYTES} bytes as JSON` }
    default:
      return { problem: `is of a type this version does not know (${rules.type})` }
  }
}

function checkText(rules: ValueRules, value: string, maxLength: number): Checked {
  const length = [...value].length
  if (length < 1 || length > maxLength) {
    return { problem: `must be 1 to ${maxLength} characters` }
  }
  const { min, max, choices } = rules.validations
  if (min !== undefined && length < min) return { problem: `must be at least ${min} characters` }
  if (max !== undefined && length > max) return { problem: `must be at most ${max} characters` }
  if (choices !== undefined && !choices.includes(value)) {
    return { problem: 'must be one of the choices of its definition' }
  }
  if (rules.pattern !== undefined && !rules.pattern.matchesWhole(value)) {
    return { problem: "must match its definition's regex" }
  }
  return { value }
}

function checkNumber(rules: ValueRules, value: number): Checked {
  const { min, max } = rules.validations
  if (min !== undefined && value < min) return { problem: `must be >= ${min}` }
  if (max !== undefined && value > max) return { problem: `must be <= ${max}` }
  return { value }
}

/** The decimals of a number as JSON writes it (1e-7 has 7). */
function decimals(value: number): number {
  const [mantissa, exponent] = String(Math.abs(value)).split('e')
  const fraction = mantissa!.split('.')[1]?.length ?? 0
  return Math.max(0, fraction - Number(exponent ?? 0))
}

function isRealDay(value: string): boolean {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value)
  if (!match) return false
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])]
  const date = new Date(Date.UTC(year, month - 1, day))
  return (
    date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day
  )
}

const DATE_TIME =
  /^(\d{4}-\d{2}-\d{2})T(\d{2}):(\d{2})(?::(\d{2})(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/i

/** An ISO 8601 date and time with an offset (a real day and time), in UTC with `Z`. */
function dateTimeInUtc(value: string): string | undefined {
  const match = DATE_TIME.exec(value)
  if (!match || !isRealDay(match[1]!)) return undefined
  const [hours, minutes, seconds] = [Number(match[2]), Number(match[3]), Number(match[4] ?? 0)]
  if (hours > 23 || minutes > 59 || seconds > 59) return undefined
  const offset = match[6]!.toUpperCase()
  if (offset !== 'Z' && (Number(offset.slice(1, 3)) > 23 || Number(offset.slice(4)) > 59)) {
    return undefined
  }
  const fraction = (match[5] ?? '').slice(0, 4).padEnd(4, '0').slice(1) || '000'
  const iso = `${match[1]}T${match[2]}:${match[3]}:${match[4] ?? '00'}.${fraction}${offset}`
  const time = Date.parse(iso)
  return Number.isNaN(time) ? undefined : new Date(time).toISOString()
}

function isWebUrl(value: string): boolean {
  if (value.length > 2_048 || /\s/.test(value)) return false
  try {
    const url = new URL(value)
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== ''
  } catch {
    return false
  }
}

/** The texts of a value that `q` may find (searchable definitions): strings, list items. */
export function textsOf(value: unknown): string[] {
  if (typeof value === 'string') return [value]
  if (Array.isArray(value)) return value.filter((item) => typeof item === 'string')
  return []
}

/** The items a filter matches: a list's items, else the value itself, each as JSON text. */
export function indexedItems(value: unknown): string[] {
  const items = Array.isArray(value) ? value : [value]
  return [...new Set(items.map((item) => JSON.stringify(item)))]
}

/** A record's values: `{"<namespace>.<key>": value}`. */
export type MetafieldValues = Record<string, unknown>

/** A record's stored values: SQLite keeps the JSON text, PostgreSQL answers the object. */
export function storedMetafields(value: unknown): MetafieldValues {
  if (value === undefined || value === null) return {}
  return (typeof value === 'string' ? JSON.parse(value) : value) as MetafieldValues
}
