import { execFile, fork, spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { createServer } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import type { Cleanup } from './cleanup.js'
import { BENCH_HOST, HttpClient } from './http-client.js'

/** A child process this run started; stopped by the run's cleanup unless stopped before. */
export interface Child {
  readonly name: string
  readonly pid: number
  readonly process: ChildProcess
  /** Resolves with the exit code (null after a signal) once the process has ended. */
  readonly exited: Promise<number | null>
  /** The last few kilobytes it wrote to stdout and stderr, to show why it failed. */
  output(): string
  /** SIGTERM, then SIGKILL if it has not ended within the grace period. */
  stop(): Promise<void>
}

const OUTPUT_TAIL_BYTES = 8 * 1024
const STOP_GRACE_MS = 15_000

/** Starts a program with its output captured (kept as a short tail). */
export function spawnChild(
  cleanup: Cleanup,
  name: string,
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv,
): Child {
  return track(cleanup, name, spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'] }))
}

/** Starts a Node.js script with an IPC channel; its output goes to ours. */
export function forkChild(
  cleanup: Cleanup,
  name: string,
  script: string,
  execArgv: string[],
): Child {
  return track(cleanup, name, fork(script, [], { execArgv, stdio: 'inherit' }))
}

function track(cleanup: Cleanup, name: string, child: ChildProcess): Child {
  const pid = child.pid
  if (pid === undefined) throw new Error(`${name} could not be started`)
  let tail = ''
  const keep = (chunk: Buffer) => {
    tail = (tail + chunk.toString('utf8')).slice(-OUTPUT_TAIL_BYTES)
  }
  child.stdout?.on('data', keep)
  child.stderr?.on('data', keep)
  const exited = new Promise<number | null>((resolve) => {
    child.once('exit', (code) => resolve(code))
    child.once('error', () => resolve(null))
  })
  const ended = () => child.exitCode !== null || child.signalCode !== null

  const terminate = async () => {
    if (ended()) return
    child.kill('SIGTERM')
    const stopped = await Promise.race([exited.then(() => true), sleep(STOP_GRACE_MS, false)])
    if (!stopped && !ended()) {
      child.kill('SIGKILL')
      await exited
    }
  }
  const stop = cleanup.add(`stop ${name} (pid ${pid})`, terminate)
  return { name, pid, process: child, exited, output: () => tail, stop }
}

/** Runs a command to its end and returns its stdout; a non-zero exit rejects with its stderr. */
export function runCommand(
  command: string,
  args: string[],
  options: { env?: NodeJS.ProcessEnv; cwd?: string } = {},
): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      command,
      args,
      { ...options, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        if (error) {
          reject(
            new Error(`${command} ${args.join(' ')} failed: ${stderr.trim() || error.message}`),
          )
        } else {
          resolve(stdout)
        }
      },
    )
  })
}

/** A TCP port that was free a moment ago on the benchmark's host. */
export async function freePort(): Promise<number> {
  const server = createServer()
  server.listen(0, BENCH_HOST)
  await once(server, 'listening')
  const address = server.address()
  server.close()
  if (address === null || typeof address === 'string') throw new Error('no free port found')
  return address.port
}

/** Polls `url` until it answers 200; fails as soon as the child ends or the time is up. */
export async function waitUntilServing(url: string, child: Child, timeoutMs = 30_000) {
  const client = new HttpClient(new URL(url).origin)
  const deadline = Date.now() + timeoutMs
  try {
    for (;;) {
      const { exitCode, signalCode } = child.process
      if (exitCode !== null || signalCode !== null) {
        throw new Error(
          `${child.name} ended (${exitCode ?? signalCode}) before serving:\n${child.output()}`,
        )
      }
      try {
        if ((await client.send({ method: 'GET', path: new URL(url).pathname })).status === 200)
          return
      } catch {
        // not listening yet
      }
      if (Date.now() > deadline) {
        throw new Error(
          `${child.name} did not answer ${url} within ${timeoutMs} ms:\n${child.output()}`,
        )
      }
      await sleep(50)
    }
  } finally {
    client.close()
  }
}
