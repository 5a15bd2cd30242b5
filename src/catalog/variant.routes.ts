import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import { Type } from 'typebox'
import { principalOf } from '../auth/auth.hook.js'
import type { Database } from '../db/database.js'
import {
  bodyErrors,
  IdempotencyHeaders,
  PREFIX,
  recordDelete,
  recordPatch,
  recordRead,
  sendRecord,
} from '../http/route-kit.js'
import { ErrorBody, IdParams, withErrors } from '../http/schemas.js'
import { prepareJsonBody } from '../http/validation.js'
import type { WriteRunner } from '../idempotency/write-runner.js'
import { CreateVariantBody, TRIMMED_FIELDS, UpdateVariantBody } from './catalog.schemas.js'
import { VariantListResponse, VariantResponse } from './catalog-records.schemas.js'
import { FindVariantsQuery } from './catalog.schemas.js'
import {
  addVariantWork,
  deleteVariantWork,
  findVariantsBySku,
  getVariant,
  listVariants,
  updateVariantWork,
} from './variant.service.js'

const VariantParams = Type.Object({
  id: Type.String({ description: 'Product id (UUID)' }),
  variantId: Type.String({ description: 'Variant id (UUID), of a variant of that product' }),
})

export function registerVariantRoutes(
  app: FastifyInstance,
  database: Database,
  runWrite: WriteRunner,
): void {
  const routes = app.withTypeProvider<TypeBoxTypeProvider>()
  const prepareBody = prepareJsonBody({ trimmed: TRIMMED_FIELDS })
  const preparePatch = prepareJsonBody({ trimmed: TRIMMED_FIELDS, mergePatch: true })

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
          "(409 `duplicate_options`). The product's version moves.",
        params: IdParams,
        headers: IdempotencyHeaders,
        body: CreateVariantBody,
        response: withErrors({ 200: VariantResponse, 404: ErrorBody, ...bodyErrors }),
      },
    },
    async (request, reply) =>
      await runWrite(request, reply, (storeId) =>
        addVariantWork(storeId, request.params.id, request.body),
      ),
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
    `${PREFIX}/products/:id/variants/:variantId`,
    recordRead({
      operationId: 'getVariant',
      tags: ['variants'],
      summary: 'One variant of a product',
      params: VariantParams,
      record: VariantResponse,
    }),
    async (request, reply) => {
      const { id, variantId } = request.params
      return sendRecord(
        request,
        reply,
        await getVariant(database, principalOf(request).storeId, id, variantId),
      )
    },
  )

  routes.patch(
    `${PREFIX}/products/:id/variants/:variantId`,
    recordPatch({
      operationId: 'updateVariant',
      tags: ['variants'],
      summary: 'Change a variant (JSON Merge Patch)',
      description:
        'A field left out is unchanged, a field sent replaces the stored value (`options` ' +
        'whole), `null` clears it; `null` for `name`, `price` or `position` is refused. The ' +
        "sku and options rules of a new variant hold. A real change moves the product's " +
        "version too. With `If-Match` (the variant's version), the change is made only on " +
        'that version (412 `precondition_failed`).',
      params: VariantParams,
      body: UpdateVariantBody,
      record: VariantResponse,
      preValidation: preparePatch,
    }),
    async (request, reply) => {
      const { id, variantId } = request.params
      await runWrite(request, reply, (storeId) =>
        updateVariantWork(storeId, id, variantId, request.body, request.headers['if-match']),
      )
    },
  )

  routes.delete(
    `${PREFIX}/products/:id/variants/:variantId`,
    recordDelete({
      operationId: 'deleteVariant',
      tags: ['variants'],
      summary: 'Delete a variant',
      description:
        "Its sku is free again; the product's next default position is one more than the " +
        "highest remaining, and its version moves. With `If-Match` (the variant's version), " +
        'only that version is deleted (412 `precondition_failed`).',
      params: VariantParams,
    }),
    async (request, reply) => {
      const { id, variantId } = request.params
      await runWrite(request, reply, (storeId) =>
        deleteVariantWork(storeId, id, variantId, request.headers['if-match']),
      )
    },
  )

  routes.get(
    `${PREFIX}/variants`,
    {
      config: { scope: 'read' },
      schema: {
        operationId: 'findVariants',
        tags: ['variants'],
        summary: 'The variant of the store with a sku',
        description: 'A list of the one variant with this sku (compared after trimming), or `[]`.',
        querystring: FindVariantsQuery,
        response: withErrors({ 200: VariantListResponse, 400: ErrorBody }),
      },
    },
    async (request) => ({
      data: await findVariantsBySku(database, principalOf(request).storeId, request.query.sku),
    }),
  )
}
