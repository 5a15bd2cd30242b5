import type { FastifyReply, FastifyRequest } from 'fastify'
import { principalOf } from '../auth/auth.hook.js'
import type { Database } from '../db/database.js'
import type { Executor } from '../db/schema.js'
import { sendWriteAnswer } from '../http/route-kit.js'
import { idempotentCall } from './idempotency.http.js'
import { createIdempotentWriter } from './idempotency.service.js'

/** Runs the unit of work of a write and sends its answer; see createWriteRunner. */
export type WriteRunner = <T>(
  request: FastifyRequest,
  reply: FastifyReply,
  work: (storeId: string) => (db: Executor) => Promise<T>,
) => Promise<void>

/**
 * Every write of the API's records goes through here: its unit of work runs in one
 * transaction (`database.write`), or, with an Idempotency-Key, in the transaction that keeps
 * the key's record. The answer carries the record's ETag.
 */
export function createWriteRunner(database: Database, ttlSeconds: number): WriteRunner {
  const idempotent = createIdempotentWriter(database, { ttlSeconds })
  return async (request, reply, work) => {
    const storeId = principalOf(request).storeId
    const unit = work(storeId)
    const call = idempotentCall(request, storeId)
    if (call !== undefined) return sendWriteAnswer(reply, await idempotent.run(call, unit))
    const data = await database.write(unit)
    return sendWriteAnswer(reply, { status: 200, body: { data }, replayed: false })
  }
}
