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
import { ErrorBody, withErrors } from '../http/schemas.js'
import { prepareJsonBody } from '../http/validation.js'
import type { WriteRunner } from '../idempotency/write-runner.js'
import {
  CreateDefinitionBody,
  DefinitionIdParams,
  DefinitionPage,
  DefinitionResponse,
  ListDefinitionsQuery,
  TRIMMED_DEFINITION_FIELDS,
  UpdateDefinitionBody,
} from './metafield-definition.schemas.js'
import { MAX_DEFINITIONS_PER_OWNER } from './values/metafield-value.schemas.js'
import {
  createDefinitionWork,
  deleteDefinitionWork,
  getDefinition,
  listDefinitions,
  updateDefinitionWork,
} from './metafield-definition.service.js'

/** Routes of custom attribute definitions: scope `write` for writes, `read` for reads. */
export function registerMetafieldDefinitionRoutes(
  app: FastifyInstance,
  database: Database,
  runWrite: WriteRunner,
): void {
  const routes = app.withTypeProvider<TypeBoxTypeProvider>()
  const prepareBody = prepareJsonBody({ trimmed: TRIMMED_DEFINITION_FIELDS })
  const preparePatch = prepareJsonBody({ trimmed: TRIMMED_DEFINITION_FIELDS, mergePatch: true })
  const path = `${PREFIX}/metafield-definitions`

  routes.post(
    path,
    {
      config: { scope: 'write' },
      preValidation: prepareBody,
      schema: {
        operationId: 'createMetafieldDefinition',
        tags: ['metafields'],
        summary: 'Define a custom attribute of products or variants',
        description:
          '`(owner, namespace, key)` is unique in the store (409 `duplicate_definition`). At ' +
          `most ${MAX_DEFINITIONS_PER_OWNER} definitions per owner per store. A validation ` +
          'that does not fit the type, or a `regex` that needs backtracking, is 400.',
        headers: IdempotencyHeaders,
        body: CreateDefinitionBody,
        response: withErrors({ 200: DefinitionResponse, ...bodyErrors }),
      },
    },
    async (request, reply) =>
      await runWrite(request, reply, (storeId) => createDefinitionWork(storeId, request.body)),
  )

  routes.get(
    path,
    {
      config: { scope: 'read' },
      schema: {
        operationId: 'listMetafieldDefinitions',
        tags: ['metafields'],
        summary: "The store's metafield definitions, newest first, a page at a time",
        querystring: ListDefinitionsQuery,
        response: withErrors({ 200: DefinitionPage, 400: ErrorBody }),
      },
    },
    async (request) =>
      listDefinitions(database.kysely, principalOf(request).storeId, request.query),
  )

  routes.get(
    `${path}/:id`,
    recordRead({
      operationId: 'getMetafieldDefinition',
      tags: ['metafields'],
      summary: 'A metafield definition',
      params: DefinitionIdParams,
      record: DefinitionResponse,
    }),
    async (request, reply) =>
      sendRecord(
        request,
        reply,
        await getDefinition(database.kysely, principalOf(request).storeId, request.params.id),
      ),
  )

  routes.patch(
    `${path}/:id`,
    recordPatch({
      operationId: 'updateMetafieldDefinition',
      tags: ['metafields'],
      summary: 'Change a metafield definition (JSON Merge Patch)',
      description:
        '`name`, `description`, `validations` (replaced whole), `filterable` and ' +
        '`searchable` may change; another `owner`, `namespace`, `key` or `type` is 400. ' +
        'Values already stored stay, even those the new validations would refuse.',
      params: DefinitionIdParams,
      body: UpdateDefinitionBody,
      record: DefinitionResponse,
      preValidation: preparePatch,
    }),
    async (request, reply) =>
      await runWrite(request, reply, (storeId) =>
        updateDefinitionWork(storeId, request.params.id, request.body, request.headers['if-match']),
      ),
  )

  routes.delete(
    `${path}/:id`,
    recordDelete({
      operationId: 'deleteMetafieldDefinition',
      tags: ['metafields'],
      summary: 'Delete a metafield definition and its values',
      description:
        'Its value is removed from every record, without an event per record and without ' +
        'moving their version or updatedAt.',
      params: DefinitionIdParams,
    }),
    async (request, reply) =>
      await runWrite(request, reply, (storeId) =>
        deleteDefinitionWork(storeId, request.params.id, request.headers['if-match']),
      ),
  )
}
