import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify'
import type { ErrorObject } from 'ajv'
import { isDatabaseUnavailable } from '../db/driver-errors.js'
import { AppError } from '../errors.js'
import { toFieldProblems } from './field-problems.js'

/** The setting that sets the largest JSON body (src/config.ts). */
const BODY_LIMIT_SETTING = 'BODY_LIMIT_BYTES'

/** What a request's answer may need to know of its route: the body limit in force. */
export interface ErrorContext {
  bodyLimit?: number | undefined
}

/** A size in bytes as a person reads it: 262144 bytes (256 KiB). */
function bytesText(bytes: number): string {
  const exact = (unit: number, name: string) =>
    bytes >= unit && bytes % unit === 0 ? ` (${bytes / unit} ${name})` : undefined
  return `${bytes} bytes${exact(1024 * 1024, 'MiB') ?? exact(1024, 'KiB') ?? ''}`
}

/** The 413 of a body over the limit: the limit, and the setting that changes it. */
function bodyTooLarge(context: ErrorContext): AppError {
  const limit = context.bodyLimit
  return new AppError(
    'payload_too_large',
    limit === undefined
      ? `The request body is larger than the service accepts (${BODY_LIMIT_SETTING} sets the limit).`
      : `The request body is larger than the ${bytesText(limit)} the service accepts (${BODY_LIMIT_SETTING} sets the limit).`,
  )
}

/** Fastify's own errors, by code, as the contract's. */
const FRAMEWORK_ERRORS: Record<string, (context: ErrorContext) => AppError> = {
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: () =>
    new AppError('invalid_json', 'The request body does not match its Content-Length.'),
  FST_ERR_CTP_BODY_TOO_LARGE: bodyTooLarge,
  FST_ERR_CTP_INVALID_MEDIA_TYPE: () =>
    new AppError('unsupported_media_type', 'The request body must be sent as application/json.'),
  FST_ERR_CTP_INVALID_TYPE: () =>
    new AppError('unsupported_media_type', 'The request body must be sent as application/json.'),
  FST_ERR_BAD_URL: () => new AppError('not_found', 'No such resource.'),
  FST_ERR_MAX_PARAM_LENGTH: () => new AppError('not_found', 'No such resource.'),
  // A QUERY request without a Content-Type, refused before routing; no route takes QUERY.
  FST_ERR_ROUTE_MISSING_CONTENT_TYPE: () => new AppError('not_found', 'No such resource.'),
}

/** Any error, as one the client may see. Whatever is not recognised becomes internal_error. */
export function toAppError(error: unknown, context: ErrorContext = {}): AppError {
  if (error instanceof AppError) return error
  const fastifyError = error as Partial<FastifyError> & { validation?: ErrorObject[] }
  if (Array.isArray(fastifyError.validation)) {
    const problems = toFieldProblems(fastifyError.validation)
    // Headers arrive lowercased; name them as they are written (Idempotency-Key).
    if (fastifyError.validationContext === 'headers') {
      for (const problem of problems) problem.field = headerName(problem.field)
    }
    return new AppError('validation_failed', 'The request has invalid fields.', problems)
  }
  const known = fastifyError.code ? FRAMEWORK_ERRORS[fastifyError.code] : undefined
  if (known) return known(context)
  // The client closed its connection while its body was being read (Node's error for it
  // shares a code with a database connection reset): no answer can reach it.
  if (isClientAbort(error)) return new AppError('bad_request', 'The request was aborted.')
  const fileError = staticFileError(error as StaticFileError)
  if (fileError) return fileError
  if (isDatabaseUnavailable(error)) {
    return new AppError('unavailable', 'The database is unavailable; try again shortly.')
  }
  return new AppError('internal_error', 'Something went wrong on our side.')
}

/** Node's error on a request whose connection closed before its body was read. */
function isClientAbort(error: unknown): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown }
  return code === 'ECONNRESET' && message === 'aborted'
}

/** What the static file server behind /docs/static/ (@fastify/send) throws: an HTTP error. */
interface StaticFileError {
  status?: unknown
  expose?: unknown
}

/**
 * The static file server's refusals, which are the client's: a path that leaves the folder
 * or holds a NUL (403, 400) names no file, so no route; a failed If-Match or
 * If-Unmodified-Since, or a Range past the file's end, keeps its status.
 */
function staticFileError(error: StaticFileError): AppError | undefined {
  if (error.expose !== true || typeof error.status !== 'number') return undefined
  if (error.status === 412) {
    return new AppError('precondition_failed', "The file does not match the request's conditions.")
  }
  if (error.status === 416) {
    return new AppError('range_not_satisfiable', 'The requested range is not within the file.')
  }
  if (error.status >= 400 && error.status < 500)
    return new AppError('not_found', 'No such resource.')
  return undefined
}

function headerName(lowercased: string): string {
  return lowercased.replace(
    /(^|-)([a-z])/g,
    (_, dash: string, letter: string) => dash + letter.toUpperCase(),
  )
}

/** The contract's error body. */
export function errorBody(appError: AppError) {
  return {
    error: appError.code,
    message: appError.message,
    ...(appError.details ? { details: appError.details } : {}),
  }
}

/** The one place where errors become responses. */
export function sendError(error: unknown, request: FastifyRequest, reply: FastifyReply): void {
  const appError = toAppError(error, { bodyLimit: request.routeOptions?.bodyLimit })
  if (appError.code === 'internal_error') {
    request.log.error({ err: error }, 'request failed')
  } else if (appError.code === 'unavailable') {
    request.log.warn({ err: error }, 'database unavailable')
  }
  if (appError.code === 'unauthorized') reply.header('www-authenticate', 'Bearer')
  reply.header('x-request-id', request.id)
  reply.code(appError.statusCode).send(errorBody(appError))
}
