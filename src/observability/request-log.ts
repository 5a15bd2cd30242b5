import type { FastifyReply, FastifyRequest } from 'fastify'
import { routeLabel } from './route-label.js'

/**
 * The one log line of a request, at info. Fastify's child logger adds `reqId`. Nothing of
 * the request's headers or query string is written: they may carry secrets.
 */
export function logRequest(request: FastifyRequest, reply: FastifyReply): void {
  const principal = request.principal
  request.log.info(
    {
      method: request.method,
      route: routeLabel(request),
      path: pathOf(request.url),
      status: reply.statusCode,
      latencyMs: Math.round(reply.elapsedTime * 100) / 100,
      store: principal?.storeId,
      keyId: principal?.keyId,
    },
    'request',
  )
}

function pathOf(url: string): string {
  const query = url.indexOf('?')
  return query === -1 ? url : url.slice(0, query)
}
