import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Database } from '../db/database.js'
import { AppError } from '../errors.js'
import type { Principal } from './api-key.service.js'
import { PrincipalCache } from './principal-cache.js'
import { allows, type Scope } from '../http/scopes.js'
import { hashSecret, isWellFormedSecret } from './secret.js'

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
 *
 * A hook with a callback rather than an async function: a key found in the cache is
 * checked without waiting for anything, so most requests go on at once.
 */
export function registerAuth(app: FastifyInstance, database: Database, options: AuthOptions): void {
  const principals = new PrincipalCache(database, { ttlMs: options.keyCacheTtlMs })
  const hashes = new ConnectionKeyHashes()
  const { onAuthenticated } = options
  app.decorateRequest('principal', null)
  app.addHook('onRequest', (request, reply, done) => {
    const needed = request.routeOptions.config.scope
    if (needed === undefined) return done()
    const secret = bearerSecret(request)
    const keyHash = isWellFormedSecret(secret) ? hashes.of(request, secret) : undefined
    const cached = keyHash === undefined ? undefined : principals.cached(keyHash)
    const authorize = (principal: Principal | undefined) => {
      if (!principal)
        return done(new AppError('unauthorized', 'The API key is unknown or revoked.'))
      // Set before the scope check, so that the log line of a 403 names the key refused.
      request.principal = principal
      if (!onAuthenticated) return checkScope(principal, needed, done)
      onAuthenticated(principal, reply).then(() => checkScope(principal, needed, done), done)
    }
    if (cached !== undefined || keyHash === undefined) return authorize(cached)
    principals.load(keyHash).then(authorize, done)
  })
}

function checkScope(principal: Principal, needed: Scope, done: (error?: Error) => void): void {
  if (!allows(principal.scopes, needed)) {
    done(new AppError('forbidden', `This API key lacks the ${needed} scope.`))
  } else {
    done()
  }
}

/** The secret of the request's `Authorization: Bearer <key>` header; 401 without one. */
function bearerSecret(request: FastifyRequest): string {
  const header = request.headers.authorization
  const match = header === undefined ? null : /^Bearer +(\S+) *$/i.exec(header)
  if (!match) {
    throw new AppError('unauthorized', 'Send an API key as Authorization: Bearer <key>.')
  }
  return match[1]!
}

/**
 * The hash of the key last sent on each connection. A client sends the same key with every
 * request of a keep-alive connection, and its SHA-256 was a measurable part of a request's
 * CPU. A secret is only ever compared with the one sent before it on the same connection,
 * by the same client: nothing about another client's key can be learnt from the timing.
 */
class ConnectionKeyHashes {
  readonly #last = new WeakMap<object, { secret: string; keyHash: string }>()

  of(request: FastifyRequest, secret: string): string {
    const connection = request.raw.socket as object | null | undefined
    // A request with no socket (one made up in a test, say) is hashed every time.
    if (connection == null) return hashSecret(secret)
    const last = this.#last.get(connection)
    if (last !== undefined && last.secret === secret) return last.keyHash
    const keyHash = hashSecret(secret)
    this.#last.set(connection, { secret, keyHash })
    return keyHash
  }
}

/** The principal of a route that declares a scope; the hook has already checked it. */
export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal) throw new Error(`route ${request.url} declares no scope`)
  return request.principal
}
