/**
 * What one request costs the service's process, for two builds side by side: a tool for
 * judging a change to the hot path on a busy machine, where req/s moves by tens of percent
 * between minutes.
 *
 *   tsx bench/cpu-per-request.ts <old-dir> <new-dir> [sqlite|postgres] [scenario] [rounds] [requests]
 *
 * Each dir holds a built service (dist/cli/main.js, package.json, node_modules). Both are
 * started as `npm start` starts them, on fresh databases, rate limits off, log level warn (as
 * the bench runs them); then, in `rounds` rounds (8), each build in turn gets a warm-up and
 * then `requests` (10,000) of one scenario (create-product, add-variant, get-product,
 * list-page, patch-product, patch-variant) from 16 connections. One sample is what the
 * process used over those requests, divided by their number; the medians of each build's
 * samples and of the rounds' new/old ratios are printed. PostgreSQL's own work is not counted.
 *
 * The CPU time, user + system, comes from /proc/<pid>/stat. It moves with whatever else the
 * machine runs (caches, the other core): on a busy machine two servers of the same build
 * differ by several percent even in medians of ten rounds, so run it with the builds swapped
 * as well. CPU_PROF_DIR=<dir>: each server also writes a `--cpu-prof` profile there when it
 * stops.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { cleanUpOnSignals, createCleanup } from './cleanup.js'
import { scenarioSpec } from './fixtures.js'
import { BENCH_HOST } from './http-client.js'
import { startLoadGenerator } from './load-job.js'
import { createScratchDatabase, dropScratchDatabase } from './postgres.js'
import { cpuSeconds } from './proc.js'
import { freePort, runCommand, spawnChild, waitUntilServing } from './processes.js'
import { BENCH_STORE } from './seed.js'
import { startScriptNodeFlags, type Dialect, type RunningServer } from './targets.js'

const [oldDir, newDir, dialectArg = 'sqlite', scenario = 'create-product', roundsArg, countArg] =
  process.argv.slice(2)
if (!oldDir || !newDir) {
  console.error('usage: tsx bench/cpu-per-request.ts <old-dir> <new-dir> [dialect] [scenario]')
  process.exit(2)
}
const dialect = dialectArg as Dialect
const rounds = Number(roundsArg ?? 8)
const requests = Number(countArg ?? 10_000)
const postgresUrl = process.env.BENCH_POSTGRES_URL || 'postgres://postgres@127.0.0.1:5432/test'
const profileDir = process.env.CPU_PROF_DIR

const cleanup = createCleanup()
cleanUpOnSignals(cleanup)
const work = mkdtempSync(join(tmpdir(), 'catalog-cpu-'))
cleanup.add(`remove ${work}`, () => rmSync(work, { recursive: true, force: true }))

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = sorted.length >> 1
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2
}

/** A build's service on a fresh database, as the bench's startService starts it. */
async function start(dir: string, index: number): Promise<RunningServer> {
  let databaseUrl = `sqlite:${join(work, `catalog-${index}.db`)}`
  if (dialect === 'postgres') {
    const { url, name } = await createScratchDatabase(postgresUrl)
    cleanup.add(`drop ${name}`, () => dropScratchDatabase(postgresUrl, name))
    databaseUrl = url
  }
  const cli = join(dir, 'dist', 'cli', 'main.js')
  const env = { PATH: process.env.PATH, HOME: process.env.HOME, DATABASE_URL: databaseUrl }
  const created = await runCommand(
    process.execPath,
    [cli, 'keys', 'create', '--store', BENCH_STORE, '--scopes', 'read,write', '--json'],
    { env },
  )
  const { key } = JSON.parse(created) as { key: string }
  const port = await freePort()
  const node = [
    ...startScriptNodeFlags(join(dir, 'package.json')),
    ...(profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : []),
    cli,
    'serve',
  ]
  const child = spawnChild(cleanup, `${dir} (${dialect})`, process.execPath, node, {
    ...env,
    HOST: BENCH_HOST,
    PORT: String(port),
    LOG_LEVEL: 'warn',
    RATE_LIMIT_PER_MINUTE: '0',
  })
  const url = `http://${BENCH_HOST}:${port}`
  await waitUntilServing(`${url}/healthz`, child)
  return {
    kind: 'service',
    dialect,
    url,
    key,
    databaseUrl,
    pid: child.pid,
    output: child.output,
    stop: child.stop,
  }
}

async function main(): Promise<void> {
  const load = startLoadGenerator(cleanup)
  const builds = []
  for (const [index, dir] of [oldDir!, newDir!].map((d) => resolve(d)).entries()) {
    const server = await start(dir, index)
    builds.push({
      index,
      dir,
      server,
      spec: await scenarioSpec(server, scenario),
      samples: [] as number[],
    })
  }
  for (let round = 0; round < rounds; round++) {
    // Old first in even rounds, new first in odd ones: neither always follows the other.
    const order = round % 2 === 0 ? builds : [...builds].reverse()
    for (const build of order) {
      const target = { url: build.server.url, key: build.server.key }
      const job = { targets: [target], specs: [build.spec], connections: 16 }
      await load.load({ ...job, until: { requests: round === 0 ? 5000 : 1000 } })
      const before = cpuSeconds(build.server.pid)
      const result = await load.load({ ...job, until: { requests } })
      const used = (cpuSeconds(build.server.pid) - before) * 1e6
      if (result.non2xx > 0 || result.errors > 0) {
        throw new Error(`${build.dir}: ${result.non2xx} non-2xx, ${result.errors} errors`)
      }
      build.samples.push(used / result.responses)
    }
    console.error(
      `round ${round + 1}: ` + builds.map((b) => b.samples.at(-1)!.toFixed(1)).join(' / '),
    )
  }
  const [old, next] = builds as [(typeof builds)[0], (typeof builds)[0]]
  const ratios = old.samples.map((o, i) => next.samples[i]! / o)
  const oldMedian = median(old.samples)
  const newMedian = median(next.samples)
  console.log(
    `${dialect} ${scenario}: old ${oldMedian.toFixed(1)}, new ${newMedian.toFixed(1)} µs of CPU per ` +
      `request (median of ${rounds}); saving ${(oldMedian - newMedian).toFixed(1)}, ` +
      `median ratio new/old ${median(ratios).toFixed(3)}`,
  )
  await load.stop()
}

main()
  .catch((error) => {
    console.error(error)
    process.exitCode = 1
  })
  .finally(() => cleanup.runAll())
