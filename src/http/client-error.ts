import { randomUUID } from 'node:crypto'
import { STATUS_CODES, type ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import type { FastifyInstance } from 'fastify'
import { AppError } from '../errors.js'

/** Node's errors for a request it could not read, by code; anything else is malformed HTTP. */
const CLIENT_ERRORS: Record<string, () => AppError> = {
  ERR_HTTP_REQUEST_TIMEOUT: () =>
    new AppError('request_timeout', 'The request was not received in time.'),
  HPE_HEADER_OVERFLOW: () =>
    new AppError('headers_too_large', 'The request headers are larger than the service accepts.'),
  HPE_CHUNK_EXTENSIONS_OVERFLOW: () =>
    new AppError('payload_too_large', 'The chunk extensions are larger than the service accepts.'),
}

/**
 * Answers what Node refuses before there is a request to route (headers or body too slow,
 * headers too large, not HTTP at all) with the contract's error body, then closes the
 * connection. Node and Fastify would otherwise answer without it.
 */
export function answerClientError(
  this: FastifyInstance,
  error: Error & { code?: string },
  socket: Socket,
): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return
  const appError =
    CLIENT_ERRORS[error.code ?? '']?.() ??
    new AppError('bad_request', 'The request is not valid HTTP.')
  this.log.debug({ err: error }, 'client error')
  // Once an answer has begun on this connection, another would corrupt it: only close.
  const inFlight = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage
  if (socket.writable && !inFlight?.headersSent) {
    const body = JSON.stringify({ error: appError.code, message: appError.message })
    const status = appError.statusCode
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n` +
        'Content-Type: application/json; charset=utf-8\r\n' +
        `Content-Length: ${Buffer.byteLength(body)}\r\n` +
        `X-Request-Id: ${randomUUID()}\r\n` +
        'Connection: close\r\n\r\n' +
        body,
    )
  }
  socket.destroy(error)
}
