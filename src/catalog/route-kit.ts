import type { FastifyReply, FastifyRequest } from 'fastify'
import { principalOf } from '../auth/auth.hook.js'
import type { Database } from '../db/database.js'
import { etagOf, IfMatchHeader, IfNoneMatchHeader, ifNoneMatchHits } from '../http/conditional.js'
import { Type, type TSchema } from 'typebox'
import { ErrorBody, withErrors } from '../http/schemas.js'
import { IdempotencyHeaders, idempotentCall } from '../idempotency/idempotency.http.js'
import {
  createIdempotentWriter,
  type IdempotentAnswer,
} from '../idempotency/idempotency.service.js'
import type { Work } from './product.service.js'

/** What the catalogue's route files share: the prefix, error sets, headers, the write runner. */

export const PREFIX = '/api/commerce/v1'

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

/** Runs the unit of work of a write and sends its answer; see createWriteRunner. */
export type WriteRunner = <T>(
  request: FastifyRequest,
  reply: FastifyReply,
  work: (storeId: string) => Work<T>,
  options?: { atomic?: boolean },
) => Promise<void>

/**
 * Every write of the catalogue goes through here: its unit of work runs in one transaction
 * (`database.write`; `writeAtomic` for the creates, whose repository functions are atomic by
 * themselves on PostgreSQL), or, with an Idempotency-Key, in the transaction that keeps the
 * key's record. The answer carries the record's ETag.
 */
export function createWriteRunner(database: Database, ttlSeconds: number): WriteRunner {
  const idempotent = createIdempotentWriter(database, { ttlSeconds })
  return async (request, reply, work, options = {}) => {
    const storeId = principalOf(request).storeId
    const unit = work(storeId)
    const call = idempotentCall(request, storeId)
    if (call !== undefined) return sendAnswer(reply, await idempotent.run(call, unit))
    const data = await (options.atomic ? database.writeAtomic(unit) : database.write(unit))
    return sendAnswer(reply, { status: 200, body: { data }, replayed: false })
  }
}

function sendAnswer(reply: FastifyReply, answer: IdempotentAnswer): void {
  if (answer.replayed) reply.header('idempotent-replayed', 'true')
  const version = (answer.body as { data?: { version?: unknown } }).data?.version
  if (answer.status === 200 && typeof version === 'number') reply.header('etag', etagOf(version))
  reply.code(answer.status).send(answer.body)
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
