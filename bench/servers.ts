/**
 * The servers under test: the service (`catalog serve`, as `npm start` runs it) and the bare
 * baselines of baseline-server.ts, each on a scratch database of its own that goes when it
 * stops.
 */
import { randomBytes } from 'node:crypto'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import os, { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import SqliteDatabase from '../src/db/sqlite-driver.js'
import pg from 'pg'
import ts from 'typescript'
import {
  BENCH_HOST,
  childEnv,
  freePort,
  runCommand,
  spawnChild,
  waitUntilServing,
  type BenchConfig,
  type Cleanup,
} from './support.js'

export type Dialect = 'sqlite' | 'postgres'
export const DIALECT_LABELS: Record<Dialect, string> = { sqlite: 'SQLite', postgres: 'PostgreSQL' }

/** The store of the key the benchmark makes (`keys create --store bench`). */
export const BENCH_STORE = 'bench'
export const ROOT = fileURLToPath(new URL('..', import.meta.url))

/**
 * The bare baselines (baseline-server.ts), by dialect, with the settings each runs with.
 * `goal` marks the one the goals are measured against: for writes, the one that appends
 * the write's event in the same transaction (`events`), as the contract asks of every
 * change; for reads, the plain one.
 */
export const BASELINES = {
  'bare-normal': { dialect: 'sqlite', short: 'NORMAL', sync: 'NORMAL', events: false },
  'bare-full': { dialect: 'sqlite', short: 'FULL', sync: 'FULL', events: false },
  'bare-normal-events': { dialect: 'sqlite', short: 'NORMAL+event', sync: 'NORMAL', events: true },
  'bare-pg': { dialect: 'postgres', short: 'pg', sync: 'FULL', events: false },
  'bare-pg-events': { dialect: 'postgres', short: 'pg+event', sync: 'FULL', events: true },
  // The search bench's (bench/search-http.ts): the event's twin that also writes the product's
  // search document, on the service's own loaded database; not one of the scenarios' baselines.
  'bare-normal-events-search': {
    dialect: 'sqlite',
    short: 'NORMAL+event+document',
    sync: 'NORMAL',
    events: true,
    documents: true,
  },
  'bare-pg-events-search': {
    dialect: 'postgres',
    short: 'pg+event+document',
    sync: 'FULL',
    events: true,
    documents: true,
  },
} as const satisfies Record<
  string,
  { dialect: Dialect; short: string; sync: string; events: boolean; documents?: boolean }
>
export type BaselineKind = keyof typeof BASELINES
export type ServerKind = 'service' | BaselineKind

/** The scenarios' baselines of a dialect (not the search bench's document-writing ones). */
export const baselinesOf = (dialect: Dialect) =>
  (Object.keys(BASELINES) as BaselineKind[]).filter(
    (k) => BASELINES[k].dialect === dialect && !('documents' in BASELINES[k]),
  )

/** The baseline a scenario's goals are set against: the event-appending twin for writes. */
export function goalBaseline(dialect: Dialect, writes: boolean): BaselineKind {
  if (dialect === 'sqlite') return writes ? 'bare-normal-events' : 'bare-normal'
  return writes ? 'bare-pg-events' : 'bare-pg'
}

export interface RunningServer {
  kind: ServerKind
  dialect: Dialect
  /** http://127.0.0.1:<port> */
  url: string
  /** A read,write key of store `bench` (the baselines ignore it, but get it all the same). */
  key: string
  /** `sqlite:<file>` or a postgres:// URL. */
  databaseUrl: string
  pid: number
  output(): string
  /** Stops the process, then removes its database. */
  stop(): Promise<void>
}

export interface Context {
  cleanup: Cleanup
  postgresUrl: string | undefined
  /** The service's dist/cli/main.js. */
  cli: string
  /** The node flags `npm start` runs the service with: its heap settings are part of it. */
  nodeFlags: string[]
  /** baseline-server.ts transpiled once to plain JavaScript (see baselineScript). */
  baseline?: string
}

export function createContext(cleanup: Cleanup, config: BenchConfig, root = ROOT): Context {
  return {
    cleanup,
    postgresUrl: config.postgresUrl,
    cli: join(root, 'dist', 'cli', 'main.js'),
    nodeFlags: startScriptNodeFlags(join(root, 'package.json')),
  }
}

/** The node flags of package.json's start script, `[exec] node <flags> dist/cli/main.js serve`. */
export function startScriptNodeFlags(packageJson: string): string[] {
  const { scripts } = JSON.parse(readFileSync(packageJson, 'utf8')) as {
    scripts?: { start?: string }
  }
  const words = (scripts?.start ?? '').split(/\s+/)
  // `exec` so that a signal sent to npm reaches node (docs/decisions/node-versions.md).
  if (words[0] === 'exec') words.shift()
  const cli = words.indexOf('dist/cli/main.js')
  if (words[0] !== 'node' || cli < 0 || words[cli + 1] !== 'serve') {
    throw new Error(
      `the start script of ${packageJson} is not "node [flags] dist/cli/main.js serve"`,
    )
  }
  return words.slice(1, cli)
}

/**
 * Starts the service on a fresh database (or on `shared`, a running service's, as a second
 * instance): migrated and given a key by `catalog keys create`, then `seed` fills it directly,
 * then `catalog serve`, rate limits off, with `env` besides.
 */
export async function startService(
  context: Context,
  dialect: Dialect,
  options: {
    seed?: (databaseUrl: string) => Promise<void>
    env?: Record<string, string>
    shared?: RunningServer
    /** A database made and migrated beforehand (the search bench's store), kept at stop. */
    databaseUrl?: string
  } = {},
): Promise<RunningServer> {
  const given = options.shared?.databaseUrl ?? options.databaseUrl
  return serve(context, 'service', dialect, given, async (url) => {
    const settings = {
      DATABASE_URL: url,
      LOG_LEVEL: 'warn',
      RATE_LIMIT_PER_MINUTE: '0',
      ...options.env,
    }
    const create = `keys create --store ${BENCH_STORE} --scopes read,write --json`.split(' ')
    const env = childEnv(settings)
    const key =
      options.shared?.key ??
      (JSON.parse(await runCommand(process.execPath, [context.cli, ...create], { env })) as Key).key
    await options.seed?.(url)
    const args = [...context.nodeFlags, context.cli, 'serve']
    return { key, settings, args }
  })
}
type Key = { key: string }

/**
 * Starts a bare baseline on a fresh database, where it creates its tables itself; or on
 * `databaseUrl`, a service's migrated database (kept at stop), with `env` besides
 * (baseline-server.ts: BASELINE_SEARCH).
 */
export async function startBaseline(
  context: Context,
  kind: BaselineKind,
  options: { databaseUrl?: string; env?: Record<string, string> } = {},
): Promise<RunningServer> {
  const { dialect, sync, events, ...rest } = BASELINES[kind]
  return serve(context, kind, dialect, options.databaseUrl, async (url) => ({
    key: 'ck_baseline',
    settings: {
      BASELINE_DATABASE: url,
      BASELINE_SYNCHRONOUS: sync,
      BASELINE_EVENTS: events ? '1' : '0',
      BASELINE_DOCUMENTS: 'documents' in rest ? '1' : '0',
      BASELINE_SCHEMA: options.databaseUrl ? 'service' : 'own',
      ...options.env,
    },
    args: [baselineScript(context)],
  }))
}

/**
 * baseline-server.ts (and its search routes, baseline-search.ts) as plain JavaScript, run by
 * node alone like the service's dist/ (the tsx loader would add a thread and ~25 MiB to the
 * RSS compared with the service's). Written inside the project, where its packages resolve;
 * git ignores bench/results/.
 */
function baselineScript(context: Context): string {
  if (context.baseline) return context.baseline
  mkdirSync(join(ROOT, 'bench', 'results'), { recursive: true })
  const dir = mkdtempSync(join(ROOT, 'bench', 'results', 'baseline-'))
  context.cleanup.add(`remove ${dir}`, () => rmSync(dir, { recursive: true, force: true }))
  // The one module the baseline shares with the service, the SQLite driver, comes from dist/.
  const dist = pathToFileURL(join(ROOT, 'dist') + '/').href
  for (const name of ['baseline-server', 'baseline-search']) {
    const source = fileURLToPath(new URL(`./${name}.ts`, import.meta.url))
    const output = ts.transpileModule(readFileSync(source, 'utf8'), {
      compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2023 },
    })
    writeFileSync(
      join(dir, `${name}.mjs`),
      output.outputText
        .replaceAll("from '../src/", `from '${dist}`)
        .replaceAll("from './baseline-search.js'", "from './baseline-search.mjs'"),
    )
  }
  return (context.baseline = join(dir, 'baseline-server.mjs'))
}

/**
 * Starts a server on `given` (kept at stop) or on a scratch database (removed at stop, or if
 * it fails to start), once `prepare` has made its settings, key and command line.
 */
async function serve(
  context: Context,
  kind: ServerKind,
  dialect: Dialect,
  given: string | undefined,
  prepare: (
    databaseUrl: string,
  ) => Promise<{ key: string; settings: Record<string, string>; args: string[] }>,
): Promise<RunningServer> {
  const database = given
    ? { url: given, remove: async () => {} }
    : await scratchDatabase(context, dialect)
  try {
    const { key, settings, args } = await prepare(database.url)
    await settle(context)
    const port = await freePort()
    const url = `http://${BENCH_HOST}:${port}`
    const env = childEnv({ ...settings, HOST: BENCH_HOST, PORT: String(port) })
    const child = spawnChild(context.cleanup, `${kind} (${dialect})`, process.execPath, args, env)
    await waitUntilServing(`${url}/healthz`, child).catch(async (error: unknown) => {
      await child.stop()
      throw error
    })
    const stop = async () => {
      await child.stop()
      await database.remove()
    }
    const { pid, output } = child
    return { kind, dialect, url, key, databaseUrl: database.url, pid, output, stop }
  } catch (error) {
    await database.remove()
    throw error
  }
}

/**
 * Flushes what earlier runs or seeding left to write (dirty pages, a PostgreSQL checkpoint
 * due), which would otherwise land in the next measured window and slow its fsyncs.
 */
export async function settle(context: Context): Promise<void> {
  if (context.postgresUrl) await withClient(context.postgresUrl, (c) => c.query('checkpoint'))
  await runCommand('sync', [])
}

export interface ScratchDatabase {
  url: string
  remove(): Promise<void>
}

/** An empty SQLite file in a temp dir, or an empty PostgreSQL database `bench_*`. */
export async function scratchDatabase(
  context: Context,
  dialect: Dialect,
): Promise<ScratchDatabase> {
  if (dialect === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'catalog-bench-'))
    const remove = context.cleanup.add(`remove ${dir}`, () =>
      rmSync(dir, { recursive: true, force: true }),
    )
    return { url: `sqlite:${join(dir, 'catalog.db')}`, remove }
  }
  const admin = context.postgresUrl
  if (!admin) throw new Error('PostgreSQL runs need BENCH_POSTGRES_URL')
  const name = `bench_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`
  await withClient(admin, (client) => client.query(`create database ${name}`))
  const url = new URL(admin)
  url.pathname = `/${name}`
  const remove = context.cleanup.add(`drop database ${name}`, () =>
    withClient(admin, (client) => client.query(`drop database if exists ${name} with (force)`)),
  )
  return { url: url.toString(), remove }
}

export async function withClient<T>(url: string, work: (client: pg.Client) => Promise<T>) {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return await work(client)
  } finally {
    await client.end()
  }
}

/**
 * Rows of a table, or the sum of their versions, read from a server's database while it
 * runs: every write answered 200 must be found there (a change moves its row's version by 1).
 */
export async function countStored(
  databaseUrl: string,
  table: 'products' | 'variants',
  what: 'rows' | 'versions',
): Promise<number> {
  const figure = what === 'rows' ? 'count(*)' : 'coalesce(sum(version), 0)'
  if (databaseUrl.startsWith('sqlite:')) {
    const db = new SqliteDatabase(databaseUrl.slice('sqlite:'.length), { readonly: true })
    try {
      return db.prepare(`select ${figure} from ${table}`).pluck().get() as number
    } finally {
      db.close()
    }
  }
  return withClient(databaseUrl, async (client) => {
    const result = await client.query<{ n: string }>(`select ${figure} as n from ${table}`)
    return Number(result.rows[0]?.n ?? 0)
  })
}

/** Where the figures came from: they compare only within one machine and one run. */
export async function machineFacts(postgresUrl: string | undefined) {
  const memory = new SqliteDatabase(':memory:')
  const sqlite = memory.prepare('select sqlite_version()').pluck().get() as string
  memory.close()
  const git = (...args: string[]) =>
    runCommand('git', args, { cwd: ROOT }).then(
      (out) => out.trim(),
      () => null,
    )
  return {
    node: process.version,
    cpu: `${os.availableParallelism()} x ${os.cpus()[0]?.model.trim()}`,
    memoryGiB: Math.round(os.totalmem() / 2 ** 30),
    sqlite,
    postgres: postgresUrl
      ? await withClient(postgresUrl, async (c) => (await c.query('select version()')).rows[0])
      : null,
    commit: await git('rev-parse', 'HEAD'),
    srcChanged: ((await git('status', '--porcelain', '--', 'src')) ?? '') !== '',
  }
}
