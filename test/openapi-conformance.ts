/**
 * Checks HTTP answers against the OpenAPI document: the status must be declared for the route,
 * every header it carries (but HTTP's own framing ones) must be declared for that status, and
 * the body must match the schema declared for that status. test/helpers.ts runs every
 * answer of the HTTP test suite through it; test/openapi.test.ts adds the statuses that suite
 * does not cause.
 */
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js'
import type { LightMyRequestResponse } from 'fastify'
import { OPENAPI_FILE } from '../scripts/openapi.js'

export type Document = Record<string, any>
export type Operation = Record<string, any>

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const
export const JSON_MEDIA = 'application/json'

/** Every operation of the document, as "METHOD /path/{template}". */
export function operationsOf(document: Document): Map<string, Operation> {
  const operations = new Map<string, Operation>()
  for (const [path, item] of Object.entries<Record<string, Operation>>(document.paths)) {
    for (const method of METHODS) {
      if (item[method]) operations.set(`${method.toUpperCase()} ${path}`, item[method])
    }
  }
  return operations
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
const DATE_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/

/**
 * Ajv on the JSON Schema dialect of OpenAPI 3.1 (2020-12), strict: a keyword or format it
 * does not know is an error, not silently ignored. The document's `#/components/schemas/...`
 * references resolve to its components.
 *
 * `closed`: an object may hold only the properties its schema names (unless the schema says
 * what else it allows, as `options` does). Answers are checked closed: the service writes them
 * with JSON.stringify, so this check is what keeps an undocumented field from reaching clients.
 */
export function documentSchemaCompiler(
  document: Document,
  { closed = false } = {},
): (schema: object) => ValidateFunction {
  const ajv = new Ajv2020({ strict: true, allErrors: true })
  ajv.addFormat('uuid', UUID)
  ajv.addFormat('date-time', DATE_TIME)
  // Our own keywords (at most N decimal places; an absolute http(s) URL with a host; the
  // entity tags of If-Match and If-None-Match; Shopify's names of a body's fields, refused),
  // which bodies are checked against.
  ajv.addKeyword({ keyword: 'x-max-decimals', schemaType: 'number' })
  ajv.addKeyword({ keyword: 'x-http-url', schemaType: 'boolean' })
  ajv.addKeyword({ keyword: 'x-entity-tags', schemaType: 'boolean' })
  ajv.addKeyword({ keyword: 'x-shopify-names', schemaType: 'object' })
  const base = 'https://catalog.invalid/openapi.json'
  const rewrite = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(rewrite)
    if (value === null || typeof value !== 'object') return value
    const rewritten = Object.fromEntries(
      Object.entries(value).map(([key, child]) =>
        key === '$ref' && typeof child === 'string'
          ? [key, child.replace('#/components/schemas/', `${base}#/$defs/`)]
          : [key, rewrite(child)],
      ),
    )
    const open = !('properties' in value) || 'additionalProperties' in value
    return closed && !open ? { ...rewritten, unevaluatedProperties: false } : rewritten
  }
  ajv.addSchema({ $id: base, $defs: rewrite(document.components.schemas) })
  return (schema) => ajv.compile(rewrite(schema) as object)
}

/**
 * Checks HTTP answers against the document: the status must be declared for the route, every
 * header must be declared for that status, and the body must match the schema declared for it.
 */
export class ConformanceChecker {
  private readonly operations: Map<string, Operation>
  private readonly compile: (schema: object) => ValidateFunction
  private readonly validators = new Map<string, ValidateFunction>()
  /** "METHOD /path status" of every answer checked. */
  readonly seen = new Set<string>()

  constructor(document: Document) {
    this.operations = operationsOf(document)
    this.compile = documentSchemaCompiler(document, { closed: true })
  }

  check(label: string, response: LightMyRequestResponse): void {
    const operation = this.operations.get(label)
    assert.ok(operation, `${label} is not in the document`)
    const status = String(response.statusCode)
    const declared = operation.responses[status]
    assert.ok(declared, `${label} answered ${status}, which the document does not declare`)
    const key = `${label} ${status}`
    checkHeaders(key, declared, response)
    if (declared.content === undefined) {
      // An answer declared without content (304): no body, and the route's own headers (ETag;
      // the common ones, by reference, depend on settings such as rate limiting).
      assert.equal(response.body, '', `${key} has a body`)
      for (const [header, object] of Object.entries<Record<string, unknown>>(
        declared.headers ?? {},
      )) {
        if ('$ref' in object) continue
        assert.ok(response.headers[header.toLowerCase()] !== undefined, `${key} lacks ${header}`)
      }
      this.seen.add(key)
      return
    }
    if (declared.content[JSON_MEDIA] === undefined) {
      // Not JSON (the export's CSV, a page, metrics): one of the media types declared; what it
      // holds is for the tests of its route to check.
      const type = String(response.headers['content-type']).split(';', 1)[0]!.trim()
      const types = Object.keys(declared.content)
      assert.ok(types.includes(type), `${key} sent ${type}, not one of ${types.join(', ')}`)
      this.seen.add(key)
      return
    }
    let validate = this.validators.get(key)
    if (!validate) {
      validate = this.compile(declared.content[JSON_MEDIA].schema)
      this.validators.set(key, validate)
    }
    assert.match(String(response.headers['content-type']), /^application\/json/, key)
    assert.ok(
      validate(response.json()),
      `${key}: ${response.body} does not match: ${JSON.stringify(validate.errors)}`,
    )
    this.seen.add(key)
  }
}

/**
 * Headers of HTTP itself, which OpenAPI does not describe (it ignores a declared Content-Type):
 * the framing of the message and of the connection.
 */
const TRANSPORT_HEADERS = new Set([
  'content-type',
  'content-length',
  'transfer-encoding',
  'date',
  'connection',
  'keep-alive',
])

/** Every other header of the answer must be declared for its operation and status. */
function checkHeaders(key: string, declared: Operation, response: LightMyRequestResponse): void {
  const names = new Set(Object.keys(declared.headers ?? {}).map((name) => name.toLowerCase()))
  for (const header of Object.keys(response.headers)) {
    const name = header.toLowerCase()
    if (TRANSPORT_HEADERS.has(name)) continue
    assert.ok(
      names.has(name),
      `${key} sent the header ${header}, which the document does not declare`,
    )
  }
}

/** "METHOD /path/{template}" of the document's operation that serves a request, if any. */
function labelOf(
  operations: Map<string, Operation>,
  method: string,
  url: string,
): string | undefined {
  const path = url.split('?', 1)[0]!
  for (const label of operations.keys()) {
    const [operationMethod, template] = label.split(' ') as [string, string]
    if (operationMethod !== method) continue
    const pattern = new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`)
    if (pattern.test(path)) return label
  }
  return undefined
}

let committed: { checker: ConformanceChecker; operations: Map<string, Operation> } | undefined

/**
 * Checks an answer against the committed openapi.json (whose freshness test/openapi.test.ts
 * asserts). Requests to no route of the document (an unknown route) are left alone.
 */
export function checkAgainstDocument(
  method: string,
  url: string,
  response: LightMyRequestResponse,
): void {
  if (!committed) {
    const document = JSON.parse(readFileSync(OPENAPI_FILE, 'utf8')) as Document
    committed = { checker: new ConformanceChecker(document), operations: operationsOf(document) }
  }
  const label = labelOf(committed.operations, method, url)
  if (label) committed.checker.check(label, response)
}
