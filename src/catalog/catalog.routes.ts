import type { FastifyInstance } from 'fastify'
import type { Database } from '../db/database.js'
import { createWriteRunner } from '../idempotency/write-runner.js'
import { registerProductRoutes } from './product.routes.js'
import { registerVariantRoutes } from './variant.routes.js'

export function registerCatalogRoutes(
  app: FastifyInstance,
  database: Database,
  options: { idempotencyKeyTtlSeconds: number },
): void {
  const runWrite = createWriteRunner(database, options.idempotencyKeyTtlSeconds)
  registerProductRoutes(app, database, runWrite)
  registerVariantRoutes(app, database, runWrite)
}
