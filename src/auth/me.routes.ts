import type { FastifyInstance } from 'fastify'
import { Type } from 'typebox'
import { withErrors } from '../http/schemas.js'
import { principalOf } from './auth.hook.js'
import { SCOPES } from '../http/scopes.js'

const Me = Type.Object(
  {
    data: Type.Object({
      keyId: Type.String({ description: "The key's id, as `catalog keys list` shows it" }),
      store: Type.String({ description: 'The store the key belongs to' }),
      scopes: Type.Array(Type.Union(SCOPES.map((scope) => Type.Literal(scope))), {
        description: 'What the key may do: `read`, `write` (which includes reading)',
      }),
    }),
  },
  { examples: [{ data: { keyId: '019a…', store: 'default', scopes: ['read', 'write'] } }] },
)

/** Who am I: the key's store and scopes, so that a client learns what it may do without trying. */
export function registerMeRoute(app: FastifyInstance, prefix: string): void {
  app.get(
    `${prefix}/me`,
    {
      // `write` includes `read`, so every valid key passes: any key may ask what it is.
      config: { scope: 'read' },
      schema: {
        operationId: 'getMe',
        tags: ['keys'],
        summary: "The calling key's store and scopes",
        response: withErrors({ 200: Me }),
      },
    },
    async (request) => {
      const { keyId, storeId, scopes } = principalOf(request)
      return { data: { keyId, store: storeId, scopes } }
    },
  )
}
