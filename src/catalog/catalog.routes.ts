import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import { Type } from 'typebox'
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
  Product,
  ProductPage,
  ProductWithVariants,
  TRIMMED_FIELDS,
  Variant,
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
const bodyErrors = { 409: ErrorBody, 413: ErrorBody, 415: ErrorBody, 422: ErrorBody }

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
        summary: 'Create a base product, without variants',
        headers: IdempotencyHeaders,
        body: CreateProductBody,
        response: withErrors({ 200: Type.Object({ data: Product }), ...bodyErrors }),
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
        summary: 'Add a variant to a product',
        params: IdParams,
        headers: IdempotencyHeaders,
        body: CreateVariantBody,
        response: withErrors({ 200: Type.Object({ data: Variant }), ...bodyErrors }),
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
        summary: 'A product with its variants',
        params: IdParams,
        response: withErrors({ 200: Type.Object({ data: ProductWithVariants }) }),
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
        summary: "A product's variants, by position then creation",
        params: IdParams,
        response: withErrors({ 200: Type.Object({ data: Type.Array(Variant) }) }),
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
        summary: 'Products, newest first, a page at a time',
        querystring: ListProductsQuery,
        response: withErrors({ 200: ProductPage }),
      },
    },
    async (request) => listProducts(database, principalOf(request).storeId, request.query),
  )
}
