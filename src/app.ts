import { randomUUID } from 'node:crypto'
import { ServerResponse, type IncomingMessage } from 'node:http'
import type { Socket } from 'node:net'
import Fastify, {
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  type FastifyServerOptions,
} from 'fastify'
import { registerAdminRoutes } from './admin/admin.routes.js'
import { registerAuth } from './auth/auth.hook.js'
import { registerMeRoute } from './auth/me.routes.js'
import { registerCatalogRoutes } from './catalog/catalog.routes.js'
import { registerSearchRoutes } from './search/search.routes.js'
import { registerCollectionRoutes } from './collections/collection.routes.js'
import { registerMetafieldDefinitionRoutes } from './attributes/metafield-definition.routes.js'
import type { Database } from './db/database.js'
import { AppError } from './errors.js'
import { registerEventRoutes } from './events/event.routes.js'
import { registerHealthRoutes } from './health.routes.js'
import { createWriteRunner } from './idempotency/write-runner.js'
import { createImportJobs, type ImportJobs } from './import/import-jobs.js'
import { registerImportRoutes } from './import/import.routes.js'
import { methodNotAllowed, recordAllowedMethods } from './http/allowed-methods.js'
import { sendError } from './http/error-handler.js'
import { answerClientError } from './http/client-error.js'
import { parseJsonBody } from './http/json-body.js'
import { registerOpenApi } from './http/openapi.js'
import { PREFIX } from './http/route-kit.js'
import { createValidatorCompiler, MERGE_PATCH_TYPE } from './http/validation.js'
import { ABORTED, createMetrics } from './observability/metrics.js'
import type { Registry } from 'prom-client'
import { registerMetricsRoute } from './observability/metrics.routes.js'
import { logAbortedRequest, logRequest, RequestLogController } from './observability/request-log.js'
import { requestLoggerFactory } from './observability/request-logger.js'
import { routeLabel } from './observability/route-label.js'
import {
  createRateLimiter,
  enforceRateLimit,
  type RateLimitOptions,
} from './rate-limit/rate-limit.hook.js'
import type { Resolver } from './webhooks/address-guard.js'
import { registerWebhookEndpointRoutes } from './webhooks/webhook-endpoint.routes.js'

export interface AppOptions {
  database: Database
  /** Fastify's logger option: false (tests), or pino options. */
  logger?: FastifyServerOptions['logger']
  bodyLimit?: number
  /** Longest time to receive a whole request, headers and body; then 408. */
  requestTimeoutMs?: number
  /** Longest time to receive a request's headers; then 408. At most requestTimeoutMs. */
  headersTimeoutMs?: number
  /** Longest silence on a connection while a request is open (either way); then it is closed. */
  connectionTimeoutMs?: number
  /** How long an idle keep-alive connection is kept open between requests. */
  keepAliveTimeoutMs?: number
  /** Largest request line and headers together, in bytes; larger is 431. */
  headerLimit?: number
  /** How long a key's lookup may be reused when no change of keys has been seen. */
  keyCacheTtlMs?: number
  /** Bearer token that GET /metrics requires; without one, /metrics is open. */
  metricsToken?: string | undefined
  /** How long the answer to a request with an Idempotency-Key is replayed; 24 hours if unset. */
  idempotencyKeyTtlSeconds?: number
  /** Per API key; 6000 a minute, in memory, unless given. */
  rateLimit?: RateLimitOptions
  /** Webhook endpoints' URL checks; without it, private addresses are refused, names resolved by the system. */
  webhooks?: WebhookOptions
  /**
   * The import jobs behind POST /imports, started and stopped by server.ts. Without them the
   * app makes its own (never started: no sweep of other processes' imports), stopped on close.
   */
  importJobs?: ImportJobs
  /** Largest body of POST /imports when the app makes its own import jobs; 64 MiB if unset. */
  importMaxBytes?: number
  /** Metrics of components beside the app (the webhook dispatcher), shown by GET /metrics too. */
  extraMetrics?: Registry[]
}

export interface WebhookOptions {
  /** WEBHOOK_ALLOW_PRIVATE: plain http:// and loopback or private addresses are allowed. */
  allowPrivate?: boolean
  /** Resolves endpoint URLs' host names; tests inject one. */
  resolve?: Resolver
}

export const DEFAULT_IMPORT_MAX_BYTES = 64 * 1024 * 1024

const DEFAULT_RATE_LIMIT_PER_MINUTE = 6000

const CLIENT_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/

/** A client's own request id when it is sane, else a new one. */
function requestId(request: IncomingMessage): string {
  const sent = request.headers['x-request-id']
  return typeof sent === 'string' && CLIENT_REQUEST_ID.test(sent) ? sent : randomUUID()
}

/** Builds the HTTP application from its dependencies. It reads no environment. */
export function buildApp(options: AppOptions): FastifyInstance {
  const { database } = options
  const metrics = createMetrics(database, options.extraMetrics)
  // Requests whose connection closed before their answer: observed once, as aborted.
  const aborted = new WeakSet<FastifyRequest>()
  const observe = (request: FastifyRequest, reply: FastifyReply) => {
    if (aborted.has(request)) return
    const route = routeLabel(request)
    metrics.recordResponse(request, reply, route)
    logRequest(request, reply, route)
  }
  const observeAbort = (request: FastifyRequest, reply: FastifyReply) => {
    // Ended: the whole answer was handed to the connection (light-my-request never finishes).
    if (reply.raw.writableEnded) return
    aborted.add(request)
    const route = routeLabel(request)
    metrics.recordResponse(request, reply, route, ABORTED)
    logAbortedRequest(request, reply, route)
  }
  const requestTimeoutMs = options.requestTimeoutMs ?? 30_000
  const headersTimeoutMs = Math.min(options.headersTimeoutMs ?? 10_000, requestTimeoutMs)
  const app = Fastify({
    logger: options.logger ?? false,
    // Fastify's two info lines per request give way to one of ours, with the route and the key.
    logController: new RequestLogController(),
    // request.log becomes a pino child only when the request writes a line.
    childLoggerFactory: requestLoggerFactory,
    bodyLimit: options.bodyLimit ?? 256 * 1024,
    requestTimeout: requestTimeoutMs,
    connectionTimeout: options.connectionTimeoutMs ?? 60_000,
    keepAliveTimeout: options.keepAliveTimeoutMs ?? 72_000,
    http: {
      headersTimeout: headersTimeoutMs,
      maxHeaderSize: options.headerLimit ?? 16 * 1024,
      // Node looks for expired requests every 30 s unless told otherwise, which would let a
      // slow client hold a connection up to 30 s past its timeout.
      connectionsCheckingInterval: Math.max(10, Math.min(1000, Math.floor(headersTimeoutMs / 4))),
      // Node would answer an HTTP/1.1 request without a Host header itself, without an
      // X-Request-Id or the contract's body: the onRequest hook below refuses it instead.
      requireHostHeader: false,
    },
    clientErrorHandler: answerClientError,
    requestIdHeader: false,
    genReqId: requestId,
    // Requests refused before routing (a malformed URL) run no hooks: they are observed here.
    frameworkErrors: (error, request, reply) => {
      sendError(error, request, reply)
      observe(request, reply)
    },
    // Requests that arrive while closing get the contract's 503 from the hook below instead.
    return503OnClosing: false,
  })
  // Recorded from the first route on: the Allow header of a 405 lists every method of a path.
  const allowedMethods = recordAllowedMethods(app)
  // Node answers an Expect other than 100-continue with a bare 417 of its own; RFC 9110 lets
  // a server ignore such an expectation, so the request is served as if it had none.
  app.server.on('checkExpectation', (request, response) =>
    app.server.emit('request', request, response),
  )
  // Node drops a CONNECT request's connection without an answer when nothing takes it: the
  // app answers it like any request (no route takes CONNECT: 404), then closes.
  app.server.on('connect', (request: IncomingMessage, socket: Socket) => {
    // Node has taken its own listener off this socket: a client's reset must not go unheard.
    socket.on('error', () => socket.destroy())
    const response = new ServerResponse(request)
    response.shouldKeepAlive = false
    response.assignSocket(socket)
    response.once('finish', () => socket.destroySoon())
    app.server.emit('request', request, response)
  })
  // JSON is the only body the API reads: anything else is 415, not a string to validate.
  app.removeAllContentTypeParsers()
  app.addContentTypeParser('application/json', { parseAs: 'string' }, parseJsonBody)
  // PATCH takes a JSON Merge Patch under its own media type too; other routes refuse it.
  app.addContentTypeParser(MERGE_PATCH_TYPE, { parseAs: 'string' }, parseJsonBody)
  app.setValidatorCompiler(createValidatorCompiler())
  // The mappers build each answer in its schema's shape, and the tests check every answer
  // against the document, closed to undeclared fields. On Node 20, JSON.stringify writes a
  // product with its variants in less CPU than fast-json-stringify: see docs/decisions/0018-openapi-generated-from-routes.md.
  app.setSerializerCompiler(() => (payload) => JSON.stringify(payload))
  app.setErrorHandler((error: FastifyError, request, reply) => {
    // A QUERY without a Content-Type is refused before it reaches the not-found handler; to a
    // known path (no route takes QUERY) it is a method the path does not take, as with one.
    const refused =
      error.code === 'FST_ERR_ROUTE_MISSING_CONTENT_TYPE'
        ? methodNotAllowed(allowedMethods, request, reply)
        : undefined
    sendError(refused ?? error, request, reply)
  })
  // Routing comes first: a known path with a method it does not take is 405, even without a key.
  app.setNotFoundHandler((request, reply) =>
    sendError(
      methodNotAllowed(allowedMethods, request, reply) ??
        new AppError('not_found', `No route for ${request.method} ${request.url}.`),
      request,
      reply,
    ),
  )
  let closing = false
  app.addHook('preClose', async () => {
    closing = true
  })
  // Hooks on the path of every request take a callback: an async one costs a promise and a
  // turn of the microtask queue per request.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id)
    // 'close' comes once the answer is sent, or when the connection closes before that.
    reply.raw.once('close', () => observeAbort(request, reply))
    if (request.raw.httpVersion === '1.1' && request.headers.host === undefined) {
      reply.header('connection', 'close')
      return done(new AppError('bad_request', 'An HTTP/1.1 request needs a Host header.'))
    }
    if (closing) {
      reply.header('connection', 'close')
      return done(new AppError('unavailable', 'The service is shutting down; retry shortly.'))
    }
    done()
  })
  app.addHook('onResponse', (request, reply, done) => {
    observe(request, reply)
    done()
  })
  app.addHook('onClose', (_app, done) => {
    metrics.close()
    done()
  })
  registerOpenApi(app)
  const rateLimiter = createRateLimiter(
    options.rateLimit ?? { perMinute: DEFAULT_RATE_LIMIT_PER_MINUTE },
    app.log,
  )
  if (rateLimiter) {
    app.addHook('onReady', () => rateLimiter.ready())
    app.addHook('onClose', () => rateLimiter.close())
  }
  registerAuth(app, database, {
    keyCacheTtlMs: options.keyCacheTtlMs ?? 10_000,
    ...(rateLimiter && {
      onAuthenticated: (principal, reply) => enforceRateLimit(rateLimiter, principal, reply),
    }),
  })
  let importJobs = options.importJobs
  if (!importJobs) {
    const own = createImportJobs(database, {
      maxBytes: options.importMaxBytes ?? DEFAULT_IMPORT_MAX_BYTES,
      onError: (error) => app.log.error({ err: error }, 'import failed'),
    })
    app.addHook('onClose', () => own.stop())
    importJobs = own
  }
  const jobs = importJobs
  const idempotencyKeyTtlSeconds = options.idempotencyKeyTtlSeconds ?? 24 * 60 * 60
  // Declared in a plugin, so that they come after the OpenAPI plugin has loaded and it sees them.
  app.register(async (routes) => {
    registerHealthRoutes(routes, database)
    registerMetricsRoute(routes, metrics, { token: options.metricsToken })
    registerMeRoute(routes, PREFIX)
    registerCatalogRoutes(routes, database, { idempotencyKeyTtlSeconds })
    registerSearchRoutes(routes, database)
    registerCollectionRoutes(
      routes,
      database,
      createWriteRunner(database, idempotencyKeyTtlSeconds),
    )
    registerEventRoutes(routes, database, PREFIX)
    registerMetafieldDefinitionRoutes(
      routes,
      database,
      createWriteRunner(database, idempotencyKeyTtlSeconds),
    )
    registerWebhookEndpointRoutes(routes, database, {
      idempotencyKeyTtlSeconds,
      urls: {
        allowPrivate: options.webhooks?.allowPrivate ?? false,
        ...(options.webhooks?.resolve && { resolve: options.webhooks.resolve }),
      },
    })
    // The admin page: static files, a client of the routes above like any other.
    registerAdminRoutes(routes)
    registerImportRoutes(routes, database, jobs, { idempotencyKeyTtlSeconds })
  })
  return app
}
