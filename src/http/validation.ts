import { Ajv, type ErrorObject, type Options } from 'ajv'
import type { FastifySchemaCompiler, preValidationAsyncHookHandler } from 'fastify'
import { AppError } from '../errors.js'
import { ENTITY_TAGS, ENTITY_TAGS_MESSAGE, isEntityTagCondition } from './conditional.js'

/**
 * The keyword of an object schema naming the fields another system (Shopify) calls otherwise:
 * `{"title": "name"}`. A body that sends such a name is refused, naming the field meant, as a
 * camelCase spelling is (refusingCamelCase).
 */
export const SHOPIFY_NAMES = 'x-shopify-names'

/** The keyword of a number with at most so many decimal places (money). */
export const MAX_DECIMALS = 'x-max-decimals'

function createAjv(options: Options): Ajv {
  const ajv = new Ajv({ allErrors: true, removeAdditional: false, ...options })
  ajv.addKeyword({
    keyword: MAX_DECIMALS,
    type: 'number',
    schemaType: 'number',
    error: { message: ({ schema }) => `must have at most ${String(schema)} decimal places` },
    validate: (places: number, value: number) => {
      const scale = 10 ** places
      return Math.round(value * scale) / scale === value
    },
  })
  ajv.addKeyword({ keyword: 'example' })
  // An annotation: read by refusingCamelCase, nothing for Ajv to check.
  ajv.addKeyword({ keyword: SHOPIFY_NAMES, schemaType: 'object' })
  ajv.addFormat('date-time', true)
  ajv.addKeyword({
    keyword: HTTP_URL,
    type: 'string',
    schemaType: 'boolean',
    error: { message: 'must be an absolute http:// or https:// URL' },
    validate: (wanted: boolean, value: string) => !wanted || isAbsoluteHttpUrl(value),
  })
  ajv.addKeyword({
    keyword: ENTITY_TAGS,
    type: 'string',
    schemaType: 'boolean',
    error: { message: ENTITY_TAGS_MESSAGE },
    validate: (wanted: boolean, value: string) => !wanted || isEntityTagCondition(value),
  })
  return ajv
}

/**
 * The keyword of a string that must be an absolute http(s) URL with a host (image URLs): a
 * check JSON Schema's `format: uri` and a pattern cannot make, kept in the schema so that it
 * is made with the body's other checks, before the work and the Idempotency-Key.
 */
export const HTTP_URL = 'x-http-url'

/**
 * An absolute http:// or https:// URL with a host, as written: no empty authority
 * (`http:///a`, which WHATWG's parser would read as host `a`), no whitespace, control
 * character or backslash anywhere (the parser would quietly drop or turn them).
 */
function isAbsoluteHttpUrl(value: string): boolean {
  if (!/^https?:\/\/[^/?#]/i.test(value) || /[\s\p{Cc}\\]/u.test(value)) return false
  try {
    return new URL(value).hostname !== ''
  } catch {
    return false
  }
}

type Validate = ReturnType<FastifySchemaCompiler<unknown>> & { errors?: ErrorObject[] | null }

/**
 * Bodies are validated strictly: `"19.99"` is not a number. Query strings and path
 * parameters are text on the wire, so there numbers are read from their digits, and query
 * strings are held to the same strictness as bodies by `strictQuery`.
 */
export function createValidatorCompiler(): FastifySchemaCompiler<unknown> {
  const strict = createAjv({ coerceTypes: false, useDefaults: false })
  const lenient = createAjv({ coerceTypes: true, useDefaults: true })
  return ({ schema, httpPart }) => {
    if (httpPart === 'body') {
      return refusingCamelCase(schema as FieldsSchema, strict.compile(schema as object) as Validate)
    }
    const validate = lenient.compile(schema as object) as Validate
    return httpPart === 'querystring' ? strictQuery(schema as QuerySchema, validate) : validate
  }
}

/** What of a JSON Schema names fields: an object's properties, a list's items. */
interface FieldsSchema {
  properties?: Record<string, FieldsSchema>
  items?: FieldsSchema
  [SHOPIFY_NAMES]?: Record<string, string>
}

/** `compare_at_price` -> `compareAtPrice`; a name without `_` has no other spelling. */
function camelCaseOf(name: string): string {
  return name.replace(/_([a-z0-9])/g, (_, next: string) => next.toUpperCase())
}

/**
 * Request fields are snake_case and answers camelCase, so a record read from an answer and
 * sent back would be half applied if its camelCase fields were ignored like other unknown
 * ones: each such field is refused by name, naming the field meant, with the body's other
 * problems. So is a field under the name Shopify gives it where the schema says so
 * (SHOPIFY_NAMES: `title` for a product's `name`), as a body written for Shopify's API would
 * otherwise be taken without it. Fields of nested objects and lists of objects are checked
 * the same way.
 */
function refusingCamelCase(schema: FieldsSchema, validate: Validate): Validate {
  if (!namesSnakeCaseFields(schema)) return validate
  const check = ((data: unknown) => {
    const problems: ErrorObject[] = []
    findCamelCase(schema, data, '', problems)
    const valid = validate(data) as boolean
    check.errors = problems.length > 0 ? [...problems, ...(validate.errors ?? [])] : validate.errors
    return valid && problems.length === 0
  }) as Validate
  return check
}

function namesSnakeCaseFields(schema: FieldsSchema): boolean {
  if (schema.items) return namesSnakeCaseFields(schema.items)
  if (schema[SHOPIFY_NAMES] !== undefined) return true
  return Object.entries(schema.properties ?? {}).some(
    ([name, property]) => name.includes('_') || namesSnakeCaseFields(property),
  )
}

/** A schema's fields with their camelCase spelling where it is another: worked out once. */
const fieldLists = new WeakMap<FieldsSchema, FieldOfSchema[]>()

interface FieldOfSchema {
  name: string
  /** The camelCase spelling, when it differs and is not itself a field. */
  camel: string | undefined
  property: FieldsSchema
}

function fieldsOf(schema: FieldsSchema): FieldOfSchema[] {
  let fields = fieldLists.get(schema)
  if (fields === undefined) {
    const properties = schema.properties ?? {}
    fields = Object.entries(properties).map(([name, property]) => {
      const camel = camelCaseOf(name)
      const distinct = camel !== name && !Object.hasOwn(properties, camel)
      return { name, camel: distinct ? camel : undefined, property }
    })
    fieldLists.set(schema, fields)
  }
  return fields
}

function findCamelCase(
  schema: FieldsSchema,
  data: unknown,
  path: string,
  problems: ErrorObject[],
): void {
  if (data === null || typeof data !== 'object') return
  if (Array.isArray(data)) {
    if (schema.items)
      data.forEach((item, i) => findCamelCase(schema.items!, item, `${path}/${i}`, problems))
    return
  }
  const record = data as Record<string, unknown>
  for (const [foreign, meant] of Object.entries(schema[SHOPIFY_NAMES] ?? {})) {
    if (Object.hasOwn(record, foreign)) {
      problems.push({
        instancePath: `${path}/${foreign}`,
        schemaPath: '#',
        keyword: 'shopifyName',
        params: { meant },
        message: `is not a field of this request: send it as ${meant} (${foreign} is Shopify's name for it)`,
      })
    }
  }
  for (const { name, camel, property } of fieldsOf(schema)) {
    if (camel !== undefined && Object.hasOwn(record, camel)) {
      problems.push({
        instancePath: `${path}/${camel}`,
        schemaPath: '#',
        keyword: 'snakeCase',
        params: { meant: name },
        message: `is not a field of this request: send it as ${name} (request fields are snake_case)`,
      })
    }
    if (record[name] !== undefined)
      findCamelCase(property, record[name], `${path}/${name}`, problems)
  }
}

interface QuerySchema {
  properties?: Record<string, { type?: string | string[]; anyOf?: { type?: string }[] }>
}

/** A whole number as JSON writes it: no sign but minus, no leading zero, no space. */
const INTEGER_TEXT = /^-?(0|[1-9][0-9]*)$/
/** A number as JSON writes it: the same, with an optional fraction and no exponent. */
const NUMBER_TEXT = /^-?(0|[1-9][0-9]*)(\.[0-9]+)?$/

/**
 * A query string's own rules, before its schema's: a declared parameter is given at most
 * once (`?limit=5&limit=6` is refused, not read as a list), and a number is written in
 * decimal digits only, so that `0x10`, `1e2`, `10abc` or ` 5` (which Ajv's coercion would
 * read as 16, 100, an error and 5) are each refused by name. Every route's query schema is
 * compiled through here, so a new route gets these rules without asking.
 */
function strictQuery(schema: QuerySchema, validate: Validate): Validate {
  const rules = Object.entries(schema.properties ?? {}).map(([name, property]) => {
    const types = ([] as (string | undefined)[]).concat(property.type)
    const digits = types.includes('integer')
      ? INTEGER_TEXT
      : types.includes('number')
        ? NUMBER_TEXT
        : undefined
    // A parameter whose schema takes a list may be repeated (a filter's several values).
    const many = types.includes('array') || (property.anyOf ?? []).some((s) => s.type === 'array')
    return { name, digits, many, kind: types.includes('integer') ? 'a whole number' : 'a number' }
  })
  const check = ((data: Record<string, unknown>) => {
    const problems: ErrorObject[] = []
    let rest: Record<string, unknown> | undefined
    const refuse = (name: string, message: string) => {
      problems.push({
        instancePath: `/${name}`,
        schemaPath: '#',
        keyword: 'query',
        params: {},
        message,
      })
      rest ??= { ...data }
      delete rest[name]
    }
    for (const { name, digits, many, kind } of rules) {
      const value = data[name]
      if (value === undefined) continue
      if (Array.isArray(value)) {
        if (!many) refuse(name, 'must be given once')
      } else if (digits && typeof value === 'string' && !digits.test(value)) {
        refuse(name, `must be ${kind} in decimal digits`)
      }
    }
    if (rest === undefined) {
      const valid = validate(data) as boolean
      check.errors = validate.errors ?? null
      return valid
    }
    // The other parameters are still checked, so that one answer names every problem.
    validate(rest)
    check.errors = [...problems, ...(validate.errors ?? [])]
    return false
  }) as Validate
  return check
}

export interface JsonBodyOptions {
  /** Fields trimmed, so that length rules apply to what is kept. */
  trimmed?: readonly string[]
  /** Fields holding a list of strings, each trimmed. */
  trimmedLists?: readonly string[]
  /** Whether the body may also be sent as application/merge-patch+json (PATCH). */
  mergePatch?: boolean
}

/**
 * A hook for JSON bodies, run before validation: a request without any body is refused as
 * empty, a merge patch is refused where the route does not take one, and the named string
 * fields are trimmed.
 */
export function prepareJsonBody(options: JsonBodyOptions = {}): preValidationAsyncHookHandler {
  const { trimmed = [], trimmedLists = [], mergePatch = false } = options
  return async (request) => {
    if (!mergePatch && isMergePatch(request.headers['content-type'])) {
      throw new AppError(
        'unsupported_media_type',
        'The request body must be sent as application/json; merge patches are for PATCH.',
      )
    }
    const body = request.body
    if (body === undefined) throw new AppError('invalid_json', 'The request body is empty.')
    if (body === null || typeof body !== 'object' || Array.isArray(body)) return
    const record = body as Record<string, unknown>
    for (const field of trimmed) {
      const value = record[field]
      if (typeof value === 'string') record[field] = value.trim()
    }
    for (const field of trimmedLists) {
      const list = record[field]
      if (Array.isArray(list)) {
        record[field] = list.map((item: unknown) => (typeof item === 'string' ? item.trim() : item))
      }
    }
  }
}

/** The media type of a JSON Merge Patch (RFC 7396). */
export const MERGE_PATCH_TYPE = 'application/merge-patch+json'

function isMergePatch(contentType: string | undefined): boolean {
  return contentType !== undefined && contentType.trim().toLowerCase().startsWith(MERGE_PATCH_TYPE)
}
