import { randomUUID } from 'node:crypto'
import type { IncomingMessage } from 'node:http'
import Fastify, {
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  type FastifyServerOptions,
} from 'fastify'
import { registerAuth } from './auth/auth.hook.js'
import { registerCatalogRoutes } from './catalog/catalog.routes.js'
import type { Database } from './db/database.js'
import { AppError } from './errors.js'
import { registerHealthRoutes } from './health.routes.js'
import { sendError } from './http/error-handler.js'
import { parseJsonBody } from './http/json-body.js'
import { registerOpenApi } from './http/openapi.js'
import { createValidatorCompiler } from './http/validation.js'
import { createMetrics } from './observability/metrics.js'
import { registerMetricsRoute } from './observability/metrics.routes.js'
import { logRequest, RequestLogController } from './observability/request-log.js'

export interface AppOptions {
  database: Database
  /** Fastify's logger option: false (tests), or pino options. */
  logger?: FastifyServerOptions['logger']
  bodyLimit?: number
  requestTimeoutMs?: number
  /** How long a key's lookup may be reused when no change of keys has been seen. */
  keyCacheTtlMs?: number
  /** Bearer token that GET /metrics requires; without one, /metrics is open. */
  metricsToken?: string | undefined
  /** How long the answer to a request with an Idempotency-Key is replayed; 24 hours if unset. */
  idempotencyKeyTtlSeconds?: number
}

const CLIENT_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/

/** A client's own request id when it is sane, else a new one. */
function requestId(request: IncomingMessage): string {
  const sent = request.headers['x-request-id']
  return typeof sent === 'string' && CLIENT_REQUEST_ID.test(sent) ? sent : randomUUID()
}

/** Builds the HTTP application from its dependencies. It reads no environment. */
export function buildApp(options: AppOptions): FastifyInstance {
  const { database } = options
  const metrics = createMetrics(database)
  const observe = (request: FastifyRequest, reply: FastifyReply) => {
    metrics.recordResponse(request, reply)
    logRequest(request, reply)
  }
  const app = Fastify({
    logger: options.logger ?? false,
    // Fastify's two info lines per request give way to one of ours, with the route and the key.
    logController: new RequestLogController(),
    bodyLimit: options.bodyLimit ?? 256 * 1024,
    requestTimeout: options.requestTimeoutMs ?? 30_000,
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
  // JSON is the only body the API reads: anything else is 415, not a string to validate.
  app.removeAllContentTypeParsers()
  app.addContentTypeParser('application/json', { parseAs: 'string' }, parseJsonBody)
  app.setValidatorCompiler(createValidatorCompiler())
  app.setErrorHandler((error, request, reply) => sendError(error, request, reply))
  app.setNotFoundHandler((request, reply) =>
    sendError(
      new AppError('not_found', `No route for ${request.method} ${request.url}.`),
      request,
      reply,
    ),
  )
  let closing = false
  app.addHook('preClose', async () => {
    closing = true
  })
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id)
    if (closing) {
      reply.header('connection', 'close')
      throw new AppError('unavailable', 'The service is shutting down; retry shortly.')
    }
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
  registerAuth(app, database, { keyCacheTtlMs: options.keyCacheTtlMs ?? 10_000 })
  // Outside the plugin below, so that the OpenAPI document leaves this operators' route out.
  registerMetricsRoute(app, metrics, { token: options.metricsToken })
  // Declared in a plugin, so that they come after the OpenAPI plugin has loaded and it sees them.
  app.register(async (routes) => {
    registerHealthRoutes(routes, database)
    registerCatalogRoutes(routes, database, {
      idempotencyKeyTtlSeconds: options.idempotencyKeyTtlSeconds ?? 24 * 60 * 60,
    })
  })
  return app
}
