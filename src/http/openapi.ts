import { readFileSync } from 'node:fs'
import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import type { FastifyInstance, RouteOptions } from 'fastify'
import { allows, SCOPES, type Scope } from './scopes.js'
import { ERROR_STATUS, type ErrorCode } from '../errors.js'
import { BEARER, declareCommonResponseHeaders } from './response-headers.js'
import { ErrorBody } from './schemas.js'

const { version } = JSON.parse(
  readFileSync(new URL('../../package.json', import.meta.url), 'utf8'),
) as { version: string }

const OPENAPI_PATH = '/openapi.json'
const DOCS_PATH = '/docs'

const TITLE = 'Catalogue service'

/** The scheme of /metrics's optional token. */
export const METRICS_TOKEN = 'metricsToken'

/** When each error is sent, and an example of its body. One entry per code of the contract. */
const ERROR_EXAMPLES: Record<ErrorCode, { when: string; body: Record<string, unknown> }> = {
  unauthorized: {
    when: 'no Authorization header, not Bearer, or an unknown, malformed or revoked key',
    body: { message: 'The API key is unknown or revoked.' },
  },
  forbidden: {
    when: 'the key lacks the scope the route needs',
    body: { message: 'This API key lacks the write scope.' },
  },
  invalid_json: {
    when: 'the body is not valid JSON, or is empty',
    body: { message: 'The request body is not valid JSON.' },
  },
  validation_failed: {
    when: 'a field is missing, of the wrong type or out of bounds; one detail per problem',
    body: {
      message: 'The request has invalid fields.',
      details: [
        { field: 'name', message: 'is required' },
        { field: 'price', message: 'must be >= 0' },
      ],
    },
  },
  not_found: {
    when: "unknown, malformed or another store's product or variant id",
    body: { message: 'No product with this id exists in your store.' },
  },
  method_not_allowed: {
    when:
      'a known path with a method it does not take (PUT /products/{id}), before any key is ' +
      'checked; the Allow header lists the methods the path takes',
    body: {
      message:
        'This path does not take PUT; it takes GET, HEAD, PATCH, DELETE (the Allow header lists them).',
    },
  },
  duplicate_sku: {
    when: "the variant's sku is already used by a variant of the store",
    body: { message: 'Another variant in your store already has this sku.' },
  },
  duplicate_options: {
    when: "the variant's options equal those of another variant of the product",
    body: { message: 'Another variant of this product already has these options.' },
  },
  duplicate_slug: {
    when: "the slug is another product's of the store",
    body: { message: 'Another product in your store already has this slug.' },
  },
  duplicate_handle: {
    when: "the handle is another collection's of the store",
    body: { message: 'Another collection in your store already has this handle.' },
  },
  smart_collection: {
    when: 'a manual membership change is asked of a smart collection',
    body: {
      message:
        'The products of a smart collection follow its rules; they cannot be changed by hand.',
    },
  },
  duplicate_definition: {
    when: "a metafield definition's owner, namespace and key are taken",
    body: {
      message: 'Your store already has a metafield definition with this owner, namespace and key.',
    },
  },
  cursor_expired: {
    when: 'an event cursor older than the kept events: events after it were deleted by retention',
    body: {
      message:
        'Events after this cursor are past their retention and were deleted; start again without after.',
    },
  },
  invalid_transition: {
    when: 'a status change the contract forbids (archived to active: unarchive to draft first)',
    body: { message: 'An archived product cannot become active; set it to draft first.' },
  },
  precondition_failed: {
    when: 'If-Match names no current version of the record; nothing was changed',
    body: { message: 'The record has changed since the version named in If-Match.' },
  },
  idempotency_key_in_use: {
    when: 'a request with the same Idempotency-Key is still in progress',
    body: {
      message: 'A request with this Idempotency-Key is still running; retry once it is answered.',
    },
  },
  idempotency_key_reused: {
    when: 'the Idempotency-Key was used before with a different request',
    body: {
      message: 'This Idempotency-Key was already used for a different request; use a new key.',
    },
  },
  rate_limited: {
    when: 'the key has used up its requests for the current minute',
    body: { message: 'This API key has used its 6000 requests for this minute; retry in 42 s.' },
  },
  bad_request: {
    when: 'the bytes received are not valid HTTP (the connection is closed)',
    body: { message: 'The request is not valid HTTP.' },
  },
  request_timeout: {
    when: 'the request was not received in time (the connection is closed)',
    body: { message: 'The request was not received in time.' },
  },
  headers_too_large: {
    when: 'the request line and headers are over the size limit (16 KiB unless configured)',
    body: { message: 'The request headers are larger than the service accepts.' },
  },
  payload_too_large: {
    when:
      'the body is over the size limit (256 KiB unless configured: BODY_LIMIT_BYTES; ' +
      'IMPORT_MAX_BYTES for an import); the message names the limit and its setting',
    body: {
      message:
        'The request body is larger than the 262144 bytes (256 KiB) the service accepts ' +
        '(BODY_LIMIT_BYTES sets the limit).',
    },
  },
  range_not_satisfiable: {
    when: "a Range header outside the file's bytes (the docs page's files under /docs/static/)",
    body: { message: 'The requested range is not within the file.' },
  },
  unsupported_media_type: {
    when: 'the body is not sent as application/json (as text/csv for an import)',
    body: { message: 'The request body must be sent as application/json.' },
  },
  unavailable: {
    when: 'the database is unreachable, or the service is shutting down',
    body: { message: 'The database is unavailable; try again shortly.' },
  },
  internal_error: {
    when: 'anything unexpected (logged with the request id)',
    body: { message: 'Something went wrong on our side.' },
  },
}

const ERROR_CODES = Object.keys(ERROR_STATUS) as ErrorCode[]

const ERROR_BODY_REF = '#/components/schemas/ErrorBody'

/**
 * The document of an error status: the error body, a description naming the codes sent with
 * that status, and one named example per code.
 */
function errorResponse(status: number) {
  const codes = ERROR_CODES.filter((code) => ERROR_STATUS[code] === status)
  const examples = Object.fromEntries(
    codes.map((code) => [
      code,
      {
        summary: ERROR_EXAMPLES[code].when,
        value: { error: code, ...ERROR_EXAMPLES[code].body },
      },
    ]),
  )
  return {
    description: codes.map((code) => `\`${code}\`: ${ERROR_EXAMPLES[code].when}`).join('; '),
    content: { 'application/json': { schema: { $ref: ERROR_BODY_REF }, examples } },
  }
}

/** The scopes whose keys pass the check of a route that needs `scope`. */
function acceptedScopes(scope: Scope): Scope[] {
  return SCOPES.filter((granted) => allows([granted], scope))
}

/** The security requirement of a route: any key with an accepted scope; none for public routes. */
function securityOf(scope: Scope | undefined): Record<string, string[]>[] {
  if (scope === undefined) return []
  return acceptedScopes(scope).map((granted) => ({ [BEARER]: [granted] }))
}

function scopeSentence(scope: Scope | undefined): string {
  if (scope === undefined) return 'Public: no API key needed.'
  const names = acceptedScopes(scope).map((granted) => `\`${granted}\``)
  return `Needs an API key with scope ${names.join(' or ')}.`
}

/**
 * A route's schema as the document shows it: its security from `config.scope` (the same
 * declaration the auth hook enforces), the scope said in its description, and each error
 * status with its codes and examples.
 */
function documentRoute(route: RouteOptions, schema: Record<string, unknown>) {
  const scope = route.config?.scope
  const response = { ...(schema.response as Record<string, unknown> | undefined) }
  for (const [status, value] of Object.entries(response)) {
    if (value === ErrorBody) response[status] = errorResponse(Number(status))
    const headers = (value as { [ERROR_HEADERS]?: Record<string, string> })[ERROR_HEADERS]
    if (headers)
      response[status] = { ...errorResponse(Number(status)), headers: headerObjects(headers) }
  }
  // A route outside the API's keys (/metrics) declares its own security and says it.
  const ownSecurity = schema.security !== undefined
  const description = [schema.description, ownSecurity ? undefined : scopeSentence(scope)]
    .filter(Boolean)
    .join('\n\n')
  const security = ownSecurity ? schema.security : securityOf(scope)
  return { ...schema, description, security, response }
}

const ERROR_HEADERS = Symbol('error headers')

/** An error answer in the contract's shape that carries `headers` besides the usual ones. */
export function errorBodyWithHeaders(headers: Record<string, string>) {
  return { [ERROR_HEADERS]: headers }
}

/** A response whose body is not JSON (a page, a script, metrics), of one of `mediaTypes`. */
export function textResponse(
  description: string,
  mediaTypes: string | string[],
  headers: Record<string, string> = {},
) {
  const types = typeof mediaTypes === 'string' ? [mediaTypes] : mediaTypes
  return {
    description,
    content: Object.fromEntries(types.map((type) => [type, { schema: { type: 'string' } }])),
    ...(Object.keys(headers).length > 0 && { headers: headerObjects(headers) }),
  }
}

/** Response headers, from their descriptions, as a route's response schema declares them. */
export function headerObjects(headers: Record<string, string>) {
  return Object.fromEntries(
    Object.entries(headers).map(([name, description]) => [name, { type: 'string', description }]),
  )
}

/**
 * The document itself and the page that renders it: served by routes declared beside the
 * document's plugin (the page by @fastify/swagger-ui), which it does not see, so written here.
 */
const DOCUMENT_PATHS = {
  [OPENAPI_PATH]: {
    get: {
      operationId: 'openApiDocument',
      tags: ['documents'],
      summary: 'This document (OpenAPI 3.1)',
      description: 'The OpenAPI 3.1 document of every route. Public: no API key needed.',
      security: [],
      responses: {
        200: {
          description: 'This document',
          content: {
            'application/json': {
              schema: { type: 'object' },
              examples: {
                document: {
                  summary: 'Its beginning',
                  value: { openapi: '3.1.0', info: { title: TITLE, version }, paths: {} },
                },
              },
            },
          },
        },
      },
    },
  },
  [DOCS_PATH]: {
    get: {
      operationId: 'docsPage',
      tags: ['documents'],
      summary: 'This document, rendered (Swagger UI)',
      description:
        'An HTML page that renders `/openapi.json`; its script and styles are served under ' +
        '`/docs/static/`. Public: no API key needed.',
      security: [],
      responses: { 200: textResponse('The page', 'text/html') },
    },
  },
}

/** A shared schema as the document lists it: its name is its key in `components.schemas`. */
function withoutId(schema: object): object {
  const { $id: _id, ...rest } = schema as { $id?: string }
  return rest
}

/**
 * The OpenAPI 3.1 document, generated from the route schemas, served at /openapi.json, and
 * the Swagger UI page at /docs, its assets served from the npm package. Registered before the
 * routes, so that it sees them all.
 */
export function registerOpenApi(app: FastifyInstance): void {
  app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: TITLE,
        version,
        description:
          'Products and their variants, per store. Every request to `/api/commerce/v1` carries ' +
          '`Authorization: Bearer <key>`; a key belongs to one store and has the scopes `read` ' +
          'and/or `write` (`write` includes `read`). Success is status 200 with `{"data": ...}`; ' +
          'an error is `{"error": "<code>", "message": "..."}`, with `details` for validation errors. ' +
          'A method a path does not take (`PUT /products/{id}`) is 405 `method_not_allowed`, ' +
          'before any key is checked, with an `Allow` header listing the methods it takes; a body ' +
          'over the size limit is 413 `payload_too_large`, its message naming the limit and ' +
          '`BODY_LIMIT_BYTES`.',
      },
      tags: [
        { name: 'products', description: 'Create, read and list products' },
        { name: 'variants', description: 'Add variants to a product and list them' },
        {
          name: 'collections',
          description: 'Manual and smart (rule-based) collections of products, and their products',
        },
        {
          name: 'webhooks',
          description: 'Endpoints that events of the store are to be sent to (scope write)',
        },
        { name: 'imports', description: 'Bring a catalogue in (Shopify product CSV) and out' },
        { name: 'keys', description: 'What the calling API key is: its store and scopes' },
        { name: 'health', description: 'For load balancers and orchestrators; no key needed' },
        {
          name: 'operations',
          description: 'For the people who run the service: metrics and the admin page',
        },
        { name: 'documents', description: 'This document and the page that renders it' },
      ],
      components: {
        schemas: { ErrorBody: withoutId(ErrorBody) },
        securitySchemes: {
          [BEARER]: {
            type: 'http',
            scheme: 'bearer',
            description: 'An API key, `ck_` and 43 characters, made with `catalog keys create`.',
          },
          [METRICS_TOKEN]: {
            type: 'http',
            scheme: 'bearer',
            description: 'The `METRICS_TOKEN` the service was started with, if any.',
          },
        },
      },
    },
    // The headers hooks send on every route's answers (X-Request-Id, RateLimit, ...).
    transformObject: (documents) => {
      const document = (documents as { openapiObject: Record<string, any> }).openapiObject
      document.paths = { ...document.paths, ...DOCUMENT_PATHS }
      return declareCommonResponseHeaders(document)
    },
    transform: ({ schema, url, route }) => ({
      // A wildcard (the admin page's assets) as a named parameter: `{file}`, not `{*}`.
      url: url.replace(/\/\*$/, '/:file'),
      schema: documentRoute(route, (schema ?? {}) as Record<string, unknown>) as typeof schema,
    }),
  })
  app.register(swaggerUi, {
    routePrefix: DOCS_PATH,
    theme: { title: `${TITLE}: API reference` },
    // No badge that asks swagger.io to validate the document: the page fetches nothing else.
    uiConfig: { validatorUrl: null, deepLinking: true },
  })
  app.get(OPENAPI_PATH, { schema: { hide: true } }, () => app.swagger())
}
