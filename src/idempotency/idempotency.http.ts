import { createHash } from 'node:crypto'
import type { FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import type { IdempotentCall } from './idempotency.service.js'

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

/** The Idempotency-Key call of a write request, or undefined when it was sent without one. */
export function idempotentCall(
  request: FastifyRequest,
  storeId: string,
): IdempotentCall | undefined {
  const key = request.headers['idempotency-key']
  if (typeof key !== 'string') return undefined
  const path = request.url.split('?', 1)[0]!
  return { storeId, key, fingerprint: requestFingerprint(request.method, path, request.body) }
}

/**
 * What makes a retry the same request: SHA-256 of the method, the path and the parsed body
 * (null for a DELETE, which has none) with its keys sorted, so the same JSON sent again matches however it was spaced or ordered.
 */
export function requestFingerprint(method: string, path: string, body: unknown): string {
  return createHash('sha256')
    .update(`${method} ${path}\n`)
    .update(JSON.stringify(body ?? null, sortedKeys))
    .digest('hex')
}

/** A JSON.stringify replacer that writes every object's keys in sorted order. */
function sortedKeys(_key: string, value: unknown): unknown {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value
  const sorted: Record<string, unknown> = {}
  for (const name of Object.keys(value).sort()) {
    sorted[name] = (value as Record<string, unknown>)[name]
  }
  return sorted
}
