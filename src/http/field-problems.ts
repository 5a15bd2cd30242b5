import type { ErrorObject } from 'ajv'
import type { FieldProblem } from '../errors.js'
import { ENTITY_TAGS } from './conditional.js'
import { HTTP_URL, MAX_DECIMALS } from './validation.js'

/**
 * Turns Ajv's errors into the contract's `details`: one entry per problem, by request field. A
 * wrong value is one problem even when it breaks several rules (an empty slug is both too short
 * and off its pattern): its field is named once, by the first rule Ajv reports. Each bad name
 * of an object is a problem, all named by the object's field (`options`).
 */
export function toFieldProblems(errors: ErrorObject[]): FieldProblem[] {
  const problems: FieldProblem[] = []
  const seen = new Set<string>()
  // A value of a list of allowed ones fails both its type and the list when its type is wrong:
  // one problem, said once, by the list.
  const listed = new Set(errors.filter((e) => e.keyword === 'enum').map((e) => e.instancePath))
  for (const error of errors) {
    // The specific error behind a bad option name comes separately; this one only says "invalid".
    if (error.keyword === 'propertyNames') continue
    if (error.keyword === 'type' && listed.has(error.instancePath)) continue
    const path = error.instancePath.split('/').slice(1).map(unescapePointer)
    let message = plainMessage(error)
    if (error.keyword === 'required') {
      path.push(String(error.params.missingProperty))
    } else if (error.propertyName !== undefined) {
      message = `name "${error.propertyName}" ${message}`
    }
    const field = path.length === 0 ? 'body' : path.join('.')
    if (field === 'body' && error.keyword === 'type') message = 'must be a JSON object'
    // Each bad name of an object (an option's) is a problem of its own, all on that object.
    const problem = error.propertyName === undefined ? field : `${field}\u0000${error.propertyName}`
    if (!seen.has(problem)) {
      seen.add(problem)
      problems.push({ field, message })
    }
  }
  return problems
}

/** Keywords of this service whose messages are already written for people. */
const OWN_KEYWORDS = new Set([
  MAX_DECIMALS,
  HTTP_URL,
  ENTITY_TAGS,
  'snakeCase',
  'shopifyName',
  'query',
])

/**
 * What a pattern asks, in words, by the pattern as the schemas write it: a schema states
 * its rule once, and its message is kept here, with the others.
 */
const PATTERN_MESSAGES: Record<string, string> = {
  // A slug (catalog.schemas.ts SLUG_PATTERN).
  '^[a-z0-9]+(-[a-z0-9]+)*$': 'must be lowercase letters, digits and single dashes between them',
  // Text in a query string.
  '^[^\\u0000]*$': 'must not contain a NUL character',
  // A sku to look up.
  '^(?!\\s*$)[^\\u0000]*$': 'must not be blank or contain a NUL character',
  // An Idempotency-Key.
  '^[!-~]([ -~]*[!-~])?$':
    'must be 1 to 255 printable ASCII characters, without spaces at either end',
}

/** What a format asks, in words. */
const FORMAT_MESSAGES: Record<string, string> = {
  'date-time': 'must be a date and time such as 2026-11-21T10:15:30.123Z',
  uuid: 'must be an id such as 01936b2e-7c1a-7d3e-9f00-1a2b3c4d5e6f',
}

/** A JSON type, as a shop clerk would say it. */
const TYPE_WORDS: Record<string, string> = {
  number: 'a number',
  integer: 'a whole number',
  string: 'text',
  boolean: 'true or false',
  array: 'a list',
  object: 'an object with named fields',
  null: 'empty (null)',
}

const plural = (count: number, one: string, many: string) => `${count} ${count === 1 ? one : many}`

/**
 * One of Ajv's errors in plain words, from the schema's own values: Ajv's own wording
 * ("must NOT have more than 64 characters", "must be number,null") never reaches anyone.
 * `must be >= 0` and `must be <= N` are kept as the contract writes them.
 */
function plainMessage(error: ErrorObject): string {
  const params = error.params as Record<string, unknown>
  const limit = Number(params.limit)
  switch (error.keyword) {
    case 'type': {
      const types = String(params.type).split(',')
      // null also clears the field: "must be a number" says what else it takes.
      const named = types.length > 1 ? types.filter((type) => type !== 'null') : types
      // An integer is also a number: say the narrower one.
      const words = named
        .filter((type) => !(type === 'number' && named.includes('integer')))
        .map((type) => TYPE_WORDS[type] ?? type)
      return `must be ${words.join(' or ')}`
    }
    case 'required':
      return 'is required'
    case 'enum': {
      const allowed = (params.allowedValues as unknown[]).filter((value) => value !== null)
      return `must be one of ${allowed.join(', ')}`
    }
    case 'const':
      return `must be ${String(params.allowedValue)}`
    case 'minLength':
      return limit === 1
        ? 'must not be empty'
        : `must be at least ${plural(limit, 'character', 'characters')} long`
    case 'maxLength':
      return `must be at most ${plural(limit, 'character', 'characters')} long`
    case 'minItems':
      return limit === 1
        ? 'must not be an empty list'
        : `must have at least ${plural(limit, 'item', 'items')}`
    case 'maxItems':
      return `must have at most ${plural(limit, 'item', 'items')}`
    case 'minProperties':
      return `must have at least ${plural(limit, 'entry', 'entries')}`
    case 'maxProperties':
      return `must have at most ${plural(limit, 'entry', 'entries')}`
    case 'uniqueItems':
      return 'must not list the same value twice'
    case 'minimum':
      return `must be >= ${limit}`
    case 'maximum':
      return `must be <= ${limit}`
    case 'exclusiveMinimum':
      return `must be more than ${limit}`
    case 'exclusiveMaximum':
      return `must be less than ${limit}`
    case 'multipleOf':
      return `must be a multiple of ${String(params.multipleOf)}`
    case 'pattern':
      return PATTERN_MESSAGES[String(params.pattern)] ?? 'is not in the expected form'
    case 'format':
      return FORMAT_MESSAGES[String(params.format)] ?? 'is not in the expected form'
    case 'additionalProperties':
      return `does not take the field ${String(params.additionalProperty)}`
    default:
      return OWN_KEYWORDS.has(error.keyword) && error.message
        ? error.message
        : 'is not in the expected form'
  }
}

function unescapePointer(segment: string): string {
  return segment.replace(/~1/g, '/').replace(/~0/g, '~')
}
