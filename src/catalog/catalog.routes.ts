import type { FastifyInstance } from 'fastify'
import type { Database } from '../db/database.js'
import { registerProductRoutes } from './product.routes.js'
import { createWriteRunner } from './route-kit.js'
import { registerVariantRoutes } from './variant.routes.js'

// The route kit's pieces, where the webhooks' routes take them from.
export {
  bodyErrors,
  conditionalWriteResponses,
  createWriteRunner,
  dropContentTypeOfEmptyBody,
  PREFIX,
  sendRecord,
  type WriteRunner,
} from './route-kit.js'

export function registerCatalogRoutes(
  app: FastifyInstance,
  database: Database,
  options: { idempotencyKeyTtlSeconds: number },
): void {
  const runWrite = createWriteRunner(database, options.idempotencyKeyTtlSeconds)
  registerProductRoutes(app, database, runWrite)
  registerVariantRoutes(app, database, runWrite)
}
