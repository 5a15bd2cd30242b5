import { parseArgs } from 'node:util'
import {
  createApiKey,
  isValidStoreId,
  listApiKeys,
  revokeApiKey,
  type ApiKey,
} from '../auth/api-key.service.js'
import { isScope, SCOPES, type Scope } from '../http/scopes.js'
import type { Database } from '../db/database.js'
import { migrateToLatest } from '../db/migrate.js'
import { CommandError, UsageError, type Output } from './output.js'

export const KEYS_HELP = `Usage:
  catalog keys create --store STORE --scopes read,write [--name LABEL] [--json]
  catalog keys list [--store STORE] [--json]
  catalog keys revoke ID

create   makes an API key for a store and prints its secret once (only a hash is kept)
list     shows keys without their secrets
revoke   refuses the key from its next request on

Scopes: ${SCOPES.join(', ')} (write includes read). The database is DATABASE_URL's.`

/** Parses a keys subcommand fully before the database is opened, so usage errors cost nothing. */
export function parseKeysCommand(
  args: string[],
): (database: Database, output: Output) => Promise<void> {
  const [sub, ...rest] = args
  switch (sub) {
    case 'create':
      return parseCreate(rest)
    case 'list':
      return parseList(rest)
    case 'revoke':
      return parseRevoke(rest)
    case undefined:
      throw new UsageError('catalog keys: missing subcommand (create, list or revoke)')
    default:
      throw new UsageError(`catalog keys: unknown subcommand "${sub}" (create, list or revoke)`)
  }
}

function parseCreate(args: string[]) {
  const { values } = parse(args, {
    store: { type: 'string' },
    scopes: { type: 'string' },
    name: { type: 'string' },
    json: { type: 'boolean' },
  })
  const store = values.store
  if (store === undefined) throw new UsageError('catalog keys create: --store is required')
  if (!isValidStoreId(store)) {
    throw new UsageError(
      'catalog keys create: --store must be 1 to 64 letters, digits, ".", "_" or "-", starting with a letter or digit',
    )
  }
  const scopes = parseScopes(values.scopes)
  return async (database: Database, output: Output) => {
    await migrateToLatest(database)
    const key = await createApiKey(database, { store, scopes, name: values.name ?? null })
    if (values.json) {
      output.out(JSON.stringify(key))
      return
    }
    output.out(
      `Created API key ${key.id} for store "${key.store}" with scopes ${key.scopes.join(',')}.`,
    )
    output.out(key.key)
    output.out('Keep it now: the secret is not shown again.')
  }
}

function parseScopes(value: string | undefined): Scope[] {
  if (value === undefined)
    throw new UsageError('catalog keys create: --scopes is required, e.g. --scopes read,write')
  const scopes = value.split(',').map((scope) => scope.trim())
  const unknown = scopes.find((scope) => !isScope(scope))
  if (unknown !== undefined) {
    throw new UsageError(
      `catalog keys create: unknown scope "${unknown}" (scopes: ${SCOPES.join(', ')})`,
    )
  }
  return scopes as Scope[]
}

function parseList(args: string[]) {
  const { values } = parse(args, { store: { type: 'string' }, json: { type: 'boolean' } })
  return async (database: Database, output: Output) => {
    await migrateToLatest(database)
    const keys = await listApiKeys(database.kysely, values.store)
    output.out(values.json ? JSON.stringify(keys) : formatKeyTable(keys))
  }
}

function parseRevoke(args: string[]) {
  const { positionals } = parse(args, {}, true)
  if (positionals.length !== 1) throw new UsageError('catalog keys revoke: give exactly one key ID')
  const id = positionals[0]!
  return async (database: Database, output: Output) => {
    await migrateToLatest(database)
    const result = await revokeApiKey(database, id)
    if (result === 'not_found') throw new CommandError(`catalog keys revoke: no key with id ${id}`)
    output.out(result === 'revoked' ? `Revoked key ${id}.` : `Key ${id} was already revoked.`)
  }
}

type Options = NonNullable<Parameters<typeof parseArgs>[0]>['options']

function parse<O extends Options>(args: string[], options: O, allowPositionals = false) {
  try {
    return parseArgs({ args, options: options as O & Options, allowPositionals, strict: true })
  } catch (error) {
    throw new UsageError(`catalog keys: ${(error as Error).message}`)
  }
}

function formatKeyTable(keys: ApiKey[]): string {
  if (keys.length === 0) return 'No API keys.'
  const rows = [
    ['ID', 'STORE', 'SCOPES', 'KEY', 'NAME', 'CREATED', 'REVOKED'],
    ...keys.map((key) => [
      key.id,
      key.store,
      key.scopes.join(','),
      key.redacted,
      key.name ?? '',
      key.createdAt,
      key.revokedAt ?? '',
    ]),
  ]
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)))
  return rows
    .map((row) =>
      row
        .map((cell, column) => cell.padEnd(widths[column]!))
        .join('  ')
        .trimEnd(),
    )
    .join('\n')
}
