/**
 * Where the CPU of one request goes, for servers side by side: the server's process,
 * PostgreSQL's processes (every `postgres` process of the machine, so run it on a PostgreSQL
 * nothing else uses) and the rest of the machine (the load generator, the kernel's network
 * work, whatever else runs). On a busy machine, where req/s moves by tens of percent between
 * minutes, CPU per request is the steadier figure for judging a change to the hot path.
 *
 *   tsx bench/cpu-split.ts [--sqlite] [--build <dir>]... [scenario] [rounds]
 *
 * The servers: this tree's service, the service of each --build <dir> (a built tree: dist/,
 * package.json, node_modules; to compare an old build with a new one), and the bare baselines
 * of the dialect (PostgreSQL unless --sqlite), each started as `npm run bench` starts it. Their
 * windows are `npm run bench`'s (measure.ts measureInTurn: `rounds` rounds, 4 by default, the
 * settings of BENCH_WARMUP_S and BENCH_DURATION_S), on one scenario (create-product by
 * default); the means of the windows are printed, with each server's process CPU over the
 * first's. BENCH_POSTGRES_URL: the admin URL (postgres://postgres@127.0.0.1:5432/test by
 * default). CPU_PROF_DIR=<dir>: the services also write a `--cpu-prof` profile there when they
 * stop.
 */
import { resolve } from 'node:path'
import { startLoadGenerator } from './load.js'
import { findings, measureInTurn, type Session } from './measure.js'
import { SCENARIOS, type ScenarioName } from './scenarios.js'
import {
  baselinesOf,
  createContext,
  startBaseline,
  startService,
  type RunningServer,
} from './servers.js'
import { apiClient, loadBenchConfig, runMain } from './support.js'

const args = process.argv.slice(2)
const dialect = args.includes('--sqlite') ? 'sqlite' : 'postgres'
const builds = args.flatMap((arg, i) => (args[i - 1] === '--build' ? [resolve(arg)] : []))
const [name = 'create-product', rounds = '4'] = args.filter(
  (arg, i) => !arg.startsWith('--') && args[i - 1] !== '--build',
)
if (!(name in SCENARIOS))
  throw new Error(`no scenario ${name}: ${Object.keys(SCENARIOS).join(', ')}`)
const scenario = name as ScenarioName

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
  for (const root of [undefined, ...builds]) {
    const own = root === undefined ? context : createContext(cleanup, config, root)
    const nodeFlags = [...own.nodeFlags, ...profile]
    servers.push({
      label: root ?? 'service',
      server: await startService({ ...own, nodeFlags }, dialect),
    })
  }
  for (const kind of baselinesOf(dialect))
    servers.push({ label: kind, server: await startBaseline(context, kind) })
  const session: Session = {
    context,
    load: startLoadGenerator(cleanup),
    config,
    found: findings(),
    log: (line) => console.error(line),
  }
  const arms = []
  for (const { server } of servers) {
    const targets = await SCENARIOS[scenario].seed(apiClient(server.url, server.key))
    arms.push({ server, specs: [{ scenario, targets }] })
  }
  const windows = await measureInTurn(session, arms, Number(rounds))
  servers.forEach(({ label }, i) => session.found.watch(label, windows[i]!))
  console.log(`${dialect} ${name}, µs of CPU per request (means of ${rounds} windows in turn):`)
  for (const [i, { label }] of servers.entries()) {
    const { server, postgres, rest } = windows[i]!.cpuUsPerRequest
    const versusFirst = server / windows[0]!.cpuUsPerRequest.server
    console.log(
      `  ${label.padEnd(20)} process ${server.toFixed(0)}, postgres ${postgres.toFixed(0)}, rest ${rest.toFixed(0)},` +
        ` total ${(server + postgres + rest).toFixed(0)}; process / service's ${versusFirst.toFixed(3)}`,
    )
  }
  for (const warning of session.found.warnings) console.error(`WARNING: ${warning}`)
  if (session.found.failures.length > 0) {
    console.error(`FAILED:\n  ${session.found.failures.join('\n  ')}`)
    return 1
  }
  return 0
})
