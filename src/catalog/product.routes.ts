import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
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
import { IdParams, withErrors } from '../http/schemas.js'
import { prepareJsonBody } from '../http/validation.js'
import type { WriteRunner } from '../idempotency/write-runner.js'
import {
  CreateProductBody,
  TRIMMED_FIELDS,
  TRIMMED_LIST_FIELDS,
  UpdateProductBody,
} from './catalog.schemas.js'
import { ProductResponse, ProductWithVariantsResponse } from './catalog-records.schemas.js'
import { deleteProductWork, getProduct } from './product.service.js'
import { createProductWork } from './product-create-work.js'
import { updateProductWork } from './product-update-work.js'

export function registerProductRoutes(
  app: FastifyInstance,
  database: Database,
  runWrite: WriteRunner,
): void {
  const routes = app.withTypeProvider<TypeBoxTypeProvider>()
  const prepareBody = prepareJsonBody({
    trimmed: TRIMMED_FIELDS,
    trimmedLists: TRIMMED_LIST_FIELDS,
  })
  const preparePatch = prepareJsonBody({
    trimmed: TRIMMED_FIELDS,
    trimmedLists: TRIMMED_LIST_FIELDS,
    mergePatch: true,
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
    async (request, reply) =>
      await runWrite(request, reply, (storeId) => createProductWork(storeId, request.body)),
  )

  routes.get(
    `${PREFIX}/products/:id`,
    recordRead({
      operationId: 'getProduct',
      tags: ['products'],
      summary: 'A product with its variants',
      params: IdParams,
      record: ProductWithVariantsResponse,
    }),
    async (request, reply) =>
      sendRecord(
        request,
        reply,
        await getProduct(database, principalOf(request).storeId, request.params.id),
      ),
  )

  routes.patch(
    `${PREFIX}/products/:id`,
    recordPatch({
      operationId: 'updateProduct',
      tags: ['products'],
      summary: 'Change a product (JSON Merge Patch)',
      description:
        'A field left out is unchanged, a field sent replaces the stored value (`tags` and ' +
        '`images` whole), `null` clears it; `null` for `name`, `status`, `price` or `slug` is ' +
        'refused. Renaming keeps the slug; `slug` sets it (409 `duplicate_slug` when another ' +
        'product has it). Status changes: draft and active to each other or to archived, ' +
        'archived to draft (archived to active is 409 `invalid_transition`). A patch that ' +
        'changes nothing answers the product as it is, with the same version. With ' +
        '`If-Match`, the change is made only on that version (412 `precondition_failed`).',
      params: IdParams,
      body: UpdateProductBody,
      record: ProductResponse,
      preValidation: preparePatch,
    }),
    async (request, reply) =>
      await runWrite(request, reply, (storeId) =>
        updateProductWork(storeId, request.params.id, request.body, request.headers['if-match']),
      ),
  )

  routes.delete(
    `${PREFIX}/products/:id`,
    recordDelete({
      operationId: 'deleteProduct',
      tags: ['products'],
      summary: 'Delete a product and its variants',
      description:
        'Every read of the product and its variants is 404 from then on; their skus are free ' +
        'again. With `If-Match`, only that version is deleted (412 `precondition_failed`).',
      params: IdParams,
    }),
    async (request, reply) =>
      await runWrite(request, reply, (storeId) =>
        deleteProductWork(storeId, request.params.id, request.headers['if-match']),
      ),
  )
}
