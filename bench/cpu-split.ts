/**
 * Where the CPU of one request goes, for servers side by side: the server's process,
 * PostgreSQL's processes (every `postgres` process of the machine, so run it on a PostgreSQL
 * nothing else uses) and the rest of the machine (the load generator, the kernel's network
 * work, whatever else runs). On a busy machine, where req/s moves by tens of percent between
 * minutes, CPU per request is the steadier figure for judging a change to the hot path.
 *
 *   tsx bench/cpu-split.ts [--sqlite] [--build <dir>]... [scenario] [rounds] [requests]
 *
 * The servers: this tree's service, the service of each --build <dir> (a built tree: dist/,
 * package.json, node_modules; to compare an old build with a new one), and the bare baselines
 * of the dialect (PostgreSQL unless --sqlite). Each is started as `npm run bench` starts it,
 * on a fresh database; in `rounds` rounds (4) each gets a warm-up, then `requests` (10,000) of
 * the scenario (create-product by default) from 16 connections, in turn (A B C, C B A, ...).
 * Medians of the rounds are printed, with each server's process CPU over the first's.
 * BENCH_POSTGRES_URL: the admin URL (postgres://postgres@127.0.0.1:5432/test by default).
 * CPU_PROF_DIR=<dir>: the services also write a `--cpu-prof` profile there when they stop.
 */
import { resolve } from 'node:path'
import { startLoadGenerator } from './load.js'
import { SCENARIOS, type ScenarioName, type Target } from './scenarios.js'
import {
  baselinesOf,
  createContext,
  startBaseline,
  startService,
  type RunningServer,
} from './servers.js'
import {
  apiClient,
  cpuSeconds,
  loadBenchConfig,
  machineCpuSeconds,
  postgresCpuSeconds,
  runMain,
} from './support.js'

const args = process.argv.slice(2)
const dialect = args.includes('--sqlite') ? 'sqlite' : 'postgres'
const builds = args.flatMap((arg, i) => (args[i - 1] === '--build' ? [resolve(arg)] : []))
const [name = 'create-product', rounds = '4', requests = '10000'] = args.filter(
  (arg, i) => !arg.startsWith('--') && args[i - 1] !== '--build',
)
if (!(name in SCENARIOS))
  throw new Error(`no scenario ${name}: ${Object.keys(SCENARIOS).join(', ')}`)

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = sorted.length >> 1
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2
}

await runMain('cpu-split', async (cleanup) => {
  const config = loadBenchConfig({
    ...process.env,
    BENCH_POSTGRES_URL: process.env.BENCH_POSTGRES_URL || 'postgres://postgres@127.0.0.1:5432/test',
  })
  const context = createContext(cleanup, config)
  const profile = process.env.CPU_PROF_DIR
    ? ['--cpu-prof', `--cpu-prof-dir=${process.env.CPU_PROF_DIR}`]
    : []
  const servers: { label: string; server: RunningServer }[] = []
  for (const [label, root] of [
    ['service', undefined] as const,
    ...builds.map((dir) => [dir, dir] as const),
  ]) {
    const own = root === undefined ? context : createContext(cleanup, config, root)
    servers.push({
      label,
      server: await startService({ ...own, nodeFlags: [...own.nodeFlags, ...profile] }, dialect),
    })
  }
  for (const kind of baselinesOf(dialect))
    servers.push({ label: kind, server: await startBaseline(context, kind) })
  const load = startLoadGenerator(cleanup)
  const arms: {
    label: string
    server: RunningServer
    targets: Target[]
    own: number[]
    postgres: number[]
    rest: number[]
  }[] = []
  for (const { label, server } of servers) {
    const targets = await SCENARIOS[name as ScenarioName].seed(apiClient(server.url, server.key))
    arms.push({ label, server, targets, own: [], postgres: [], rest: [] })
  }
  for (let round = 0; round < Number(rounds); round++) {
    for (const arm of round % 2 === 0 ? arms : [...arms].reverse()) {
      const job = {
        targets: [{ url: arm.server.url, key: arm.server.key }],
        specs: [{ scenario: name as ScenarioName, targets: arm.targets }],
        connections: 16,
      }
      await load.load({ ...job, until: { requests: round === 0 ? 5000 : 1000 } })
      const before = {
        own: cpuSeconds(arm.server.pid),
        postgres: postgresCpuSeconds(),
        machine: machineCpuSeconds(),
      }
      const result = await load.load({ ...job, until: { requests: Number(requests) } })
      if (result.non2xx > 0 || result.errors > 0) {
        throw new Error(`${arm.label}: ${result.non2xx} non-2xx, ${result.errors} errors`)
      }
      const perRequest = (seconds: number) => (seconds * 1e6) / result.responses
      const own = perRequest(cpuSeconds(arm.server.pid) - before.own)
      const postgres =
        dialect === 'postgres' ? perRequest(postgresCpuSeconds() - before.postgres) : 0
      arm.own.push(own)
      arm.postgres.push(postgres)
      arm.rest.push(perRequest(machineCpuSeconds() - before.machine) - own - postgres)
    }
  }
  console.log(
    `${dialect} ${name}, µs of CPU per request (medians of ${rounds} rounds of ${requests}):`,
  )
  for (const { label, own, postgres, rest } of arms) {
    const [a, b, c] = [median(own), median(postgres), median(rest)]
    const versusFirst = median(own.map((value, i) => value / arms[0]!.own[i]!))
    console.log(
      `  ${label.padEnd(20)} process ${a.toFixed(0)}, postgres ${b.toFixed(0)}, rest ${c.toFixed(0)},` +
        ` total ${(a + b + c).toFixed(0)}; process / service's ${versusFirst.toFixed(3)}`,
    )
  }
  await load.stop()
  await Promise.all(servers.map(({ server }) => server.stop()))
  return 0
})
