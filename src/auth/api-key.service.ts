import type { Database } from '../db/database.js'
import type { ApiKeyRow, Executor, NewApiKeyRow } from '../db/schema.js'
import { isUuid, newId, nowIso, toIso } from '../db/values.js'
import {
  findApiKeyByHash,
  findApiKeyById,
  hasAnyApiKey,
  insertApiKey,
  listApiKeyRows,
  markApiKeyRevoked,
} from './api-key.repository.js'
import { isScope, type Scope } from '../http/scopes.js'
import { generateSecret, hashSecret, redactSecret } from './secret.js'

/** An API key as it may be shown: never with its secret. */
export interface ApiKey {
  id: string
  store: string
  name: string | null
  scopes: Scope[]
  redacted: string
  createdAt: string
  revokedAt: string | null
}

/** A key just created: the only moment its secret is known. */
export interface CreatedApiKey extends ApiKey {
  key: string
}

/** Who made a request: the store it acts on, and the key it used. */
export interface Principal {
  storeId: string
  keyId: string
  scopes: Scope[]
}

const STORE_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/

export function isValidStoreId(value: string): boolean {
  return STORE_ID_PATTERN.test(value)
}

export const FIRST_RUN_STORE = 'default'

export interface NewApiKey {
  store: string
  scopes: Scope[]
  name?: string | null
}

export async function createApiKey(database: Database, input: NewApiKey): Promise<CreatedApiKey> {
  const created = await database.write((tx) => insertNewApiKey(tx, input))
  await database.keysChanged()
  return created
}

async function insertNewApiKey(db: Executor, input: NewApiKey): Promise<CreatedApiKey> {
  if (!isValidStoreId(input.store)) throw new Error(`invalid store id "${input.store}"`)
  const key = generateSecret()
  const row = {
    id: newId(),
    store_id: input.store,
    name: input.name ?? null,
    key_hash: hashSecret(key),
    redacted: redactSecret(key),
    scopes: [...new Set(input.scopes)].join(','),
    created_at: nowIso(),
    revoked_at: null,
  } satisfies NewApiKeyRow
  await insertApiKey(db, row)
  return { ...rowToApiKey(row), key }
}

export async function listApiKeys(db: Executor, store?: string): Promise<ApiKey[]> {
  return (await listApiKeyRows(db, store)).map(rowToApiKey)
}

export type RevokeResult = 'revoked' | 'already_revoked' | 'not_found'

export async function revokeApiKey(database: Database, id: string): Promise<RevokeResult> {
  if (!isUuid(id)) return 'not_found'
  const result = await database.write(async (tx): Promise<RevokeResult> => {
    const row = await findApiKeyById(tx, id.toLowerCase())
    if (!row) return 'not_found'
    if (row.revoked_at !== null) return 'already_revoked'
    await markApiKeyRevoked(tx, row.id, nowIso())
    return 'revoked'
  })
  if (result === 'revoked') await database.keysChanged()
  return result
}

/**
 * Creates the first key of a new installation, so that the quick start ends with a working
 * request. Returns it, or undefined when the database already has a key (revoked ones count).
 */
export async function ensureFirstApiKey(database: Database): Promise<CreatedApiKey | undefined> {
  const created = await database.write(async (tx) => {
    if (await hasAnyApiKey(tx)) return undefined
    return insertNewApiKey(tx, { store: FIRST_RUN_STORE, scopes: ['read', 'write'] })
  })
  if (created) await database.keysChanged()
  return created
}

/** The principal behind a key's hash, or undefined for an unknown or revoked key. */
export async function principalForKeyHash(
  db: Executor,
  keyHash: string,
): Promise<Principal | undefined> {
  // Looked up by its hash: timing can tell an attacker about hashes, never about a secret.
  const row = await findApiKeyByHash(db, keyHash)
  if (!row || row.revoked_at !== null) return undefined
  return { storeId: row.store_id, keyId: row.id, scopes: parseScopes(row.scopes) }
}

function parseScopes(stored: string): Scope[] {
  return stored.split(',').filter(isScope)
}

function rowToApiKey(row: ApiKeyRow): ApiKey {
  return {
    id: row.id,
    store: row.store_id,
    name: row.name,
    scopes: parseScopes(row.scopes),
    redacted: row.redacted,
    createdAt: toIso(row.created_at),
    revokedAt: row.revoked_at === null ? null : toIso(row.revoked_at),
  }
}
