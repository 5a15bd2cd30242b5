import type { FastifyInstance } from 'fastify'
import type { Database } from './db/database.js'
import { AppError } from './errors.js'

/** Liveness and readiness, for load balancers and orchestrators: no key needed. */
export function registerHealthRoutes(app: FastifyInstance, database: Database): void {
  app.get('/healthz', async () => ({ status: 'ok' }))
  app.get('/readyz', async () => {
    try {
      await database.ping()
    } catch {
      throw new AppError('unavailable', 'The database does not answer.')
    }
    return { status: 'ok' }
  })
}
