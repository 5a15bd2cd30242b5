#!/usr/bin/env node
import { parseArgs } from 'node:util'
import { ConfigError, loadConfig } from '../config.js'
import { createDatabase, UnsupportedDatabaseUrlError } from '../db/database.js'
import { migrateToLatest } from '../db/migrate.js'
import {
  EXPORT_HELP,
  IMPORT_HELP,
  parseExportCommand,
  parseImportCommand,
} from './import.command.js'
import { KEYS_HELP, parseKeysCommand } from './keys.command.js'
import { CommandError, processOutput, UsageError, type Output } from './output.js'
import { serve } from './serve.command.js'

const HELP = `catalog: the product catalogue service

Usage:
  catalog serve        apply migrations, then serve HTTP until SIGTERM or SIGINT
  catalog migrate      apply pending migrations (running it twice changes nothing)
  catalog keys ...     create, list and revoke API keys (catalog keys --help)
  catalog import FILE.csv --store S [--dry-run] [--json]
                       import a Shopify product CSV into store S
  catalog export --store S [--output FILE]
                       write store S's catalogue as a Shopify product CSV
  catalog --help       this text; catalog COMMAND --help for one command

Settings come from the environment: DATABASE_URL (default sqlite:data/catalog.db),
HOST, PORT, LOG_LEVEL, BODY_LIMIT_BYTES, REQUEST_TIMEOUT_MS, SHUTDOWN_TIMEOUT_MS,
API_KEY_CACHE_TTL_MS, RATE_LIMIT_PER_MINUTE, REDIS_URL, HEADERS_TIMEOUT_MS,
CONNECTION_TIMEOUT_MS, KEEP_ALIVE_TIMEOUT_MS, HEADER_LIMIT_BYTES.`

const SERVE_HELP = `Usage: catalog serve

Applies pending migrations, then serves HTTP on HOST:PORT (default 127.0.0.1:3000).
On a database without any API key it first creates one for store "default" with
scopes read,write and prints it once. SIGTERM or SIGINT: stop accepting connections,
finish requests in flight, close the database, exit 0.`

const MIGRATE_HELP = `Usage: catalog migrate

Applies the pending migrations of DATABASE_URL's database. Running it twice changes nothing.`

/**
 * Runs one command. Resolves with the exit code, or with undefined for `serve`, which
 * keeps the process alive until a signal ends it.
 */
async function runCli(argv: string[], output: Output): Promise<number | undefined> {
  try {
    const [command, ...args] = argv
    const wantsHelp = args.includes('--help') || args.includes('-h')
    switch (command) {
      case undefined:
        throw new UsageError('catalog: missing command (try catalog --help)')
      case '--help':
      case '-h':
      case 'help':
        return printed(output, HELP)
      case 'serve':
        if (wantsHelp) return printed(output, SERVE_HELP)
        expectNoArguments('serve', args)
        await serve(loadConfig(), output)
        return undefined
      case 'migrate': {
        if (wantsHelp) return printed(output, MIGRATE_HELP)
        expectNoArguments('migrate', args)
        const database = createDatabase(loadConfig().databaseUrl)
        try {
          const applied = await migrateToLatest(database)
          output.out(
            applied.length === 0 ? 'Nothing to migrate.' : `Applied ${applied.join(', ')}.`,
          )
        } finally {
          await database.close()
        }
        return 0
      }
      case 'keys': {
        if (wantsHelp) return printed(output, KEYS_HELP)
        const command = parseKeysCommand(args)
        const database = createDatabase(loadConfig().databaseUrl)
        try {
          await command(database, output)
        } finally {
          await database.close()
        }
        return 0
      }
      case 'import':
      case 'export': {
        if (wantsHelp) return printed(output, command === 'import' ? IMPORT_HELP : EXPORT_HELP)
        const run = command === 'import' ? parseImportCommand(args) : parseExportCommand(args)
        const database = createDatabase(loadConfig().databaseUrl)
        try {
          return await run(database, output)
        } finally {
          await database.close()
        }
      }
      default:
        throw new UsageError(`catalog: unknown command "${command}" (try catalog --help)`)
    }
  } catch (error) {
    if (
      error instanceof UsageError ||
      error instanceof ConfigError ||
      error instanceof UnsupportedDatabaseUrlError
    ) {
      output.err(error.message)
      return 2
    }
    output.err(error instanceof CommandError ? error.message : `catalog: ${describe(error)}`)
    return 1
  }
}

function printed(output: Output, text: string): number {
  output.out(text)
  return 0
}

function expectNoArguments(command: string, args: string[]): void {
  try {
    parseArgs({ args, options: {}, strict: true, allowPositionals: false })
  } catch (error) {
    throw new UsageError(`catalog ${command}: ${(error as Error).message}`)
  }
}

function describe(error: unknown): string {
  if (error instanceof AggregateError && error.errors.length > 0) return describe(error.errors[0])
  return error instanceof Error ? error.message : String(error)
}

const exitCode = await runCli(process.argv.slice(2), processOutput)
if (exitCode !== undefined) process.exitCode = exitCode
