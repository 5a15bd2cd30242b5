import type { FastifyRequest } from 'fastify'

/** The label of requests that matched no route: raw URLs would make a label per probe. */
export const UNMATCHED_ROUTE = 'unmatched'

/** The route pattern a request matched (`/api/commerce/v1/products/:id`), never its raw URL. */
export function routeLabel(request: FastifyRequest): string {
  return request.routeOptions.url ?? UNMATCHED_ROUTE
}
