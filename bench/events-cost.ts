/**
 * What events cost the writes: creates and PATCHes of this build against another build of the
 * service (the commit before events), side by side, in alternating windows on fresh
 * databases. Not part of `npm run bench`; run by hand:
 *
 *   tsx bench/events-cost.ts <other build's root> [sqlite|postgres] [seconds per window] [rounds]
 *
 * with BENCH_POSTGRES_URL for PostgreSQL. Both builds must have `dist/` built. Each window
 * is 16 connections of autocannon for the given seconds (5 by default); the order of the two
 * servers alternates round by round (A B, B A, ...), and the ratio is taken of the sums.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import autocannon from 'autocannon'
import pg from 'pg'

const HERE = fileURLToPath(new URL('..', import.meta.url))
const [otherRoot, dialect = 'sqlite', secondsArg = '5', roundsArg = '6'] = process.argv.slice(2)
if (!otherRoot)
  throw new Error('usage: tsx bench/events-cost.ts <other root> [dialect] [s] [rounds]')
const SECONDS = Number(secondsArg)
const ROUNDS = Number(roundsArg)
const API = '/api/commerce/v1'

const createdDatabases: string[] = []

async function databaseUrl(): Promise<string> {
  if (dialect === 'sqlite')
    return `sqlite:${join(mkdtempSync(join(tmpdir(), 'events-cost-')), 'c.db')}`
  const admin = process.env.BENCH_POSTGRES_URL
  if (!admin) throw new Error('BENCH_POSTGRES_URL is not set')
  const name = `events_cost_${randomBytes(4).toString('hex')}`
  const client = new pg.Client({ connectionString: admin })
  await client.connect()
  await client.query(`create database ${name}`)
  await client.end()
  createdDatabases.push(name)
  const url = new URL(admin)
  url.pathname = `/${name}`
  return url.toString()
}

interface Server {
  name: string
  url: string
  key: string
  child: ChildProcess
}

async function start(name: string, root: string, port: number): Promise<Server> {
  const DATABASE_URL = await databaseUrl()
  const env = { ...process.env, DATABASE_URL, RATE_LIMIT_PER_MINUTE: '0', LOG_LEVEL: 'warn' }
  const main = join(root, 'dist/cli/main.js')
  spawnSync('node', [main, 'migrate'], { env })
  const made = spawnSync(
    'node',
    [main, 'keys', 'create', '--store', 's', '--scopes', 'read,write', '--json'],
    { env },
  )
  const key = JSON.parse(made.stdout.toString()).key as string
  const child = spawn('node', [main, 'serve'], {
    env: { ...env, PORT: String(port) },
    stdio: 'ignore',
  })
  const url = `http://127.0.0.1:${port}`
  for (let i = 0; i < 100; i++) {
    try {
      if ((await fetch(`${url}/healthz`)).ok) return { name, url, key, child }
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error(`${name} did not start`)
}

async function createOne(server: Server, name: string): Promise<string> {
  const res = await fetch(`${server.url}${API}/products`, {
    method: 'POST',
    headers: { authorization: `Bearer ${server.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name }),
  })
  return ((await res.json()) as { data: { id: string } }).data.id
}

/** Requests per second of one window; every answer must be a 200. */
function window(server: Server, scenario: 'create' | 'patch', ids: string[]): Promise<number> {
  let n = 0
  return new Promise((resolve, reject) => {
    autocannon(
      {
        url: server.url,
        connections: 16,
        duration: SECONDS,
        requests: [
          {
            setupRequest: (request: autocannon.Request) => {
              n++
              const headers = {
                authorization: `Bearer ${server.key}`,
                'content-type': 'application/json',
              }
              return scenario === 'create'
                ? {
                    ...request,
                    method: 'POST',
                    path: `${API}/products`,
                    headers,
                    body: JSON.stringify({ name: `Bench product ${n}`, price: 19.99 }),
                  }
                : {
                    ...request,
                    method: 'PATCH',
                    path: `${API}/products/${ids[n % ids.length]}`,
                    headers,
                    // Each PATCH a real change: the price moves every time.
                    body: JSON.stringify({ price: n / 100 }),
                  }
            },
          },
        ],
      },
      (error: unknown, result: autocannon.Result) => {
        if (error) return reject(error)
        if (result.non2xx > 0 || result.errors > 0)
          return reject(
            new Error(`${server.name}: ${result.non2xx} non-2xx, ${result.errors} errors`),
          )
        resolve(result.requests.total / (result.duration || SECONDS))
      },
    )
  })
}

const servers = [await start('events', HERE, 4711), await start('before', otherRoot, 4712)]
try {
  const ids = new Map<Server, string[]>()
  for (const server of servers) {
    const made: string[] = []
    for (let i = 0; i < 300; i++) made.push(await createOne(server, `Patched ${i}`))
    ids.set(server, made)
  }
  for (const scenario of ['create', 'patch'] as const) {
    const totals = new Map<Server, number[]>(servers.map((server) => [server, []]))
    for (const server of servers) await window(server, scenario, ids.get(server)!) // warm-up
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? servers : [...servers].reverse()
      for (const server of order) {
        spawnSync('sync')
        totals.get(server)!.push(await window(server, scenario, ids.get(server)!))
      }
    }
    const [mine, theirs] = servers.map((server) => totals.get(server)!)
    const sum = (values: number[]) => values.reduce((a, b) => a + b, 0)
    const ratio = sum(mine!) / sum(theirs!)
    const fmt = (values: number[]) => values.map((v) => Math.round(v)).join(', ')
    console.log(
      `${dialect} ${scenario}: with events ${Math.round(sum(mine!) / ROUNDS)} req/s [${fmt(mine!)}], ` +
        `before ${Math.round(sum(theirs!) / ROUNDS)} req/s [${fmt(theirs!)}], ratio ${ratio.toFixed(3)}`,
    )
  }
} finally {
  await Promise.all(
    servers.map(
      (server) =>
        new Promise((resolve) => {
          server.child.once('exit', resolve)
          server.child.kill('SIGTERM')
        }),
    ),
  )
  if (createdDatabases.length > 0) {
    const client = new pg.Client({ connectionString: process.env.BENCH_POSTGRES_URL })
    await client.connect()
    for (const name of createdDatabases) await client.query(`drop database if exists ${name}`)
    await client.end()
  }
}
