import type { FastifyRequest } from 'fastify'
import { AppError, validationFailed, type FieldProblem } from '../errors.js'

/**
 * The JSON body parser. Unlike Fastify's, it tells an empty body from a malformed one, and
 * answers names and strings the service will not keep (see findRefusedString) as a
 * validation error naming the field, not as "invalid JSON".
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
  // A body that is not an object is refused whole by the route's schema (`body`), whatever
  // it holds.
  const refused =
    value !== null && typeof value === 'object' && !Array.isArray(value)
      ? findRefusedString(value)
      : undefined
  if (refused !== undefined) {
    done(validationFailed([refused]))
    return
  }
  done(null, value)
}

/**
 * A NUL character (PostgreSQL's text cannot hold one) or a lone surrogate (not Unicode: both
 * databases would store a replacement character, not what was sent). Valid JSON, both of them,
 * as `\u0000` and `\ud800` escapes.
 */
const UNSTORABLE = /[\u0000\p{Cs}]/u

/**
 * The first key or string of a parsed JSON value that is refused, walked without recursion:
 * a `__proto__` key (a prototype-pollution vector should any code ever merge bodies), or a
 * key or string with an unstorable character. Imports check their rows' values with it too.
 */
export function findRefusedString(root: unknown): FieldProblem | undefined {
  // `opaque`: inside a custom attribute's value (`metafields.<namespace>.<key>`), whose inner
  // names are not fields: a problem there is named by the attribute, as its other refusals are.
  const pending: { value: unknown; path: string; opaque?: boolean }[] = [{ value: root, path: '' }]
  for (let item = pending.pop(); item !== undefined; item = pending.pop()) {
    const { value, path, opaque } = item
    if (typeof value === 'string' && UNSTORABLE.test(value)) {
      return {
        field: path === '' ? 'body' : path,
        message: 'must not contain a NUL character or an unpaired surrogate',
      }
    }
    if (value === null || typeof value !== 'object') continue
    for (const [key, child] of Object.entries(value)) {
      const childPath = opaque ? path : path === '' ? key : `${path}.${key}`
      if (key === '__proto__') return { field: childPath, message: 'is not an allowed name' }
      // Named by its parent: the name itself would not survive the trip back.
      if (UNSTORABLE.test(key)) {
        return {
          field: path === '' ? 'body' : path,
          message: 'has a name with a NUL character or an unpaired surrogate',
        }
      }
      if (child !== null && (typeof child === 'object' || typeof child === 'string'))
        pending.push({ value: child, path: childPath, opaque: opaque || path === 'metafields' })
    }
  }
  return undefined
}
