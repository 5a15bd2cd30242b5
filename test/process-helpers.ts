import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import http, { type IncomingHttpHeaders } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { TestContext } from 'node:test'
import { fileURLToPath } from 'node:url'
import { SETTINGS } from '../src/config.js'
import type { Dialect } from '../src/db/database.js'
import { API, createTestSchema } from './helpers.js'

/** The built `catalog` bin (package.json points `catalog` here); `npm test` builds it first. */
export const CATALOG_BIN = fileURLToPath(new URL('../dist/cli/main.js', import.meta.url))

/** A first-run or created secret as `catalog` prints it. */
export const SECRET_PATTERN = /ck_[0-9A-Za-z]{43}/

// Bounds for a process that hangs, not goals of speed: on a loaded 2-core machine (several
// test files or suites at once) a process that starts in a second alone can take ten times that.
const COMMAND_TIMEOUT_MS = 60_000
const START_TIMEOUT_MS = 60_000
const EXIT_TIMEOUT_MS = 30_000

/** A temporary directory, removed when the test ends. */
export async function tempDir(t: TestContext): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'catalog-test-'))
  t.after(() => rm(dir, { recursive: true, force: true }))
  return dir
}

/** A DATABASE_URL of the test's own: a SQLite file in a temporary directory, or a fresh PostgreSQL schema. */
export async function databaseUrlFor(t: TestContext, dialect: Dialect): Promise<string> {
  if (dialect === 'postgres') return createTestSchema(t)
  return `sqlite:${join(await tempDir(t), 'catalog.db')}`
}

/** The environment a `catalog` process gets: this one, minus settings the test did not choose. */
function environment(env: Record<string, string>): NodeJS.ProcessEnv {
  const base = { ...process.env }
  for (const name of [...Object.keys(SETTINGS), 'NODE_OPTIONS']) {
    delete base[name]
  }
  return { ...base, ...env }
}

export interface CommandResult {
  /** The exit code, or null when a signal ended the process. */
  code: number | null
  signal: NodeJS.Signals | null
  stdout: string
  stderr: string
}

/** Runs `catalog ARGS` to its end and returns what it printed and how it exited. */
export function runCatalog(
  args: string[],
  env: Record<string, string> = {},
  cwd?: string,
): Promise<CommandResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CATALOG_BIN, ...args], {
      env: environment(env),
      cwd,
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: COMMAND_TIMEOUT_MS,
      killSignal: 'SIGKILL',
    })
    let stdout = ''
    let stderr = ''
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk))
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
    child.on('error', reject)
    child.on('close', (code, signal) => {
      if (signal === 'SIGKILL') {
        reject(new Error(`catalog ${args.join(' ')} timed out\n${stdout}\n${stderr}`))
      } else {
        resolve({ code, signal, stdout, stderr })
      }
    })
  })
}

/** Runs `catalog keys create --json` and returns the key it printed. */
export async function createKey(
  databaseUrl: string,
  store: string,
  scopes = 'read,write',
): Promise<{ id: string; key: string; store: string; scopes: string[] }> {
  const result = await runCatalog(
    ['keys', 'create', '--store', store, '--scopes', scopes, '--json'],
    { DATABASE_URL: databaseUrl },
  )
  if (result.code !== 0) {
    throw new Error(`keys create exited ${result.code}: ${result.stderr}`)
  }
  return JSON.parse(result.stdout)
}

export interface Exit {
  code: number | null
  signal: NodeJS.Signals | null
}

export interface ServeProcess {
  child: ChildProcess
  /** e.g. http://127.0.0.1:40621, read from the server's own log line. */
  url: string
  /** Everything printed on stdout so far. */
  stdout(): string
  stderr(): string
  /** Resolves when a line of stdout matches, or rejects after the timeout or at exit. */
  waitForOutput(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>
  /** Resolves when the process has exited. */
  exited: Promise<Exit>
  /** Sends a signal and waits for the exit; fails the test if it does not come in time. */
  stop(signal: NodeJS.Signals): Promise<Exit>
}

/**
 * Starts `catalog serve` on a port the system picks and waits until it listens and has
 * answered `GET /healthz`, as a supervisor's readiness probe would (`untilReady: false` stops
 * at the "Server listening" log line). The process is killed when the test ends, whatever
 * happened.
 */
export async function startServe(
  t: TestContext,
  env: Record<string, string> & { DATABASE_URL: string },
  { untilReady = true }: { untilReady?: boolean } = {},
): Promise<ServeProcess> {
  const child = spawn(process.execPath, [CATALOG_BIN, 'serve'], {
    env: environment({ PORT: '0', LOG_LEVEL: 'info', ...env }),
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  t.after(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
  })
  let stdout = ''
  let stderr = ''
  let listeners: (() => void)[] = []
  const notify = () => {
    for (const listener of listeners) listener()
  }
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk
    notify()
  })
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
  let ended = false
  const exited = new Promise<Exit>((resolve) => {
    child.on('close', (code, signal) => {
      ended = true
      notify()
      resolve({ code, signal })
    })
  })

  const waitForOutput = (pattern: RegExp, timeoutMs = START_TIMEOUT_MS) =>
    new Promise<RegExpMatchArray>((resolve, reject) => {
      const check = () => {
        const match = stdout.match(pattern)
        if (match) return done(() => resolve(match))
        if (ended) {
          done(() =>
            reject(
              new Error(`catalog serve exited before printing ${pattern}\n${stdout}\n${stderr}`),
            ),
          )
        }
      }
      const timer = setTimeout(
        () =>
          done(() =>
            reject(new Error(`catalog serve did not print ${pattern}\n${stdout}\n${stderr}`)),
          ),
        timeoutMs,
      )
      const done = (settle: () => void) => {
        clearTimeout(timer)
        listeners = listeners.filter((listener) => listener !== check)
        settle()
      }
      listeners.push(check)
      check()
    })

  const [, url] = await waitForOutput(/"msg":"Server listening at (http:\/\/[^"]+)"/)
  if (untilReady) {
    const health = await request({ url: url! }, 'GET', '/healthz')
    if (health.status !== 200) throw new Error(`GET /healthz answered ${health.status}`)
  }
  return {
    child,
    url: url!,
    stdout: () => stdout,
    stderr: () => stderr,
    waitForOutput,
    exited,
    stop: async (signal) => {
      child.kill(signal)
      let timer: NodeJS.Timeout | undefined
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () =>
            reject(new Error(`catalog serve did not exit after ${signal}\n${stdout}\n${stderr}`)),
          EXIT_TIMEOUT_MS,
        )
      })
      try {
        return await Promise.race([exited, timeout])
      } finally {
        clearTimeout(timer)
      }
    },
  }
}

export interface JsonResponse {
  status: number
  headers: IncomingHttpHeaders
  body: any
}

/**
 * One JSON request to a running server, on a connection of its own that closes after the
 * answer, so no pooled keep-alive connection outlives the test or holds a shutdown open.
 */
export function request(
  server: { url: string },
  method: 'GET' | 'POST',
  path: string,
  options: { key?: string; body?: unknown } = {},
): Promise<JsonResponse> {
  const headers: Record<string, string> = {}
  if (options.key !== undefined) headers.authorization = `Bearer ${options.key}`
  const payload = options.body === undefined ? undefined : JSON.stringify(options.body)
  if (payload !== undefined) {
    headers['content-type'] = 'application/json'
    headers['content-length'] = String(Buffer.byteLength(payload))
  }
  return new Promise((resolve, reject) => {
    const req = http.request(`${server.url}${path}`, {
      method,
      headers,
      agent: false,
      timeout: 10_000,
    })
    req.on('timeout', () => req.destroy(new Error(`${method} ${path} timed out`)))
    req.on('error', reject)
    req.on('response', (response) => {
      let text = ''
      response.setEncoding('utf8')
      response.on('data', (chunk: string) => (text += chunk))
      response.on('error', reject)
      response.on('end', () => {
        let body: unknown = text
        try {
          body = JSON.parse(text)
        } catch {
          // Left as text: the assertion that follows shows it.
        }
        resolve({ status: response.statusCode!, headers: response.headers, body })
      })
    })
    req.end(payload)
  })
}

/** POSTs a JSON body under the API prefix and returns `data`; fails unless the answer is 200. */
export async function create(
  server: { url: string },
  key: string,
  path: string,
  body: Record<string, unknown>,
): Promise<Record<string, any>> {
  const response = await request(server, 'POST', `${API}${path}`, { key, body })
  if (response.status !== 200) {
    throw new Error(`POST ${path} answered ${response.status}: ${JSON.stringify(response.body)}`)
  }
  return response.body.data
}
