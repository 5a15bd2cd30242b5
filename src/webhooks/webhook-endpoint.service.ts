import type { Executor, WebhookEndpointRow } from '../db/schema.js'
import { isUuid, newId, nowIso, toIso } from '../db/values.js'
import { AppError, type FieldProblem } from '../errors.js'
import {
  ALL_EVENTS,
  type CreatedWebhookEndpoint,
  type CreateWebhookEndpointInput,
  type UpdateWebhookEndpointInput,
  type WebhookEndpoint,
} from './webhook-endpoint.schemas.js'
import {
  claimEndpointSlot,
  deleteEndpointRow,
  findEndpoint,
  findEndpointForUpdate,
  insertEndpoint,
  listEndpointRows,
  releaseEndpointSlot,
  updateEndpointRow,
  type EndpointChanges,
} from './webhook-endpoint.repository.js'
import { webhookUrlProblem, type WebhookUrlOptions } from './webhook-url.js'
import { newWebhookSecret } from './signature.js'
import type { Deleted, Work } from '../db/unit-of-work.js'

/** The most endpoints one store may have (the contract's limit). */
export const MAX_ENDPOINTS_PER_STORE = 16

/** Thrown when a path names an endpoint that does not exist in the caller's store. */
export function endpointNotFound(): AppError {
  return new AppError('not_found', 'No webhook endpoint with this id exists in your store.')
}

/**
 * The problems of a create or a PATCH that the schema cannot find, found before the unit of
 * work (resolving a host name must not hold a transaction open): the URL's rules
 * (webhook-url.ts), and `*` only alone in `events`. A field left undefined is not checked.
 */
export async function endpointInputProblems(
  input: { url?: string | undefined; events?: readonly unknown[] | undefined },
  options: WebhookUrlOptions,
): Promise<FieldProblem[]> {
  const problems: FieldProblem[] = []
  if (input.url !== undefined) {
    const problem = await webhookUrlProblem(input.url, options)
    if (problem !== undefined) problems.push({ field: 'url', message: problem })
  }
  if (input.events !== undefined && input.events.includes(ALL_EVENTS) && input.events.length > 1) {
    problems.push({
      field: 'events',
      message: `must be ["${ALL_EVENTS}"] alone or a list of event types`,
    })
  }
  return problems
}

export function createEndpointWork(
  storeId: string,
  input: CreateWebhookEndpointInput,
): Work<CreatedWebhookEndpoint> {
  const secret = newWebhookSecret()
  return async (db) => {
    if (!(await claimEndpointSlot(db, storeId, MAX_ENDPOINTS_PER_STORE))) {
      // The store's count is the problem, not a field: `body`, as for a body that is no object.
      throw new AppError(
        'validation_failed',
        `A store has at most ${MAX_ENDPOINTS_PER_STORE} webhook endpoints; delete one first.`,
        [
          {
            field: 'body',
            message: `the store already has ${MAX_ENDPOINTS_PER_STORE} endpoints, the most it may have`,
          },
        ],
      )
    }
    const row = await insertEndpoint(db, {
      storeId,
      id: newId(),
      url: input.url,
      events: input.events,
      description: emptyToNull(input.description),
      secret,
      createdAt: nowIso(),
    })
    return { ...rowToEndpoint(row), secret }
  }
}

/**
 * A JSON Merge Patch of an endpoint: a field sent replaces the stored value (`events` whole),
 * `description: null` clears it. A patch that changes nothing answers the endpoint as it is,
 * its updatedAt unchanged.
 */
export function updateEndpointWork(
  storeId: string,
  id: string,
  patch: UpdateWebhookEndpointInput,
): Work<WebhookEndpoint> {
  return async (db) => {
    if (!isUuid(id)) throw endpointNotFound()
    const row = await findEndpointForUpdate(db, storeId, id.toLowerCase())
    if (row === undefined) throw endpointNotFound()
    const current = rowToEndpoint(row)
    const changes: EndpointChanges = {}
    if (patch.url !== undefined && patch.url !== current.url) changes.url = patch.url
    if (patch.events !== undefined && !sameList(patch.events, current.events)) {
      changes.events = patch.events
    }
    if (patch.description !== undefined) {
      const description = emptyToNull(patch.description)
      if (description !== current.description) changes.description = description
    }
    if (patch.enabled !== undefined && patch.enabled !== current.enabled) {
      changes.enabled = patch.enabled
    }
    if (Object.keys(changes).length === 0) return current
    return rowToEndpoint(await updateEndpointRow(db, storeId, row.id, changes, nowIso()))
  }
}

export function deleteEndpointWork(storeId: string, id: string): Work<Deleted> {
  return async (db) => {
    if (!isUuid(id)) throw endpointNotFound()
    const lower = id.toLowerCase()
    if (!(await deleteEndpointRow(db, storeId, lower))) throw endpointNotFound()
    await releaseEndpointSlot(db, storeId)
    return { id: lower, deleted: true }
  }
}

export async function getEndpoint(
  db: Executor,
  storeId: string,
  id: string,
): Promise<WebhookEndpoint> {
  if (!isUuid(id)) throw endpointNotFound()
  const row = await findEndpoint(db, storeId, id.toLowerCase())
  if (row === undefined) throw endpointNotFound()
  return rowToEndpoint(row)
}

export async function listEndpoints(db: Executor, storeId: string): Promise<WebhookEndpoint[]> {
  return (await listEndpointRows(db, storeId)).map(rowToEndpoint)
}

/** The API's view of an endpoint: never its secret. */
export function rowToEndpoint(row: WebhookEndpointRow): WebhookEndpoint {
  return {
    id: row.id,
    url: row.url,
    events: (typeof row.events === 'string'
      ? JSON.parse(row.events)
      : row.events) as WebhookEndpoint['events'],
    description: row.description,
    enabled: row.enabled === true || row.enabled === 1,
    createdAt: toIso(row.created_at),
    updatedAt: toIso(row.updated_at),
  }
}

/** A description trimmed to nothing is no description. */
function emptyToNull(value: string | null | undefined): string | null {
  return value === undefined || value === null || value === '' ? null : value
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((item, i) => item === b[i])
}
