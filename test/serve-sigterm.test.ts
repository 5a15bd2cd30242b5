import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import http from 'node:http'
import { createServer } from 'node:net'
import { describe, it, type TestContext } from 'node:test'
import { fileURLToPath } from 'node:url'
import { SIGNAL_COPY_WINDOW_MS } from '../src/cli/serve.command.js'
import { API } from './helpers.js'
import {
  create,
  createKey,
  databaseUrlFor,
  request,
  startServe,
  type Exit,
} from './process-helpers.js'

const RUNS = 20
const EXIT_TIMEOUT_MS = 30_000
/** npm, then node: slower than `catalog serve` alone on a busy machine. */
const NPM_START_TIMEOUT_MS = 60_000
const ROOT = fileURLToPath(new URL('..', import.meta.url))

// better-sqlite3 12 on Node 24 aborted now and then, at start-up or at exit (`Assertion failed:
// (env) != nullptr` in a Statement's finalizer, then SIGABRT): the signature this looks for, on
// whichever Node runs the suite (docs/decisions/node-versions.md).
const ABORTED = /Assertion failed|Abort|core dumped/

describe('catalog serve on SQLite, started and stopped again and again', () => {
  it(`${RUNS} times in a row: writes are served, SIGTERM exits 0, no run aborts`, async (t) => {
    const DATABASE_URL = await databaseUrlFor(t, 'sqlite')
    const { key } = await createKey(DATABASE_URL, 'shop')
    for (let run = 1; run <= RUNS; run++) {
      const server = await startServe(t, { DATABASE_URL })
      const product = await create(server, key, '/products', { name: `Run ${run}` })
      await create(server, key, `/products/${product.id}/variants`, { name: 'Red' })
      await create(server, key, `/products/${product.id}/variants`, { name: 'Blue' })
      const exit = await server.stop('SIGTERM')
      const stderr = server.stderr()
      assert.deepEqual(exit, { code: 0, signal: null }, `run ${run} exited so:\n${stderr}`)
      assert.doesNotMatch(stderr, ABORTED, `run ${run}`)
    }
    // Every run's writes were kept.
    const server = await startServe(t, { DATABASE_URL })
    const listed = await request(server, 'GET', `${API}/products?limit=100`, { key })
    assert.equal(listed.status, 200)
    assert.equal(listed.body.data.length, RUNS)
    assert.deepEqual(await server.stop('SIGTERM'), { code: 0, signal: null })
  })
})

describe('npm start', () => {
  // What Docker's `CMD npm start`, systemd and most process managers do: signal npm itself.
  // npm passes the signal to its script's shell; the server must be the one that gets it.
  it('SIGTERM sent to npm stops the server: it exits and frees its port', async (t) => {
    const DATABASE_URL = await databaseUrlFor(t, 'sqlite')
    const { key } = await createKey(DATABASE_URL, 'shop')
    const npm = startNpm(t, { DATABASE_URL, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info' })
    const listening = await npm.waitFor(/"pid":(\d+)[^\n]*"msg":"Server listening at (http:[^"]+)"/)
    const pid = Number(listening[1])
    const url = listening[2]!
    t.after(() => {
      if (alive(pid)) process.kill(pid, 'SIGKILL')
    })
    await create({ url }, key, '/products', { name: 'Started by npm' })

    npm.child.kill('SIGTERM')
    const npmExit = await Promise.race([
      npm.exited,
      new Promise<never>((_, reject) =>
        setTimeout(() => reject(new Error('npm did not exit after SIGTERM')), EXIT_TIMEOUT_MS),
      ),
    ])
    await waitUntil(() => !alive(pid), `the server (pid ${pid}) still runs after npm exited`)
    assert.equal(await portIsFree(Number(new URL(url).port)), true, 'the port is free again')
    assert.doesNotMatch(npm.output(), ABORTED)
    // npm answers a signalled script with its own exit; the server, handling SIGTERM, exits 0.
    assert.match(npm.output(), /"msg":"shutting down/)
    t.diagnostic(`npm exited ${JSON.stringify(npmExit)}`)
  })
})

describe('copies of one signal are one signal; a later one forces', () => {
  it('two SIGINTs a few ms apart: the request in flight is answered, "stopped", exit 0', async (t) => {
    const DATABASE_URL = await databaseUrlFor(t, 'sqlite')
    const { key } = await createKey(DATABASE_URL, 'shop')
    const server = await startServe(t, { DATABASE_URL, LOG_LEVEL: 'debug' })
    const held = holdCreate(server, key, 'held-across-copies', server.waitForOutput)
    await held.arrived

    server.child.kill('SIGINT')
    await sleep(5)
    server.child.kill('SIGINT')
    // Past the window: a forced exit would have come by now.
    await sleep(SIGNAL_COPY_WINDOW_MS + 500)
    assert.equal(server.child.exitCode, null, `the server exited early:\n${server.stdout()}`)

    held.finish()
    assert.equal((await held.response).status, 200, 'the request in flight is answered')
    const exit = await Promise.race([
      server.exited,
      sleep(EXIT_TIMEOUT_MS).then(() => assert.fail(`no exit:\n${server.stdout()}`)),
    ])
    assert.deepEqual(exit, { code: 0, signal: null }, server.stdout())
    assert.match(server.stdout(), /"msg":"stopped"/)
    assert.doesNotMatch(server.stdout(), /second signal/)
  })

  it(`a SIGINT more than ${SIGNAL_COPY_WINDOW_MS} ms after the first still forces an exit`, async (t) => {
    const DATABASE_URL = await databaseUrlFor(t, 'sqlite')
    const { key } = await createKey(DATABASE_URL, 'shop')
    const server = await startServe(t, { DATABASE_URL, LOG_LEVEL: 'debug' })
    const held = holdCreate(server, key, 'held-until-forced', server.waitForOutput)
    await held.arrived

    server.child.kill('SIGINT')
    await server.waitForOutput(/"msg":"shutting down/)
    await sleep(SIGNAL_COPY_WINDOW_MS * 2)
    assert.equal(server.child.exitCode, null, 'still waiting for the request in flight')
    const exit = await server.stop('SIGINT')
    assert.deepEqual(exit, { code: 1, signal: null })
    assert.match(server.stdout(), /"msg":"second signal: exiting without waiting"/)
    assert.doesNotMatch(server.stdout(), /"msg":"stopped"/)
  })

  // A terminal's Ctrl-C: SIGINT to npm's whole process group, so the server gets the
  // terminal's copy and npm's own, passed on a few milliseconds later.
  it('Ctrl-C on npm start (SIGINT to its process group): a graceful stop', async (t) => {
    const DATABASE_URL = await databaseUrlFor(t, 'sqlite')
    const { key } = await createKey(DATABASE_URL, 'shop')
    const npm = startNpm(t, { DATABASE_URL, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'debug' })
    const listening = await npm.waitFor(/"pid":(\d+)[^\n]*"msg":"Server listening at (http:[^"]+)"/)
    const pid = Number(listening[1])
    const url = listening[2]!
    t.after(() => {
      if (alive(pid)) process.kill(pid, 'SIGKILL')
    })
    const held = holdCreate({ url }, key, 'held-across-ctrl-c', npm.waitFor)
    await held.arrived

    process.kill(-npm.child.pid!, 'SIGINT')
    await sleep(SIGNAL_COPY_WINDOW_MS + 500)
    assert.equal(alive(pid), true, `the server exited early:\n${npm.output()}`)
    held.finish()
    assert.equal((await held.response).status, 200, 'the request in flight is answered')
    await waitUntil(() => !alive(pid), `the server (pid ${pid}) still runs`)
    await npm.waitFor(/"msg":"stopped"/)
    assert.doesNotMatch(npm.output(), /second signal/)
  })
})

/**
 * A create whose body is half sent: the server has taken it in (its log says so) and waits
 * for the rest, so it is surely in flight when the signals come.
 */
function holdCreate(
  server: { url: string },
  key: string,
  requestId: string,
  waitFor: (pattern: RegExp) => Promise<RegExpMatchArray>,
) {
  const body = JSON.stringify({ name: requestId })
  const half = Math.floor(body.length / 2)
  const req = http.request(`${server.url}${API}/products`, {
    method: 'POST',
    agent: false,
    headers: {
      authorization: `Bearer ${key}`,
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(body)),
      'x-request-id': requestId,
    },
  })
  const response = new Promise<{ status: number | string }>((resolve) => {
    req.on('error', (error: NodeJS.ErrnoException) => resolve({ status: String(error.code) }))
    req.on('response', (res) => {
      res.resume()
      res.on('end', () => resolve({ status: res.statusCode! }))
    })
  })
  req.write(body.slice(0, half))
  return {
    response,
    arrived: waitFor(new RegExp(`"reqId":"${requestId}"[^\n]*"msg":"incoming request"`)),
    finish: () => req.end(body.slice(half)),
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms))
}

/** `npm start` in the repository, with the given settings; killed when the test ends. */
function startNpm(t: TestContext, env: Record<string, string>) {
  const base = { ...process.env }
  delete base.NODE_OPTIONS
  // Under `npm test`, the npm that runs it; run directly, the one on PATH. In a process group
  // of its own, so that whatever it started can be killed when the test ends, even a server
  // that npm left behind before the test learnt its pid.
  const npmCli = process.env.npm_execpath
  const [command, args] = npmCli?.endsWith('.js')
    ? [process.execPath, [npmCli, 'start']]
    : ['npm', ['start']]
  const child = spawn(command, args, { cwd: ROOT, env: { ...base, ...env }, detached: true })
  t.after(() => {
    try {
      process.kill(-child.pid!, 'SIGKILL')
    } catch {
      // The group is gone: everything in it has exited.
    }
    child.stdout.destroy()
    child.stderr.destroy()
  })
  let output = ''
  let listeners: (() => void)[] = []
  const append = (chunk: string) => {
    output += chunk
    for (const listener of listeners) listener()
  }
  child.stdout.setEncoding('utf8').on('data', append)
  child.stderr.setEncoding('utf8').on('data', append)
  // 'exit', not 'close': a server left behind would hold npm's output open.
  const exited = new Promise<Exit>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  )
  const waitFor = (pattern: RegExp) =>
    new Promise<RegExpMatchArray>((resolve, reject) => {
      const timer = setTimeout(() => {
        reject(new Error(`npm start did not print ${pattern}\n${output}`))
      }, NPM_START_TIMEOUT_MS)
      const check = () => {
        const match = output.match(pattern)
        if (!match) return
        clearTimeout(timer)
        listeners = listeners.filter((listener) => listener !== check)
        resolve(match)
      }
      listeners.push(check)
      check()
    })
  return { child, exited, waitFor, output: () => output }
}

/** Whether a process runs (one that exited but is not yet reaped, a zombie, does not). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
  } catch {
    return false
  }
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'))
  } catch {
    return true // no /proc (not Linux): signal 0 reached it
  }
}

async function waitUntil(condition: () => boolean, message: string): Promise<void> {
  const deadline = Date.now() + EXIT_TIMEOUT_MS
  while (!condition()) {
    if (Date.now() > deadline) assert.fail(message)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer()
    probe.once('error', () => resolve(false))
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)))
  })
}
