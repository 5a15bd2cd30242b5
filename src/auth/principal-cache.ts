import type { Database } from '../db/database.js'
import { principalForKeyHash, type Principal } from './api-key.service.js'

/**
 * Who each recently used key belongs to, so that a request costs no key lookup. An entry
 * lives `ttlMs` at most, and every entry goes as soon as the database reports that keys
 * changed (a revocation by the CLI, say): see Database.keysVersion. Unknown keys are not
 * remembered, so guessing fills nothing. Entries are found by the key's hash (secret.ts's
 * hashSecret), never by the secret.
 */
export class PrincipalCache {
  readonly #database: Database
  readonly #ttlMs: number
  readonly #capacity: number
  readonly #entries = new Map<string, { principal: Principal; expiresAt: number }>()
  #version: number | undefined

  constructor(database: Database, options: { ttlMs: number; capacity?: number }) {
    this.#database = database
    this.#ttlMs = options.ttlMs
    this.#capacity = options.capacity ?? 10_000
    // Starts watching for key changes now, so caching can begin with the first requests.
    this.#version = database.keysVersion()
  }

  /**
   * The principal of a key's hash while it is cached and fresh, without waiting for
   * anything; undefined when it must be looked up (`load`).
   */
  cached(keyHash: string): Principal | undefined {
    const version = this.#database.keysVersion()
    if (version === undefined || version !== this.#version) {
      this.#entries.clear()
      this.#version = version
    }
    const cached = this.#entries.get(keyHash)
    return cached !== undefined && cached.expiresAt > Date.now() ? cached.principal : undefined
  }

  /** Looks a key's hash up in the database, and caches what it finds. */
  async load(keyHash: string): Promise<Principal | undefined> {
    const version = this.#version
    const now = Date.now()
    const principal = await principalForKeyHash(this.#database.kysely, keyHash)
    if (principal !== undefined && version !== undefined && this.#ttlMs > 0) {
      if (this.#entries.size >= this.#capacity) {
        this.#entries.delete(this.#entries.keys().next().value!)
      }
      this.#entries.set(keyHash, { principal, expiresAt: now + this.#ttlMs })
    }
    return principal
  }
}
