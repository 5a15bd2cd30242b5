import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Database } from '../db/database.js'
import { AppError } from '../errors.js'
import type { Principal } from './api-key.service.js'
import { PrincipalCache } from './principal-cache.js'
import { allows, type Scope } from './scopes.js'

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The scope a route needs. Routes without one are public. */
    scope?: Scope
  }
  interface FastifyRequest {
    /** Set on every route that declares a scope, before its body is read (even when refused 403). */
    principal: Principal | null
  }
}

export interface AuthOptions {
  keyCacheTtlMs: number
  /**
   * Runs as soon as the key is known, before its scope is checked: the rate limit, so that a
   * request refused 401 never counts against anyone, and one refused 403 counts against its key.
   */
  onAuthenticated?: (principal: Principal, reply: FastifyReply) => Promise<void>
}

/**
 * The one place where keys and scopes are checked. It runs on request, before the body is
 * read, so the order of checks is: authentication, rate limit, scope, then body.
 */
export function registerAuth(app: FastifyInstance, database: Database, options: AuthOptions): void {
  const principals = new PrincipalCache(database, { ttlMs: options.keyCacheTtlMs })
  const { onAuthenticated } = options
  app.decorateRequest('principal', null)
  app.addHook('onRequest', async (request, reply) => {
    const needed = request.routeOptions.config.scope
    if (needed === undefined) return
    const principal = await authenticate(principals, request)
    // Set before the scope check, so that the log line of a 403 names the key refused.
    request.principal = principal
    if (onAuthenticated) await onAuthenticated(principal, reply)
    if (!allows(principal.scopes, needed)) {
      throw new AppError('forbidden', `This API key lacks the ${needed} scope.`)
    }
  })
}

async function authenticate(
  principals: PrincipalCache,
  request: FastifyRequest,
): Promise<Principal> {
  const header = request.headers.authorization
  const match = header === undefined ? null : /^Bearer +(\S+) *$/i.exec(header)
  if (!match) {
    throw new AppError('unauthorized', 'Send an API key as Authorization: Bearer <key>.')
  }
  const principal = await principals.lookup(match[1]!)
  if (!principal) throw new AppError('unauthorized', 'The API key is unknown or revoked.')
  return principal
}

/** The principal of a route that declares a scope; the hook has already checked it. */
export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal) throw new Error(`route ${request.url} declares no scope`)
  return request.principal
}
