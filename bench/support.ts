/**
 * What every part of the benchmark leans on: its settings, the undo steps of a run, child
 * processes, /proc readings, a small JSON client for setup requests, and summaries.
 */
import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'

// ---------------------------------------------------------------------------------------
// Settings, read from the environment once

export interface BenchConfig {
  /** Seconds of load before a server's first window (later windows get 1 s), thrown away. */
  readonly warmupS: number
  /** Seconds measured per scenario and server, split over ROUNDS windows. */
  readonly durationS: number
  readonly connections: number
  /** Admin URL of a PostgreSQL server on this machine; each run makes its own databases. */
  readonly postgresUrl: string | undefined
  /** Soak to 1,000,000 requests and import 1,000,000 variants (minutes). */
  readonly long: boolean
  /** Build dist/ first (BENCH_BUILD=0: it is up to date, as CI's is after npm ci). */
  readonly build: boolean
  readonly scale: boolean
  readonly scenarios: boolean
  readonly webhooks: boolean
  readonly metafields: boolean
}

export function loadBenchConfig(env: NodeJS.ProcessEnv = process.env): BenchConfig {
  const seconds = (name: string, fallback: number) => {
    const value = Number(env[name] || fallback)
    if (!Number.isInteger(value) || value < 1 || value > 3600) {
      throw new Error(`${name} must be a whole number of seconds from 1 to 3600`)
    }
    return value
  }
  const flag = (name: string, fallback: boolean) => {
    const raw = env[name] || (fallback ? '1' : '0')
    if (raw !== '0' && raw !== '1') throw new Error(`${name} must be 1 or 0`)
    return raw === '1'
  }
  const postgresUrl = env.BENCH_POSTGRES_URL || undefined
  if (postgresUrl !== undefined) {
    const url = new URL(postgresUrl)
    // The load only ever goes to this machine; so does the database it is measured against.
    if (!/^postgres(ql)?:$/.test(url.protocol) || !LOCAL_HOSTS.includes(url.hostname)) {
      throw new Error('BENCH_POSTGRES_URL must be a postgres:// URL on this machine (127.0.0.1)')
    }
  }
  return Object.freeze({
    warmupS: seconds('BENCH_WARMUP_S', 3),
    durationS: seconds('BENCH_DURATION_S', 10),
    connections: 16,
    postgresUrl,
    long: flag('BENCH_LONG', false),
    build: flag('BENCH_BUILD', true),
    scale: flag('BENCH_SCALE', true),
    scenarios: flag('BENCH_SCENARIOS', true),
    webhooks: flag('BENCH_WEBHOOKS', true),
    metafields: flag('BENCH_METAFIELDS', true),
  })
}

const LOCAL_HOSTS = ['127.0.0.1', 'localhost', '[::1]']
/** The only host the benchmark sends requests to. */
export const BENCH_HOST = '127.0.0.1'

// ---------------------------------------------------------------------------------------
// Undo steps (children, temp dirs, databases), run newest first however the run ends

export interface Cleanup {
  /** Registers an undo step; the returned function runs it early and unregisters it. */
  add(label: string, undo: () => Promise<unknown> | unknown): () => Promise<void>
  runAll(): Promise<void>
}

export function createCleanup(log = (line: string) => console.error(line)): Cleanup {
  const steps: { label: string; undo: () => Promise<unknown> | unknown }[] = []
  const run = async (step: (typeof steps)[number]) => {
    try {
      await step.undo()
    } catch (error) {
      log(`cleanup: ${step.label} failed: ${error instanceof Error ? error.message : error}`)
    }
  }
  let running: Promise<void> | undefined
  return {
    add(label, undo) {
      const step = { label, undo }
      steps.push(step)
      return async () => {
        const index = steps.indexOf(step)
        if (index >= 0) await run(steps.splice(index, 1)[0]!)
      }
    },
    runAll() {
      running ??= (async () => {
        for (let step = steps.pop(); step; step = steps.pop()) await run(step)
      })().finally(() => (running = undefined))
      return running
    },
  }
}

/**
 * Runs a command-line entry point: `main` gets the run's cleanup and returns the exit code.
 * Ctrl-C or SIGTERM cleans up, then exits 128 + the signal; a second signal exits at once.
 */
export async function runMain(name: string, main: (cleanup: Cleanup) => Promise<number>) {
  const cleanup = createCleanup()
  let signalled = false
  for (const [signal, code] of [
    ['SIGINT', 130],
    ['SIGTERM', 143],
    ['SIGHUP', 129],
  ] as const) {
    process.on(signal, () => {
      if (signalled) process.exit(code)
      signalled = true
      console.error(`\n${signal}: stopping, cleaning up (again to exit at once)`)
      void cleanup.runAll().finally(() => process.exit(code))
    })
  }
  try {
    process.exitCode = await main(cleanup)
  } catch (error) {
    // After a signal, whatever was under way fails as its children are stopped: no news.
    if (!signalled) console.error(`${name}: ${error instanceof Error ? error.stack : error}`)
    process.exitCode = 1
  } finally {
    await cleanup.runAll()
  }
}

// ---------------------------------------------------------------------------------------
// Child processes

export interface Child {
  readonly name: string
  readonly pid: number
  readonly process: ChildProcess
  /** The exit code (null after a signal), once the process has ended. */
  readonly exited: Promise<number | null>
  /** The last 8 KiB it wrote, to show why it failed. */
  output(): string
  /** SIGTERM, then SIGKILL after 15 s. */
  stop(): Promise<void>
}

/** Starts a program with its output captured; `ipc` opens a message channel to it. */
export function spawnChild(
  cleanup: Cleanup,
  name: string,
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  ipc = false,
): Child {
  const child = spawn(command, args, {
    env,
    stdio: ['ignore', 'pipe', 'pipe', ...(ipc ? (['ipc'] as const) : [])],
  })
  const pid = child.pid
  if (pid === undefined) throw new Error(`${name} could not be started`)
  let tail = ''
  const keep = (chunk: Buffer) => (tail = (tail + chunk.toString('utf8')).slice(-8192))
  child.stdout?.on('data', keep)
  child.stderr?.on('data', keep)
  const exited = new Promise<number | null>((resolve) => {
    child.once('exit', resolve)
    child.once('error', () => resolve(null))
  })
  const ended = () => child.exitCode !== null || child.signalCode !== null
  const stop = cleanup.add(`stop ${name} (pid ${pid})`, async () => {
    if (ended()) return
    child.kill('SIGTERM')
    if (!(await Promise.race([exited.then(() => true), sleep(15_000, false)])) && !ended()) {
      child.kill('SIGKILL')
      await exited
    }
  })
  return { name, pid, process: child, exited, output: () => tail, stop }
}

/** Runs a command to its end and returns its stdout; a non-zero exit rejects with its stderr. */
export function runCommand(
  command: string,
  args: string[],
  options: { env?: NodeJS.ProcessEnv; cwd?: string } = {},
): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(command, args, { ...options, maxBuffer: 16 << 20 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`${command} ${args.join(' ')}: ${stderr.trim() || error}`))
      else resolve(stdout)
    })
  })
}

/** Only what a child needs, so that nothing of this shell (NODE_OPTIONS, say) changes it. */
export function childEnv(settings: Record<string, string>): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH, HOME: process.env.HOME, ...settings }
}

export async function freePort(): Promise<number> {
  const server = createServer().listen(0, BENCH_HOST)
  await once(server, 'listening')
  const address = server.address()
  server.close()
  if (address === null || typeof address === 'string') throw new Error('no free port found')
  return address.port
}

/** Polls `url` until it answers 200; fails as soon as the child ends, or after 2 minutes. */
export async function waitUntilServing(url: string, child: Child): Promise<void> {
  const deadline = Date.now() + 120_000
  for (;;) {
    if (child.process.exitCode !== null || child.process.signalCode !== null) {
      throw new Error(`${child.name} ended before serving:\n${child.output()}`)
    }
    if ((await fetch(url).catch(() => undefined))?.status === 200) return
    if (Date.now() > deadline) throw new Error(`${child.name} did not answer:\n${child.output()}`)
    await sleep(50)
  }
}

// ---------------------------------------------------------------------------------------
// /proc

/** RSS now (VmRSS) and its peak (VmHWM), in MiB; throws once the process has ended. */
export function readMemory(pid: number): { rssMiB: number; peakMiB: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  const kb = (field: string) => {
    const match = new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(status)
    // A process that has exited but is not yet reaped has no memory lines.
    if (!match) throw new Error(`/proc/${pid}/status has no ${field}`)
    return Number(match[1])
  }
  return { rssMiB: kb('VmRSS') / 1024, peakMiB: kb('VmHWM') / 1024 }
}

/** Makes VmHWM start again from the current RSS (clear_refs 5); false where refused. */
export function resetPeakRss(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5')
    return true
  } catch {
    return false
  }
}

let ticks: number | undefined
const ticksPerSecond = () =>
  (ticks ??= Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' })) || 100)

/** CPU time (user + system) a process has used, in seconds; 0 once it is gone. */
export function cpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    // The fields after the command name, which is in parentheses and may hold spaces.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return (Number(fields[11]) + Number(fields[12])) / ticksPerSecond()
  } catch {
    return 0
  }
}

/** Busy CPU time of the whole machine (all but idle and iowait), in seconds. */
export function machineCpuSeconds(): number {
  const fields = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!.split(/\s+/).slice(1)
  return [0, 1, 2, 5, 6, 7].reduce((sum, i) => sum + Number(fields[i] ?? 0), 0) / ticksPerSecond()
}

/** CPU time of every `postgres` process, which works for the server under test. */
export function postgresCpuSeconds(): number {
  let total = 0
  for (const entry of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      if (readFileSync(`/proc/${entry}/comm`, 'utf8').trim() === 'postgres') {
        total += cpuSeconds(Number(entry))
      }
    } catch {
      // ended meanwhile
    }
  }
  return total
}

/**
 * CPU seconds spent from this call until the returned function is called: by the servers
 * under test, by PostgreSQL's processes, by the whole machine, and by this run's own
 * processes (the servers, the load generator, this one); `elapsed` in seconds.
 */
export function watchCpu(serverPids: number[], loadPid: number) {
  const read = () => {
    const server = serverPids.reduce((sum, pid) => sum + cpuSeconds(pid), 0)
    const ours = server + cpuSeconds(loadPid) + cpuSeconds(process.pid)
    const at = performance.now() / 1000
    return { server, ours, postgres: postgresCpuSeconds(), machine: machineCpuSeconds(), at }
  }
  const before = read()
  return () => {
    const after = read()
    const since = (key: keyof typeof before) => after[key] - before[key]
    return {
      server: since('server'),
      ours: since('ours'),
      postgres: since('postgres'),
      machine: since('machine'),
      elapsed: since('at'),
    }
  }
}

// ---------------------------------------------------------------------------------------
// Setup requests

/** A JSON client of one server for setup requests (never timed); only to this machine. */
export function apiClient(url: string, key: string) {
  if (new URL(url).hostname !== BENCH_HOST) throw new Error(`not a local URL: ${url}`)
  const send = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${key}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    })
    return { status: response.status, text: await response.text() }
  }
  return {
    send,
    /** A request that must answer 200 (or `status`); its parsed body. */
    async json<T>(method: string, path: string, body?: unknown, status = 200): Promise<T> {
      const response = await send(method, path, body)
      if (response.status !== status) {
        throw new Error(`${method} ${path}: ${response.status} ${response.text.slice(0, 300)}`)
      }
      return JSON.parse(response.text) as T
    },
  }
}
export type ApiClient = ReturnType<typeof apiClient>

// ---------------------------------------------------------------------------------------
// Summaries

export interface LatencySummary {
  count: number
  p50: number
  p99: number
  mean: number
  max: number
}

/** Exact percentiles (nearest rank) of raw samples, in ms. */
export function summarize(samples: ArrayLike<number>): LatencySummary {
  const sorted = Float64Array.from(samples).sort()
  const count = sorted.length
  const at = (fraction: number) => sorted[Math.max(0, Math.ceil(fraction * count) - 1)] ?? NaN
  const mean = count === 0 ? NaN : sorted.reduce((sum, value) => sum + value, 0) / count
  return { count, p50: at(0.5), p99: at(0.99), mean, max: sorted[count - 1] ?? NaN }
}

/** `a / b`, or null when either is missing or b is 0, so that no ratio is made up. */
export function ratio(a: number | null | undefined, b: number | null | undefined): number | null {
  if (a == null || b == null || !Number.isFinite(a) || !Number.isFinite(b) || b === 0) return null
  return a / b
}

/** { a: 1 } and { a: 2, b: 1 } make { a: 3, b: 1 }. */
export function addCounts(counts: Record<string, number>[]): Record<string, number> {
  const total: Record<string, number> = {}
  for (const each of counts) {
    for (const [key, count] of Object.entries(each)) total[key] = (total[key] ?? 0) + count
  }
  return total
}
