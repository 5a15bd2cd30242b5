/** The error codes of the contract, each with the one HTTP status it is sent with. */
export const ERROR_STATUS = {
  unauthorized: 401,
  forbidden: 403,
  invalid_json: 400,
  bad_request: 400,
  validation_failed: 400,
  not_found: 404,
  method_not_allowed: 405,
  duplicate_sku: 409,
  duplicate_options: 409,
  duplicate_slug: 409,
  duplicate_handle: 409,
  smart_collection: 409,
  duplicate_definition: 409,
  invalid_transition: 409,
  precondition_failed: 412,
  cursor_expired: 410,
  idempotency_key_in_use: 409,
  idempotency_key_reused: 422,
  rate_limited: 429,
  payload_too_large: 413,
  range_not_satisfiable: 416,
  request_timeout: 408,
  headers_too_large: 431,
  unsupported_media_type: 415,
  unavailable: 503,
  internal_error: 500,
} as const

export type ErrorCode = keyof typeof ERROR_STATUS

/** One problem with one request field, as listed in `details` of a `validation_failed` error. */
export interface FieldProblem {
  field: string
  message: string
}

/**
 * An error whose code, message and details may be shown to the client as they are.
 * Thrown by services and hooks; written to the response by the one error handler.
 */
export class AppError extends Error {
  readonly code: ErrorCode
  readonly details: FieldProblem[] | undefined

  constructor(code: ErrorCode, message: string, details?: FieldProblem[]) {
    super(message)
    this.name = 'AppError'
    this.code = code
    this.details = details
  }

  get statusCode(): number {
    return ERROR_STATUS[this.code]
  }
}

/** Thrown when a path names a product that does not exist in the caller's store. */
export function productNotFound(): AppError {
  return new AppError('not_found', 'No product with this id exists in your store.')
}

/** Thrown when If-Match names no current version of the record. */
export function preconditionFailed(): AppError {
  return new AppError(
    'precondition_failed',
    'The record has changed since the version named in If-Match; read it again.',
  )
}

/** Thrown when another product of the store has the slug a write sets. */
export function duplicateSlug(): AppError {
  return new AppError('duplicate_slug', 'Another product in your store already has this slug.')
}

/** Thrown when a path names a variant that is not one of the product's in the caller's store. */
export function variantNotFound(): AppError {
  return new AppError('not_found', 'No variant with this id exists for this product in your store.')
}

/** Thrown when a request passes the schema but breaks a rule the schema cannot express. */
export function validationFailed(details: FieldProblem[]): AppError {
  return new AppError('validation_failed', 'The request has invalid fields.', details)
}
