import type { FastifyInstance } from 'fastify'
import { Type } from 'typebox'
import type { Database } from './db/database.js'
import { AppError } from './errors.js'
import { ErrorBody } from './http/schemas.js'

const Ok = Type.Object(
  { status: Type.Literal('ok') },
  { description: 'Up', examples: [{ status: 'ok' }] },
)

/** Liveness and readiness, for load balancers and orchestrators: no key needed. */
export function registerHealthRoutes(app: FastifyInstance, database: Database): void {
  app.get(
    '/healthz',
    {
      schema: {
        operationId: 'liveness',
        tags: ['health'],
        summary: 'Liveness: 200 while the process runs',
        response: { 200: Ok, 503: ErrorBody },
      },
    },
    async () => ({ status: 'ok' as const }),
  )
  app.get(
    '/readyz',
    {
      schema: {
        operationId: 'readiness',
        tags: ['health'],
        summary: 'Readiness: 200 when the database answers, else 503',
        response: { 200: Ok, 503: ErrorBody },
      },
    },
    async () => {
      try {
        await database.ping()
      } catch {
        throw new AppError('unavailable', 'The database does not answer.')
      }
      return { status: 'ok' as const }
    },
  )
}
