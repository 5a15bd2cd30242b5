import assert from 'node:assert/strict'
import type { LightMyRequestResponse } from 'fastify'
import type { Database } from '../src/db/database.js'

/** The error codes of the contract's table and of issue 4, and the status each is sent with. */
export const CONTRACT_ERRORS: Readonly<Record<string, number>> = {
  unauthorized: 401,
  forbidden: 403,
  invalid_json: 400,
  validation_failed: 400,
  not_found: 404,
  method_not_allowed: 405,
  duplicate_sku: 409,
  duplicate_options: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  unavailable: 503,
  internal_error: 500,
  // Issue 4's Idempotency-Key and rate limits.
  idempotency_key_in_use: 409,
  idempotency_key_reused: 422,
  rate_limited: 429,
  // Issue 14's updates and deletes.
  precondition_failed: 412,
  invalid_transition: 409,
  duplicate_slug: 409,
}

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
export const TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/

/**
 * Any answer of the API: never a 5xx, JSON, and for an error exactly the contract's body:
 * a code from its table sent with that code's status, a message, and `details` only on
 * validation_failed, each {field, message}.
 */
export function assertContractAnswer(response: LightMyRequestResponse, context: string): void {
  const label = `${context}: ${response.statusCode} ${response.body.slice(0, 500)}`
  assert.ok(response.statusCode < 500, `a 5xx answer, ${label}`)
  assert.match(String(response.headers['content-type']), /^application\/json\b/, label)
  const body = JSON.parse(response.body)
  assert.ok(body !== null && typeof body === 'object' && !Array.isArray(body), label)
  if (response.statusCode === 200) {
    assert.ok('data' in body, `a 200 without data, ${label}`)
    return
  }
  assert.equal(
    CONTRACT_ERRORS[body.error],
    response.statusCode,
    `not the contract's code, ${label}`,
  )
  assert.equal(typeof body.message, 'string', label)
  assert.ok(body.message.length > 0, label)
  const keys = Object.keys(body).sort()
  if (body.error === 'validation_failed') {
    assert.deepEqual(keys, ['details', 'error', 'message'], label)
    assert.ok(Array.isArray(body.details) && body.details.length > 0, label)
    for (const problem of body.details) {
      assert.deepEqual(Object.keys(problem).sort(), ['field', 'message'], label)
      assert.equal(typeof problem.field, 'string', label)
      assert.equal(typeof problem.message, 'string', label)
    }
  } else {
    assert.deepEqual(keys, ['error', 'message'], label)
  }
}

/**
 * Everything a write could change, in a few numbers: rows of every table, and the sums of the
 * counters that writes raise without adding rows. Equal before and after means nothing was
 * written.
 */
export async function writeFingerprint(database: Database): Promise<string> {
  const db = database.kysely
  const [products] = await db
    .selectFrom('products')
    .select((eb) => [
      eb.fn.countAll<number>().as('rows'),
      eb.fn.sum<number>('max_variant_position').as('positions'),
    ])
    .execute()
  const [variants] = await db
    .selectFrom('variants')
    .select((eb) => eb.fn.countAll<number>().as('rows'))
    .execute()
  const [counters] = await db
    .selectFrom('slug_counters')
    .select((eb) => [
      eb.fn.countAll<number>().as('rows'),
      eb.fn.sum<number>('claims').as('claims'),
      eb.fn.sum<number>('last_suffix').as('suffixes'),
    ])
    .execute()
  const [keys] = await db
    .selectFrom('api_keys')
    .select((eb) => eb.fn.countAll<number>().as('rows'))
    .execute()
  return JSON.stringify([products, variants, counters, keys], (_key, value) =>
    typeof value === 'bigint' || typeof value === 'string' ? Number(value) : value,
  )
}
