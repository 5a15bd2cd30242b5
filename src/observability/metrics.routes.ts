import { createHash, timingSafeEqual } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import { AppError } from '../errors.js'
import { METRICS_TOKEN, textResponse } from '../http/openapi.js'
import { ErrorBody } from '../http/schemas.js'
import type { AppMetrics } from './metrics.js'

/** GET /metrics for Prometheus: open, or behind `Authorization: Bearer <token>` when one is set. */
export function registerMetricsRoute(
  app: FastifyInstance,
  metrics: AppMetrics,
  options: { token: string | undefined },
): void {
  const expected = options.token === undefined ? undefined : digest(options.token)
  const schema = {
    operationId: 'metrics',
    tags: ['operations'],
    summary: 'Metrics, in the Prometheus text format',
    description:
      'Requests by route and status with their durations, the database pool and group ' +
      'commit, webhook deliveries, and the process. Open unless the service was started ' +
      'with `METRICS_TOKEN`: then it needs `Authorization: Bearer <token>`. Not an API key ' +
      'route: no rate limit.',
    security: [{}, { [METRICS_TOKEN]: [] }] as Record<string, string[]>[],
    response: {
      200: textResponse('The metrics', metrics.contentType.split(';')[0]!),
      401: ErrorBody,
    },
  }
  app.get('/metrics', { schema }, async (request, reply) => {
    if (expected !== undefined) {
      const sent = /^Bearer +(\S+) *$/i.exec(request.headers.authorization ?? '')?.[1]
      // Digests have one length, so the comparison takes the same time whatever was sent.
      if (sent === undefined || !timingSafeEqual(digest(sent), expected)) {
        throw new AppError(
          'unauthorized',
          'Send the metrics token as Authorization: Bearer <token>.',
        )
      }
    }
    reply.type(metrics.contentType)
    return metrics.render()
  })
}

function digest(secret: string): Buffer {
  return createHash('sha256').update(secret).digest()
}
