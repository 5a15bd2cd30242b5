import type { FastifyRequest } from 'fastify'
import { AppError, validationFailed } from '../errors.js'

/**
 * The JSON body parser. Unlike Fastify's, it tells an empty body from a malformed one, and
 * answers a `__proto__` key (valid JSON, but a prototype-pollution vector should any code
 * ever merge bodies) as a validation error naming the field, not as "invalid JSON".
 */
export function parseJsonBody(
  _request: FastifyRequest,
  body: string,
  done: (error: Error | null, value?: unknown) => void,
): void {
  if (body.length === 0) {
    done(new AppError('invalid_json', 'The request body is empty.'))
    return
  }
  let value: unknown
  try {
    value = JSON.parse(body)
  } catch {
    done(new AppError('invalid_json', 'The request body is not valid JSON.'))
    return
  }
  const reserved = findProtoKey(value)
  if (reserved !== undefined) {
    done(validationFailed([{ field: reserved, message: 'is not an allowed name' }]))
    return
  }
  done(null, value)
}

/** The path of the first `__proto__` key in a parsed JSON value, walked without recursion. */
function findProtoKey(root: unknown): string | undefined {
  const pending: { value: unknown; path: string }[] = [{ value: root, path: '' }]
  for (let item = pending.pop(); item !== undefined; item = pending.pop()) {
    const { value, path } = item
    if (value === null || typeof value !== 'object') continue
    for (const [key, child] of Object.entries(value)) {
      const childPath = path === '' ? key : `${path}.${key}`
      if (key === '__proto__') return childPath
      if (child !== null && typeof child === 'object')
        pending.push({ value: child, path: childPath })
    }
  }
  return undefined
}
