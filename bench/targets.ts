import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Cleanup } from './cleanup.js'
import { BENCH_HOST } from './http-client.js'
import { createScratchDatabase, dropScratchDatabase, withClient } from './postgres.js'
import { freePort, runCommand, spawnChild, waitUntilServing } from './processes.js'
import { BENCH_STORE } from './seed.js'

export type Dialect = 'sqlite' | 'postgres'

/** The service, or one of the bare baselines (baseline-server.ts). */
export type ServerKind = 'service' | 'bare-normal' | 'bare-full' | 'bare-pg' | 'bare-pg-events'

export const SERVER_LABELS: Record<ServerKind, string> = {
  service: 'service',
  'bare-normal': 'bare, synchronous=NORMAL',
  'bare-full': 'bare, synchronous=FULL',
  'bare-pg': 'bare, pg pool of 10',
  'bare-pg-events': 'bare with its event, pg pool of 10',
}

/** A server under test, on a database of its own that goes when it stops. */
export interface RunningServer {
  kind: ServerKind
  dialect: Dialect
  /** http://127.0.0.1:<port> */
  url: string
  /** A read,write key of store `bench` (the baselines ignore it, but get it all the same). */
  key: string
  /** `sqlite:<file>` or a postgres:// URL: the server's own scratch database. */
  databaseUrl: string
  pid: number
  /** The tail of what the process printed. */
  output(): string
  /** Stops the process, then removes its database. */
  stop(): Promise<void>
}

export interface TargetContext {
  cleanup: Cleanup
  /** dist/cli/main.js of the service. */
  serviceCli: string
  /** The node flags `npm start` runs the service with (see startScriptNodeFlags). */
  serviceNodeFlags: string[]
  /** The transpiled baseline-server.js. */
  baselineScript: string
  /** Admin URL of the PostgreSQL server, when the run covers PostgreSQL. */
  postgresUrl: string | undefined
}

/**
 * Starts the service on a fresh database: migrated and given a key by `catalog keys create`,
 * then `seed` (if any) fills it directly, then `catalog serve`, rate limits off, with `extra`
 * settings in its environment besides (WEBHOOK_ALLOW_PRIVATE, say).
 */
export async function startService(
  context: TargetContext,
  dialect: Dialect,
  seed?: (databaseUrl: string) => Promise<void>,
  extra: Record<string, string> = {},
): Promise<RunningServer> {
  const database = await scratchDatabase(context, dialect)
  try {
    const settings = { ...serviceSettings(database.url), ...extra }
    const created = await runCommand(
      process.execPath,
      [
        context.serviceCli,
        'keys',
        'create',
        '--store',
        BENCH_STORE,
        '--scopes',
        'read,write',
        '--json',
      ],
      { env: childEnv(settings) },
    )
    const { key } = JSON.parse(created) as { key: string }
    await seed?.(database.url)
    return await serve(context, {
      kind: 'service',
      dialect,
      database,
      key,
      args: [...context.serviceNodeFlags, context.serviceCli, 'serve'],
      settings,
    })
  } catch (error) {
    await database.remove()
    throw error
  }
}

/**
 * Starts another `catalog serve` on the database of a running service (PostgreSQL), with the
 * same key. Stopping it leaves the database to the first instance.
 */
export async function startAnotherInstance(
  context: TargetContext,
  first: RunningServer,
): Promise<RunningServer> {
  if (first.kind !== 'service' || first.dialect !== 'postgres') {
    throw new Error('only the service on PostgreSQL runs as several instances')
  }
  return serve(context, {
    kind: 'service',
    dialect: first.dialect,
    database: { url: first.databaseUrl, remove: async () => {} },
    key: first.key,
    args: [...context.serviceNodeFlags, context.serviceCli, 'serve'],
    settings: serviceSettings(first.databaseUrl),
  })
}

/** Starts a bare baseline on a fresh database; it creates its tables itself. */
export async function startBaseline(
  context: TargetContext,
  kind: Exclude<ServerKind, 'service'>,
): Promise<RunningServer> {
  const dialect: Dialect = kind.startsWith('bare-pg') ? 'postgres' : 'sqlite'
  const database = await scratchDatabase(context, dialect)
  try {
    const settings = {
      BASELINE_DATABASE: database.url,
      BASELINE_SYNCHRONOUS: kind === 'bare-normal' ? 'NORMAL' : 'FULL',
      BASELINE_EVENTS: kind === 'bare-pg-events' ? '1' : '0',
    }
    return await serve(context, {
      kind,
      dialect,
      database,
      key: 'ck_baseline',
      args: [context.baselineScript],
      settings,
    })
  } catch (error) {
    await database.remove()
    throw error
  }
}

/**
 * The node flags of package.json's start script (`exec node <flags> dist/cli/main.js serve`;
 * `exec` so that a signal sent to npm reaches node), so that the service is measured as it is
 * run: its heap settings are part of what it is.
 */
export function startScriptNodeFlags(packageJson: string): string[] {
  const { scripts } = JSON.parse(readFileSync(packageJson, 'utf8')) as {
    scripts?: Record<string, string>
  }
  const words = (scripts?.start ?? '').split(/\s+/).filter(Boolean)
  if (words[0] === 'exec') words.shift()
  const cli = words.indexOf('dist/cli/main.js')
  if (words[0] !== 'node' || cli < 0 || words[cli + 1] !== 'serve') {
    throw new Error(
      `the start script of ${packageJson} is not "node [flags] dist/cli/main.js serve"`,
    )
  }
  return words.slice(1, cli)
}

function serviceSettings(databaseUrl: string): Record<string, string> {
  return { DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn', RATE_LIMIT_PER_MINUTE: '0' }
}

/** How to run one server: `node <args>` with `settings` in its environment. */
interface ServerLaunch {
  kind: ServerKind
  dialect: Dialect
  database: ScratchDatabase
  key: string
  args: string[]
  settings: Record<string, string>
}

/** Starts a server on a free port and waits until it answers /healthz. */
async function serve(context: TargetContext, launch: ServerLaunch): Promise<RunningServer> {
  const { kind, dialect, database, key, args, settings } = launch
  await settle(context)
  const port = await freePort()
  const url = `http://${BENCH_HOST}:${port}`
  const env = childEnv({ ...settings, HOST: BENCH_HOST, PORT: String(port) })
  const child = spawnChild(
    context.cleanup,
    `${SERVER_LABELS[kind]} (${dialect})`,
    process.execPath,
    args,
    env,
  )
  try {
    await waitUntilServing(`${url}/healthz`, child)
  } catch (error) {
    await child.stop()
    throw error
  }
  return {
    kind,
    dialect,
    url,
    key,
    databaseUrl: database.url,
    pid: child.pid,
    output: child.output,
    stop: async () => {
      await child.stop()
      await database.remove()
    },
  }
}

/**
 * Writes left pending by earlier runs or by seeding (dirty pages, a PostgreSQL checkpoint
 * due) would otherwise be flushed during the next measured window and slow its fsyncs.
 */
export async function settle(context: TargetContext): Promise<void> {
  if (context.postgresUrl !== undefined) {
    await withClient(context.postgresUrl, (client) => client.query('checkpoint'))
  }
  await runCommand('sync', [])
}

/** Only what the servers need, so that nothing of this shell (NODE_OPTIONS, say) changes them. */
function childEnv(settings: Record<string, string>): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH, HOME: process.env.HOME, ...settings }
}

export interface ScratchDatabase {
  url: string
  remove(): Promise<void>
}

/** An empty SQLite file in a temp dir, or an empty PostgreSQL database; removed by the cleanup at the latest. */
export async function scratchDatabase(
  context: TargetContext,
  dialect: Dialect,
): Promise<ScratchDatabase> {
  if (dialect === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'catalog-bench-'))
    const remove = context.cleanup.add(`remove ${dir}`, () =>
      rmSync(dir, { recursive: true, force: true }),
    )
    return { url: `sqlite:${join(dir, 'catalog.db')}`, remove }
  }
  const adminUrl = context.postgresUrl
  if (adminUrl === undefined) throw new Error('PostgreSQL runs need BENCH_POSTGRES_URL')
  const { url, name } = await createScratchDatabase(adminUrl)
  const remove = context.cleanup.add(`drop database ${name}`, () =>
    dropScratchDatabase(adminUrl, name),
  )
  return { url, remove }
}
