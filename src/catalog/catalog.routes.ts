import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import { principalOf } from '../auth/auth.hook.js'
import type { Database } from '../db/database.js'
import { ErrorBody, IdParams, withErrors } from '../http/schemas.js'
import { prepareJsonBody } from '../http/validation.js'
import { answerWith, IdempotencyHeaders, idempotentCall } from '../idempotency/idempotency.http.js'
import { createIdempotentWriter } from '../idempotency/idempotency.service.js'
import {
  CreateProductBody,
  CreateVariantBody,
  ListProductsQuery,
  ProductPage,
  ProductResponse,
  ProductWithVariantsResponse,
  TRIMMED_FIELDS,
  VariantListResponse,
  VariantResponse,
} from './catalog.schemas.js'
import {
  addVariant,
  addVariantWork,
  createProduct,
  createProductWork,
  getProduct,
  listProducts,
  listVariants,
} from './catalog.service.js'

const PREFIX = '/api/commerce/v1'

/** Errors a JSON body (and an Idempotency-Key) can add to a route's own. */
const bodyErrors = {
  400: ErrorBody,
  409: ErrorBody,
  413: ErrorBody,
  415: ErrorBody,
  422: ErrorBody,
}

export function registerCatalogRoutes(
  app: FastifyInstance,
  database: Database,
  options: { idempotencyKeyTtlSeconds: number },
): void {
  const routes = app.withTypeProvider<TypeBoxTypeProvider>()
  const prepareBody = prepareJsonBody(...TRIMMED_FIELDS)
  const idempotent = createIdempotentWriter(database, {
    ttlSeconds: options.idempotencyKeyTtlSeconds,
  })

  routes.post(
    `${PREFIX}/products`,
    {
      config: { scope: 'write' },
      preValidation: prepareBody,
      schema: {
        operationId: 'createProduct',
        tags: ['products'],
        summary: 'Create a base product, without variants',
        description:
          'The slug is made from the name and is unique in the store: on a collision it gets a ' +
          'suffix `-2`, `-3`, ... The status is `draft` when not sent. `null` for an optional ' +
          'field means the same as leaving it out.',
        headers: IdempotencyHeaders,
        body: CreateProductBody,
        response: withErrors({ 200: ProductResponse, ...bodyErrors }),
      },
    },
    async (request, reply) => {
      const storeId = principalOf(request).storeId
      const call = idempotentCall(request, storeId)
      if (call === undefined) return { data: await createProduct(database, storeId, request.body) }
      return answerWith(reply, await idempotent.run(call, createProductWork(storeId, request.body)))
    },
  )

  routes.post(
    `${PREFIX}/products/:id/variants`,
    {
      config: { scope: 'write' },
      preValidation: prepareBody,
      schema: {
        operationId: 'addVariant',
        tags: ['variants'],
        summary: 'Add a variant to a product',
        description:
          "The price defaults to the product's, the position to one more than the highest of " +
          "the product's variants. A `sku` is unique in the store (409 `duplicate_sku`); a " +
          'non-empty `options` set is unique in the product, in any key order ' +
          '(409 `duplicate_options`).',
        params: IdParams,
        headers: IdempotencyHeaders,
        body: CreateVariantBody,
        response: withErrors({ 200: VariantResponse, 404: ErrorBody, ...bodyErrors }),
      },
    },
    async (request, reply) => {
      const storeId = principalOf(request).storeId
      const { id } = request.params
      const call = idempotentCall(request, storeId)
      if (call === undefined) return { data: await addVariant(database, storeId, id, request.body) }
      return answerWith(
        reply,
        await idempotent.run(call, addVariantWork(storeId, id, request.body)),
      )
    },
  )

  routes.get(
    `${PREFIX}/products/:id`,
    {
      config: { scope: 'read' },
      schema: {
        operationId: 'getProduct',
        tags: ['products'],
        summary: 'A product with its variants',
        params: IdParams,
        response: withErrors({ 200: ProductWithVariantsResponse, 404: ErrorBody }),
      },
    },
    async (request) => ({
      data: await getProduct(database, principalOf(request).storeId, request.params.id),
    }),
  )

  routes.get(
    `${PREFIX}/products/:id/variants`,
    {
      config: { scope: 'read' },
      schema: {
        operationId: 'listVariants',
        tags: ['variants'],
        summary: "A product's variants, by position then creation",
        params: IdParams,
        response: withErrors({ 200: VariantListResponse, 404: ErrorBody }),
      },
    },
    async (request) => ({
      data: await listVariants(database, principalOf(request).storeId, request.params.id),
    }),
  )

  routes.get(
    `${PREFIX}/products`,
    {
      config: { scope: 'read' },
      schema: {
        operationId: 'listProducts',
        tags: ['products'],
        summary: 'Products, newest first, a page at a time',
        description:
          'Pass the `nextCursor` of a page as `cursor` for the next one, until it is `null`.',
        querystring: ListProductsQuery,
        response: withErrors({ 200: ProductPage, 400: ErrorBody }),
      },
    },
    async (request) => listProducts(database, principalOf(request).storeId, request.query),
  )
}
