import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import { principalOf } from '../auth/auth.hook.js'
import { ProductPage } from '../catalog/catalog-records.schemas.js'
import type { Database } from '../db/database.js'
import {
  bodyErrors,
  dropContentTypeOfEmptyBody,
  IdempotencyHeaders,
  PREFIX,
  recordDelete,
  recordPatch,
  recordRead,
  sendRecord,
} from '../http/route-kit.js'
import { ErrorBody, withErrors } from '../http/schemas.js'
import { MERGE_PATCH_TYPE, prepareJsonBody } from '../http/validation.js'
import type { WriteRunner } from '../idempotency/write-runner.js'
import {
  addProductsWork,
  listCollectionProducts,
  moveProductWork,
  removeProductWork,
} from './collection-products.service.js'
import {
  AddProductsBody,
  CollectionIdParams,
  CollectionPage,
  CollectionProductParams,
  CollectionResponse,
  CreateCollectionBody,
  ListCollectionProductsQuery,
  ListCollectionsQuery,
  MoveProductBody,
  PreviewRulesBody,
  RulesPreviewResponse,
  TRIMMED_COLLECTION_FIELDS,
  UpdateCollectionBody,
} from './collection.schemas.js'
import {
  createCollectionWork,
  deleteCollectionWork,
  getCollection,
  listCollections,
  updateCollectionWork,
} from './collection.service.js'
import { previewRules } from './rules-preview.service.js'

const TAGS = ['collections']

/** The routes of part 4's collections: the records, then their products. */
export function registerCollectionRoutes(
  app: FastifyInstance,
  database: Database,
  runWrite: WriteRunner,
): void {
  const routes = app.withTypeProvider<TypeBoxTypeProvider>()
  const prepareBody = prepareJsonBody({ trimmed: TRIMMED_COLLECTION_FIELDS })
  const preparePatch = prepareJsonBody({ trimmed: TRIMMED_COLLECTION_FIELDS, mergePatch: true })
  const collectionErrors = withErrors({ 200: CollectionResponse, 404: ErrorBody, ...bodyErrors })

  routes.post(
    `${PREFIX}/collections`,
    {
      config: { scope: 'write' },
      preValidation: prepareBody,
      schema: {
        operationId: 'createCollection',
        tags: TAGS,
        summary: 'Create a collection: manual, or smart with rules',
        description:
          'Without `rules` (or with `null`) the collection is manual; with 1 to 60 rules it is ' +
          'smart, and holds exactly the products its rules match from then on. The kind never ' +
          'changes. The handle is made from the title when not sent (suffixed on a collision); ' +
          'one set by hand that another collection has is 409 `duplicate_handle`. At most ' +
          '5,000 collections per store.',
        headers: IdempotencyHeaders,
        body: CreateCollectionBody,
        response: withErrors({ 200: CollectionResponse, ...bodyErrors }),
      },
    },
    async (request, reply) =>
      await runWrite(request, reply, (storeId) => createCollectionWork(storeId, request.body)),
  )

  routes.post(
    `${PREFIX}/collections/preview`,
    {
      config: { scope: 'read' },
      preValidation: prepareBody,
      schema: {
        operationId: 'previewCollectionRules',
        tags: TAGS,
        summary: 'Count the products that smart rules match, without saving anything',
        description:
          'The rules are checked as a create or a PATCH of a smart collection checks them ' +
          '(the same 400s, each named `rules[i].field`, `.relation` or `.value`) and matched ' +
          'as its members would be; the answer is the rules as they would be stored and how ' +
          'many products of the store they match now. Nothing is written and no event is ' +
          'appended, so a `read` key may ask. For a rule editor that shows the count before ' +
          'the collection is saved.',
        body: PreviewRulesBody,
        response: withErrors({
          200: RulesPreviewResponse,
          400: ErrorBody,
          413: ErrorBody,
          415: ErrorBody,
        }),
      },
    },
    async (request) => ({
      data: await previewRules(database, principalOf(request).storeId, request.body),
    }),
  )

  routes.get(
    `${PREFIX}/collections`,
    {
      config: { scope: 'read' },
      schema: {
        operationId: 'listCollections',
        tags: TAGS,
        summary: 'Collections, newest first, a page at a time',
        querystring: ListCollectionsQuery,
        response: withErrors({ 200: CollectionPage, 400: ErrorBody }),
      },
    },
    async (request) => listCollections(database, principalOf(request).storeId, request.query),
  )

  routes.get(
    `${PREFIX}/collections/:id`,
    recordRead({
      operationId: 'getCollection',
      tags: TAGS,
      summary: 'A collection',
      params: CollectionIdParams,
      record: CollectionResponse,
    }),
    async (request, reply) =>
      sendRecord(
        request,
        reply,
        await getCollection(database, principalOf(request).storeId, request.params.id),
      ),
  )

  routes.patch(
    `${PREFIX}/collections/:id`,
    recordPatch({
      operationId: 'updateCollection',
      tags: TAGS,
      summary: 'Change a collection (JSON Merge Patch)',
      description:
        'A change of `rules` or `disjunctive` recomputes the members before the answer. ' +
        '`rules` on a manual collection, or `null` on a smart one, is 400. With `If-Match`, ' +
        'the change is made only on that version (412 `precondition_failed`).',
      params: CollectionIdParams,
      body: UpdateCollectionBody,
      record: CollectionResponse,
      preValidation: preparePatch,
    }),
    async (request, reply) =>
      await runWrite(request, reply, (storeId) =>
        updateCollectionWork(storeId, request.params.id, request.body, request.headers['if-match']),
      ),
  )

  routes.delete(
    `${PREFIX}/collections/:id`,
    recordDelete({
      operationId: 'deleteCollection',
      tags: TAGS,
      summary: 'Delete a collection; its products stay',
      params: CollectionIdParams,
    }),
    async (request, reply) =>
      await runWrite(request, reply, (storeId) =>
        deleteCollectionWork(storeId, request.params.id, request.headers['if-match']),
      ),
  )

  routes.get(
    `${PREFIX}/collections/:id/products`,
    {
      config: { scope: 'read' },
      schema: {
        operationId: 'listCollectionProducts',
        tags: TAGS,
        summary: "A collection's products in its sort order, a page at a time",
        params: CollectionIdParams,
        querystring: ListCollectionProductsQuery,
        response: withErrors({ 200: ProductPage, 400: ErrorBody, 404: ErrorBody }),
      },
    },
    async (request) =>
      listCollectionProducts(
        database,
        principalOf(request).storeId,
        request.params.id,
        request.query,
      ),
  )

  routes.post(
    `${PREFIX}/collections/:id/products`,
    {
      config: { scope: 'write' },
      preValidation: prepareBody,
      schema: {
        operationId: 'addCollectionProducts',
        tags: TAGS,
        summary: 'Append products to a manual collection',
        description:
          'In the order sent; products already in stay where they are. 409 `smart_collection` ' +
          'on a smart collection.',
        params: CollectionIdParams,
        headers: IdempotencyHeaders,
        body: AddProductsBody,
        response: collectionErrors,
      },
    },
    async (request, reply) =>
      await runWrite(request, reply, (storeId) =>
        addProductsWork(storeId, request.params.id, request.body),
      ),
  )

  routes.patch(
    `${PREFIX}/collections/:id/products/:productId`,
    {
      config: { scope: 'write' },
      preValidation: preparePatch,
      schema: {
        operationId: 'moveCollectionProduct',
        tags: TAGS,
        summary: 'Move a product of a manual collection',
        params: CollectionProductParams,
        headers: IdempotencyHeaders,
        consumes: ['application/json', MERGE_PATCH_TYPE],
        body: MoveProductBody,
        response: collectionErrors,
      },
    },
    async (request, reply) =>
      await runWrite(request, reply, (storeId) =>
        moveProductWork(storeId, request.params.id, request.params.productId, request.body),
      ),
  )

  routes.delete(
    `${PREFIX}/collections/:id/products/:productId`,
    {
      config: { scope: 'write' },
      onRequest: dropContentTypeOfEmptyBody,
      schema: {
        operationId: 'removeCollectionProduct',
        tags: TAGS,
        summary: 'Remove a product from a manual collection',
        params: CollectionProductParams,
        headers: IdempotencyHeaders,
        response: collectionErrors,
      },
    },
    async (request, reply) =>
      await runWrite(request, reply, (storeId) =>
        removeProductWork(storeId, request.params.id, request.params.productId),
      ),
  )
}
