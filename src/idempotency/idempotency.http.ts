import { createHash } from 'node:crypto'
import type { FastifyRequest } from 'fastify'
import type { IdempotentCall } from './idempotency.service.js'

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
 * (null for a DELETE, which has none) with its keys sorted, so the same JSON sent again matches
 * however it was spaced or ordered.
 */
export function requestFingerprint(method: string, path: string, body: unknown): string {
  const parts: string[] = [`${method} ${path}\n`]
  writeCanonicalJson(body ?? null, parts)
  return createHash('sha256').update(parts.join('')).digest('hex')
}

/** Text written as it is, between the values on writeCanonicalJson's stack. */
class Literal {
  constructor(readonly text: string) {}
}

/**
 * Appends `value` (parsed JSON) to `out` as JSON.stringify would write it, but with every
 * object's keys in sorted order. With an explicit stack, not recursion: a body nested thousands of levels
 * deep in a field the API ignores (valid JSON, under the body limit) overflowed the call stack
 * of JSON.stringify with a replacer, a 500.
 */
function writeCanonicalJson(value: unknown, out: string[]): void {
  const stack: unknown[] = [value]
  while (stack.length > 0) {
    const item = stack.pop()
    if (item instanceof Literal) out.push(item.text)
    else if (item === null || typeof item !== 'object') out.push(JSON.stringify(item ?? null))
    else if (Array.isArray(item)) {
      stack.push(new Literal(']'))
      for (let i = item.length - 1; i >= 0; i--) {
        stack.push(item[i])
        if (i > 0) stack.push(new Literal(','))
      }
      stack.push(new Literal('['))
    } else {
      const object = item as Record<string, unknown>
      // In the order of an object built with its keys sorted, as the first form of the
      // fingerprint (JSON.stringify with such a replacer) wrote them, so that keys stored then
      // still match: integer-like keys come first there, in numeric order.
      const names = Object.keys(sortedObject(object))
      stack.push(new Literal('}'))
      for (let i = names.length - 1; i >= 0; i--) {
        stack.push(object[names[i]!])
        stack.push(new Literal(`${i > 0 ? ',' : ''}${JSON.stringify(names[i])}:`))
      }
      stack.push(new Literal('{'))
    }
  }
}

function sortedObject(object: Record<string, unknown>): Record<string, unknown> {
  const sorted: Record<string, unknown> = {}
  for (const name of Object.keys(object).sort()) sorted[name] = true
  return sorted
}
