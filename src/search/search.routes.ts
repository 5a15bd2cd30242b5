import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import { principalOf } from '../auth/auth.hook.js'
import { ProductPage } from '../catalog/catalog-records.schemas.js'
import type { Database } from '../db/database.js'
import { PREFIX } from '../http/route-kit.js'
import { ErrorBody, withErrors } from '../http/schemas.js'
import { ListProductsQuery } from './search.schemas.js'
import type { ListQuery } from './search-query.js'
import { listProducts } from './search.service.js'

/** GET /products: the product list, which is search (filters, facets, sorts, cursors). */
export function registerSearchRoutes(app: FastifyInstance, database: Database): void {
  const routes = app.withTypeProvider<TypeBoxTypeProvider>()
  routes.get(
    `${PREFIX}/products`,
    {
      config: { scope: 'read' },
      schema: {
        operationId: 'listProducts',
        tags: ['products'],
        summary: 'Products: search, filters, facets, in any sort, a page at a time',
        description:
          'Pass the `nextCursor` of a page as `cursor` for the next one, until it is `null`. ' +
          '`q` finds products holding each of its words (without case or accents; the last ' +
          'word also as a prefix) or a sku or barcode equal to it. The filters combine: ' +
          '`status`, `slug`, `vendor` and `product_type` compare exactly, `tag` and ' +
          '`option.<Name>` in any case, `price_min` and `price_max` inclusive, `collection` ' +
          'by id (an id of no collection matches nothing); a filter ' +
          'repeated means any of its values. `facets` adds exact counts, each facet counted ' +
          'over every filter but its own.',
        querystring: ListProductsQuery,
        response: withErrors({ 200: ProductPage, 400: ErrorBody }),
      },
    },
    async (request) =>
      listProducts(database, principalOf(request).storeId, request.query as ListQuery),
  )
}
