import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import { principalOf } from '../auth/auth.hook.js'
import type { Database } from '../db/database.js'
import { ErrorBody, withErrors } from '../http/schemas.js'
import { DEFAULT_EVENT_PAGE_SIZE, EventPage, ListEventsQuery } from './event.schemas.js'
import { listEvents } from './event.service.js'

export function registerEventRoutes(app: FastifyInstance, database: Database, prefix: string) {
  const routes = app.withTypeProvider<TypeBoxTypeProvider>()
  routes.get(
    `${prefix}/events`,
    {
      config: { scope: 'read' },
      schema: {
        operationId: 'listEvents',
        tags: ['events'],
        summary: "The store's change feed, oldest first, a page at a time",
        description:
          "Every committed change appends one event in its own transaction. Pass a page's " +
          '`nextCursor` as `after` to read on; it is never null, also on an empty page, so a ' +
          'reader polls with the last one it got. An event that commits after a page was read ' +
          'always comes after that page, never before its cursor: nothing is skipped. `type` ' +
          'keeps one type. Events are kept `EVENT_RETENTION_DAYS` (30 unless configured); a ' +
          'cursor before the kept events is 410 `cursor_expired`.',
        querystring: ListEventsQuery,
        response: withErrors({ 200: EventPage, 400: ErrorBody, 410: ErrorBody }),
      },
    },
    async (request) =>
      listEvents(database, principalOf(request).storeId, {
        after: request.query.after,
        limit: request.query.limit ?? DEFAULT_EVENT_PAGE_SIZE,
        type: request.query.type,
      }),
  )
}
