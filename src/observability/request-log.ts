import { LogController, type FastifyReply, type FastifyRequest } from 'fastify'

/**
 * The one log line of a request, at info; `route` is its routeLabel. Fastify's child logger
 * adds `reqId`. Nothing of
 * the request's headers or query string is written: they may carry secrets.
 */
export function logRequest(request: FastifyRequest, reply: FastifyReply, route: string): void {
  const principal = request.principal
  request.log.info(
    {
      method: request.method,
      route,
      path: pathOf(request.url),
      status: reply.statusCode,
      latencyMs: Math.round(reply.elapsedTime * 100) / 100,
      store: principal?.storeId,
      keyId: principal?.keyId,
    },
    'request',
  )
}

/**
 * The one log line of a request whose connection closed before its answer was sent (a client
 * or a load balancer that gave up), at info, with the time it had run.
 */
export function logAbortedRequest(
  request: FastifyRequest,
  reply: FastifyReply,
  route: string,
): void {
  const principal = request.principal
  request.log.info(
    {
      method: request.method,
      route,
      path: pathOf(request.url),
      status: 'aborted',
      latencyMs: Math.round(reply.elapsedTime * 100) / 100,
      store: principal?.storeId,
      keyId: principal?.keyId,
    },
    'request aborted: the connection closed before the answer',
  )
}

/**
 * Fastify's own lines: no "request completed" (the line above replaces it), and "incoming
 * request" only at debug, to find a request that has arrived but not been answered.
 */
export class RequestLogController extends LogController {
  constructor() {
    super({ disableRequestLogging: true })
  }

  override incomingRequest(request: FastifyRequest): void {
    request.log.debug({ method: request.method, path: pathOf(request.url) }, 'incoming request')
  }
}

function pathOf(url: string): string {
  const query = url.indexOf('?')
  return query === -1 ? url : url.slice(0, query)
}
