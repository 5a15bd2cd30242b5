import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { principalOf } from '../auth/auth.hook.js'
import type { Database } from '../db/database.js'
import { validationFailed } from '../errors.js'
import { toAppError } from '../http/error-handler.js'
import {
  bodyErrors,
  DeletedResponse,
  dropContentTypeOfEmptyBody,
  IdempotencyHeaders,
  PREFIX,
} from '../http/route-kit.js'
import { ErrorBody, withErrors } from '../http/schemas.js'
import { MERGE_PATCH_TYPE, prepareJsonBody } from '../http/validation.js'
import { createWriteRunner } from '../idempotency/write-runner.js'
import {
  CreatedWebhookEndpointResponse,
  CreateWebhookEndpointBody,
  EndpointIdParams,
  TRIMMED_ENDPOINT_FIELDS,
  UpdateWebhookEndpointBody,
  WebhookEndpointList,
  WebhookEndpointResponse,
} from './webhook-endpoint.schemas.js'
import {
  createEndpointWork,
  deleteEndpointWork,
  endpointInputProblems,
  getEndpoint,
  listEndpoints,
  MAX_ENDPOINTS_PER_STORE,
  updateEndpointWork,
} from './webhook-endpoint.service.js'
import type { WebhookUrlOptions } from './webhook-url.js'
import {
  DeliveryIdParams,
  DeliveryPage,
  DeliveryResponse,
  ListDeliveriesQuery,
} from './delivery.schemas.js'
import { listDeliveries, retryDeliveryWork } from './delivery.service.js'
import { deliveriesDue, webhookEndpointsChanged } from './wakeup.js'

export interface WebhookRouteOptions {
  idempotencyKeyTtlSeconds: number
  /** How endpoint URLs are checked: WEBHOOK_ALLOW_PRIVATE, and the resolver (tests inject one). */
  urls: WebhookUrlOptions
}

/** The writes' answers when the endpoint is named by the path. */
const writeResponses = { 404: ErrorBody, ...bodyErrors }

/**
 * Routes of webhook endpoints, scope `write` for all (reading them shows where a store's
 * events go). Writes run as the catalogue's do: one unit of work, Idempotency-Key honoured.
 */
export function registerWebhookEndpointRoutes(
  app: FastifyInstance,
  database: Database,
  options: WebhookRouteOptions,
): void {
  const routes = app.withTypeProvider<TypeBoxTypeProvider>()
  const runWrite = createWriteRunner(database, options.idempotencyKeyTtlSeconds)
  const prepareBody = prepareJsonBody({ trimmed: TRIMMED_ENDPOINT_FIELDS })
  const preparePatch = prepareJsonBody({ trimmed: TRIMMED_ENDPOINT_FIELDS, mergePatch: true })
  const path = `${PREFIX}/webhook-endpoints`

  routes.post(
    path,
    {
      config: { scope: 'write' },
      preValidation: prepareBody,
      attachValidation: true,
      schema: {
        operationId: 'createWebhookEndpoint',
        tags: ['webhooks'],
        summary: 'Subscribe a URL to events of the store',
        description:
          `Answers the endpoint with its signing \`secret\`, which no other answer shows. At most ` +
          `${MAX_ENDPOINTS_PER_STORE} endpoints per store (400 \`validation_failed\` beyond). ` +
          'The URL must be https:// and its host must resolve to public addresses only. ' +
          'From then on, every event of a subscribed type is POSTed to it, signed with the ' +
          'secret (Standard Webhooks), and retried on failure.',
        headers: IdempotencyHeaders,
        body: CreateWebhookEndpointBody,
        response: withErrors({ 200: CreatedWebhookEndpointResponse, ...bodyErrors }),
      },
    },
    async (request, reply) => {
      await checkEndpointRequest(request, options.urls)
      await runWrite(request, reply, (storeId) => createEndpointWork(storeId, request.body))
      webhookEndpointsChanged(database)
    },
  )

  routes.get(
    path,
    {
      config: { scope: 'write' },
      schema: {
        operationId: 'listWebhookEndpoints',
        tags: ['webhooks'],
        summary: "The store's webhook endpoints, oldest first",
        response: withErrors({ 200: WebhookEndpointList }),
      },
    },
    async (request) => ({
      data: await listEndpoints(database.kysely, principalOf(request).storeId),
    }),
  )

  routes.get(
    `${path}/:id`,
    {
      config: { scope: 'write' },
      schema: {
        operationId: 'getWebhookEndpoint',
        tags: ['webhooks'],
        summary: 'A webhook endpoint (without its secret)',
        params: EndpointIdParams,
        response: withErrors({ 200: WebhookEndpointResponse, 404: ErrorBody }),
      },
    },
    async (request) => ({
      data: await getEndpoint(database.kysely, principalOf(request).storeId, request.params.id),
    }),
  )

  routes.patch(
    `${path}/:id`,
    {
      config: { scope: 'write' },
      preValidation: preparePatch,
      attachValidation: true,
      schema: {
        operationId: 'updateWebhookEndpoint',
        tags: ['webhooks'],
        summary: 'Change a webhook endpoint (JSON Merge Patch)',
        description:
          'A field left out is unchanged; `url`, `events` (whole) and `enabled` replace the ' +
          'stored value; `description: null` clears it. The URL is checked as on create. A ' +
          'patch that changes nothing answers the endpoint as it is.',
        params: EndpointIdParams,
        headers: IdempotencyHeaders,
        consumes: ['application/json', MERGE_PATCH_TYPE],
        body: UpdateWebhookEndpointBody,
        response: withErrors({ 200: WebhookEndpointResponse, ...writeResponses }),
      },
    },
    async (request, reply) => {
      await checkEndpointRequest(request, options.urls)
      await runWrite(request, reply, (storeId) =>
        updateEndpointWork(storeId, request.params.id, request.body),
      )
      webhookEndpointsChanged(database)
    },
  )

  routes.delete(
    `${path}/:id`,
    {
      config: { scope: 'write' },
      onRequest: dropContentTypeOfEmptyBody,
      schema: {
        operationId: 'deleteWebhookEndpoint',
        tags: ['webhooks'],
        summary: 'Delete a webhook endpoint',
        description: 'It is sent nothing from then on, and every read of it is 404.',
        params: EndpointIdParams,
        headers: IdempotencyHeaders,
        response: withErrors({ 200: DeletedResponse, ...writeResponses }),
      },
    },
    async (request, reply) =>
      await runWrite(request, reply, (storeId) => deleteEndpointWork(storeId, request.params.id)),
  )

  routes.get(
    `${path}/:id/deliveries`,
    {
      config: { scope: 'write' },
      schema: {
        operationId: 'listWebhookDeliveries',
        tags: ['webhooks'],
        summary: "The endpoint's deliveries, newest first",
        description:
          'One delivery per event sent (or to be sent) to the endpoint, with its status and ' +
          'its attempts. Paged like the products: pass `nextCursor` as `cursor`.',
        params: EndpointIdParams,
        querystring: ListDeliveriesQuery,
        response: withErrors({ 200: DeliveryPage, 400: ErrorBody, 404: ErrorBody }),
      },
    },
    async (request) =>
      await listDeliveries(
        database.kysely,
        principalOf(request).storeId,
        request.params.id,
        request.query,
      ),
  )

  routes.post(
    `${path}/:id/deliveries/:deliveryId/retry`,
    {
      config: { scope: 'write' },
      onRequest: dropContentTypeOfEmptyBody,
      schema: {
        operationId: 'retryWebhookDelivery',
        tags: ['webhooks'],
        summary: 'Attempt a delivery once more, now',
        description:
          'The delivery becomes pending and due now, whatever its status; the dispatcher ' +
          'attempts it within about 2 s. A failed delivery whose attempt fails again stays ' +
          'failed (its retries are spent); a pending one goes on with its schedule.',
        params: DeliveryIdParams,
        headers: IdempotencyHeaders,
        response: withErrors({ 200: DeliveryResponse, ...writeResponses }),
      },
    },
    async (request, reply) => {
      await runWrite(request, reply, (storeId) =>
        retryDeliveryWork(storeId, request.params.id, request.params.deliveryId),
      )
      deliveriesDue(database)
    },
  )
}

/**
 * The validation of a create or a PATCH, in one answer: the schema's problems (attached to the
 * request by `attachValidation`) and endpointInputProblems' of the fields the schema passed, so
 * that `details` names every problem of the body. The body is checked before the headers
 * (Idempotency-Key), as everywhere.
 */
async function checkEndpointRequest(request: FastifyRequest, urls: WebhookUrlOptions) {
  const schemaError = request.validationError
  const bodyProblems =
    schemaError?.validationContext === 'body' ? (toAppError(schemaError).details ?? []) : []
  const badFields = new Set(bodyProblems.map((problem) => problem.field.split('.')[0]))
  const body = request.body as { url?: unknown; events?: unknown }
  const problems = badFields.has('body')
    ? bodyProblems
    : [
        ...bodyProblems,
        ...(await endpointInputProblems(
          {
            url: !badFields.has('url') && typeof body.url === 'string' ? body.url : undefined,
            events:
              !badFields.has('events') && Array.isArray(body.events) ? body.events : undefined,
          },
          urls,
        )),
      ]
  if (problems.length > 0) throw validationFailed(problems)
  if (schemaError) throw schemaError
}
