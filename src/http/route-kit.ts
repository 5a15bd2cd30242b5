import type { FastifyReply, FastifyRequest, preValidationAsyncHookHandler } from 'fastify'
import { Type, type TSchema } from 'typebox'
import {
  etagOf,
  IfMatchHeader,
  IfNoneMatchHeader,
  ifNoneMatchHits,
  NotModified,
} from './conditional.js'
import { ErrorBody, withErrors } from './schemas.js'
import { MERGE_PATCH_TYPE } from './validation.js'

/**
 * What the routes of the API share: the one prefix, the headers of a retried or conditional
 * request, the error sets of a body, and the read, PATCH and DELETE of one record with its
 * ETag (If-None-Match on the read, If-Match on the writes).
 */

/** Every route of the API but health, metrics, the docs and the admin page starts with this. */
export const PREFIX = '/api/commerce/v1'

/**
 * The headers of a write that may be retried safely. Headers arrive lowercased. A key is
 * 1 to 255 printable ASCII characters; spaces are allowed inside, not at either end.
 */
export const IdempotencyHeaders = Type.Object({
  'idempotency-key': Type.Optional(
    Type.String({
      // The pattern also refuses an empty key, with one message rather than two.
      maxLength: 255,
      pattern: '^[!-~]([ -~]*[!-~])?$',
      description:
        'Makes the request safe to retry: a retry with the same key (24 hours by default) ' +
        'gets the first answer again, with Idempotent-Replayed: true, and changes nothing. ' +
        '1 to 255 printable ASCII characters, e.g. a UUID.',
    }),
  ),
})

/** The headers of a write that may be retried and made conditional. */
export const ConditionalWriteHeaders = Type.Object({
  ...IdempotencyHeaders.properties,
  'if-match': IfMatchHeader,
})

export const ConditionalReadHeaders = Type.Object({ 'if-none-match': IfNoneMatchHeader })

/** Errors a JSON body (and an Idempotency-Key) can add to a route's own. */
export const bodyErrors = {
  400: ErrorBody,
  409: ErrorBody,
  413: ErrorBody,
  415: ErrorBody,
  422: ErrorBody,
}

/** The answers of a PATCH or DELETE: `ok`, or an error of the body, the record or If-Match. */
export function conditionalWriteResponses<T extends TSchema>(ok: T) {
  return withErrors({ 200: ok, 404: ErrorBody, 412: ErrorBody, ...bodyErrors })
}

/** The answer of a DELETE of one record. */
export const DeletedResponse = Type.Object(
  {
    data: Type.Object({
      id: Type.String({ format: 'uuid' }),
      deleted: Type.Literal(true),
    }),
  },
  {
    description: 'The record is deleted: every read of it is 404 from now on',
    examples: [{ data: { id: '019aa9a4-6f2e-7c41-9b0d-3f5e2a8c1d70', deleted: true } }],
  },
)

/** What the OpenAPI document says of a route. */
interface RouteDoc {
  operationId: string
  tags: string[]
  summary: string
  description?: string
}

/**
 * The options of `GET` one record (`record`, its response schema): scope `read`, answered
 * by sendRecord (its ETag, or 304 when If-None-Match names its version).
 */
export function recordRead<P extends TSchema, R extends TSchema>(
  doc: RouteDoc & { params: P; record: R },
) {
  const { params, record, ...text } = doc
  return {
    config: { scope: 'read' as const },
    schema: {
      ...text,
      params,
      headers: ConditionalReadHeaders,
      response: withErrors({ 200: record, 304: NotModified, 400: ErrorBody, 404: ErrorBody }),
    },
  }
}

/**
 * The options of a PATCH of one record (JSON or JSON Merge Patch, with If-Match): scope
 * `write`, its body prepared by `preValidation` (prepareJsonBody with mergePatch).
 */
export function recordPatch<P extends TSchema, B extends TSchema, R extends TSchema>(
  doc: RouteDoc & {
    params: P
    body: B
    record: R
    preValidation: preValidationAsyncHookHandler
  },
) {
  const { params, body, record, preValidation, ...text } = doc
  return {
    config: { scope: 'write' as const },
    preValidation,
    schema: {
      ...text,
      params,
      headers: ConditionalWriteHeaders,
      consumes: ['application/json', MERGE_PATCH_TYPE],
      body,
      response: conditionalWriteResponses(record),
    },
  }
}

/** The options of a DELETE of one record (with If-Match), answered by DeletedResponse. */
export function recordDelete<P extends TSchema>(doc: RouteDoc & { params: P }) {
  const { params, ...text } = doc
  return {
    config: { scope: 'write' as const },
    onRequest: dropContentTypeOfEmptyBody,
    schema: {
      ...text,
      params,
      headers: ConditionalWriteHeaders,
      response: conditionalWriteResponses(DeletedResponse),
    },
  }
}

/**
 * The onRequest hook of the DELETE routes. A DELETE has no body, but many clients send a
 * Content-Type (any, even an empty or malformed one) with every request: when no body comes
 * with it, it is dropped, so that the request is not refused for the type of a body it does
 * not have. A DELETE that does carry a body is parsed like any other.
 */
export async function dropContentTypeOfEmptyBody(request: FastifyRequest): Promise<void> {
  const { headers } = request
  const empty =
    headers['transfer-encoding'] === undefined &&
    (headers['content-length'] === undefined || headers['content-length'] === '0')
  if (empty) delete headers['content-type']
}

/**
 * The answer of a read of one record: `{"data": record}` with its ETag, or 304 without a
 * body when the request's If-None-Match names the record's version.
 */
export function sendRecord<Reply extends FastifyReply>(
  request: FastifyRequest,
  reply: Reply,
  record: { version: number },
): Reply {
  reply.header('etag', etagOf(record.version))
  if (ifNoneMatchHits(request.headers['if-none-match'], record.version)) {
    return reply.code(304).send() as Reply
  }
  return reply.send({ data: record }) as Reply
}

/**
 * The answer of a write: its status and body, Idempotent-Replayed when it is a stored answer
 * given again, and the record's ETag when the answer is one record with a version.
 */
export function sendWriteAnswer(
  reply: FastifyReply,
  answer: { status: number; body: unknown; replayed: boolean },
): void {
  if (answer.replayed) reply.header('idempotent-replayed', 'true')
  const version = (answer.body as { data?: { version?: unknown } }).data?.version
  if (answer.status === 200 && typeof version === 'number') reply.header('etag', etagOf(version))
  reply.code(answer.status).send(answer.body)
}
