#!/usr/bin/env node
import { parseArgs } from 'node:util'
import { ConfigError, loadConfig, settingsHelp } from '../config.js'
import { createDatabase, UnsupportedDatabaseUrlError, type Database } from '../db/database.js'
import { missingDatabaseFile } from '../db/existing-database.js'
import { migrateToLatest } from '../db/migrate.js'
import { KEYS_HELP, parseKeysCommand } from './keys.command.js'
import { CommandError, processOutput, UsageError, type Output } from './output.js'

const HELP = `catalog: the product catalogue service

Usage:
  catalog serve        apply migrations, then serve HTTP until SIGTERM or SIGINT
  catalog migrate      apply pending migrations (running it twice changes nothing)
  catalog keys ...     create, list and revoke API keys (catalog keys --help)
  catalog import FILE.csv --store S [--dry-run] [--json] [--new-store] ...
                       import a Shopify product CSV into store S, recorded as an
                       import (GET /imports); catalog import --help for the options
  catalog export --store S [--output FILE] [--new-store]
                       write store S's catalogue as a Shopify product CSV
                       (a store S that does not exist is refused without --new-store)
  catalog --help       this text; catalog COMMAND --help for one command

Settings come from the environment (every command reads DATABASE_URL like the server):
${settingsHelp()}`

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
        // Loaded when asked for: the app is most of what a start reads and compiles, which
        // `catalog --help`, usage errors and the other commands do not need.
        const { serve } = await import('./serve.command.js')
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
        const database = openServerDatabase('keys')
        try {
          await command(database, output)
        } finally {
          await database.close()
        }
        return 0
      }
      case 'import':
      case 'export': {
        // Loaded when asked for, like serve: the import compiles the API's schemas.
        const { EXPORT_HELP, IMPORT_HELP, parseExportCommand, parseImportCommand } =
          await import('./import.command.js')
        if (wantsHelp) return printed(output, command === 'import' ? IMPORT_HELP : EXPORT_HELP)
        const run = command === 'import' ? parseImportCommand(args) : parseExportCommand(args)
        const database = openServerDatabase(command)
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

/**
 * The database of a command that works on the server's data. Without DATABASE_URL it is the
 * default file, which must exist: run from another folder than the server's, such a command
 * would otherwise create a database of its own, and a key made there gets 401 from the server.
 * A DATABASE_URL set on purpose is opened (and migrated) whatever it names.
 */
function openServerDatabase(command: string): Database {
  const config = loadConfig()
  const missing = config.databaseUrlIsDefault ? missingDatabaseFile(config.databaseUrl) : undefined
  if (missing !== undefined) {
    throw new CommandError(
      `catalog ${command}: there is no database at ${missing} (the default, as DATABASE_URL ` +
        `is not set), and ${command} does not create one. Run it with the DATABASE_URL ` +
        'catalog serve uses, e.g. DATABASE_URL=sqlite:/srv/catalog/catalog.db, or from the ' +
        'folder the server runs in.',
    )
  }
  return createDatabase(config.databaseUrl)
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
