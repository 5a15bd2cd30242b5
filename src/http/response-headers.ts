/**
 * The response headers that hooks send, whatever the route: declared in the OpenAPI document
 * for every operation by one function, from what the document already says of the operation
 * (its security, its parameters, its statuses), so that a route added later is covered without
 * naming them. A route's own headers (ETag) stay in its response schemas.
 */

type Document = Record<string, any>

/** The name of the API keys' bearer scheme in `components.securitySchemes`. */
export const BEARER = 'bearerAuth'

interface HeaderObject {
  description: string
  schema: { type: 'string' }
}

const text = (description: string): HeaderObject => ({ description, schema: { type: 'string' } })

/** Each header, as `components.headers` lists it. */
export const COMMON_RESPONSE_HEADERS = {
  'X-Request-Id': text(
    "The request's id, as in the service's log line of it: the client's own X-Request-Id when " +
      'it is 1 to 128 of A-Z a-z 0-9 . _ : -, else a new UUID. On every answer.',
  ),
  'RateLimit-Policy': text(
    'The per-key budget: `"default";q=<requests>;w=60` (IETF RateLimit headers draft). ' +
      'On every answer to an authenticated request, unless rate limiting is off.',
  ),
  RateLimit: text(
    'Where the key stands: `"default";r=<remaining>;t=<seconds until the window resets>`. ' +
      'On every answer to an authenticated request, unless rate limiting is off.',
  ),
  'Retry-After': text('Seconds until the key has a budget again.'),
  'WWW-Authenticate': text('`Bearer`: the scheme the service expects.'),
  'Idempotent-Replayed': text(
    '`true` when this answer is the stored answer to an earlier request with the same ' +
      'Idempotency-Key; absent otherwise.',
  ),
} satisfies Record<string, HeaderObject>

type CommonHeader = keyof typeof COMMON_RESPONSE_HEADERS

const METHODS = ['get', 'put', 'post', 'patch', 'delete', 'head', 'options'] as const

/** The common headers an operation's answer with `status` may carry. */
function headersOf(operation: Document, status: string): CommonHeader[] {
  const headers: CommonHeader[] = ['X-Request-Id']
  const security: Record<string, string[]>[] = operation.security ?? []
  const authenticated = security.some((requirement) => BEARER in requirement)
  // Counted once the key is known: every answer but the one that refuses the key.
  if (authenticated && status !== '401') headers.push('RateLimit-Policy', 'RateLimit')
  if (status === '429') headers.push('Retry-After')
  if (status === '401') headers.push('WWW-Authenticate')
  const parameters: Document[] = operation.parameters ?? []
  const idempotent = parameters.some(
    (parameter) => parameter.in === 'header' && parameter.name.toLowerCase() === 'idempotency-key',
  )
  if (idempotent) headers.push('Idempotent-Replayed')
  return headers
}

/**
 * Adds the common headers to every response of every operation of the document, as
 * references to `components.headers`. Used as @fastify/swagger's transformObject.
 */
export function declareCommonResponseHeaders(document: Document): Document {
  document.components = { ...document.components, headers: { ...COMMON_RESPONSE_HEADERS } }
  for (const item of Object.values<Document>(document.paths ?? {})) {
    for (const method of METHODS) {
      const operation = item[method]
      if (!operation) continue
      for (const [status, response] of Object.entries<Document>(operation.responses ?? {})) {
        const common = Object.fromEntries(
          headersOf(operation, status).map((name) => [
            name,
            { $ref: `#/components/headers/${name}` },
          ]),
        )
        response.headers = { ...common, ...response.headers }
      }
    }
  }
  return document
}
