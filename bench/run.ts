/**
 * `npm run bench`: the load benchmark (docs/benchmarks.md). One run on one machine; every
 * figure that matters is a ratio of two measurements taken in this run.
 *
 * Builds the service, then per dialect starts it and its bare baselines (servers.ts) side by
 * side, each on a fresh database, and drives them from a child process (load.ts) through the
 * scenarios of scenarios.ts, their windows taken in turn (measure.ts); then, with PostgreSQL,
 * one and two instances on one database; the webhook delivery figures (webhooks.ts); the scale
 * and memory figures (scale.ts). Prints the tables, writes bench/results/<time>.json and
 * latest.json (git ignores the folder), and exits 1 if any request failed or any acknowledged
 * write is missing from its database.
 *
 * `npm run bench:soak` (--soak): the memory soak alone, with `npm start`'s V8 flags and
 * without (BENCH_SOAK_FLAGS: both, flags or none), on the Node that runs it.
 *
 * Environment: BENCH_WARMUP_S (3), BENCH_DURATION_S (10), BENCH_POSTGRES_URL (an admin URL on
 * this machine, where scratch databases bench_* are made and dropped), BENCH_LONG=1 (soak to
 * 1,000,000 requests), BENCH_ROUNDS (windows per arm, 3), BENCH_BUILD=0 (dist/ is up to date:
 * CI's, just built by npm ci), BENCH_SCALE=0, BENCH_WEBHOOKS=0,
 * BENCH_SCENARIOS=0, BENCH_METAFIELDS=0 (skip a section).
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { startLoadGenerator } from './load.js'
import {
  figureMaker,
  findings,
  measureInTurn,
  ROUNDS,
  type Figure,
  type Session,
  type WindowFigures,
} from './measure.js'
import { runScale, runSoak } from './scale.js'
import { createProducts, SCENARIO_NAMES, SCENARIOS, type ScenarioName } from './scenarios.js'
import {
  BASELINES,
  baselinesOf,
  countStored,
  createContext,
  DIALECT_LABELS,
  goalBaseline,
  machineFacts,
  ROOT,
  startBaseline,
  startService,
  type Dialect,
  type RunningServer,
  type ServerKind,
} from './servers.js'
import { apiClient, loadBenchConfig, ratio, runCommand, runMain } from './support.js'
import { runMetafields } from './metafields.js'
import { runWebhooks } from './webhooks.js'

/** One scenario on one server: its merged windows and, for writes, what reached the table. */
export interface ScenarioRun extends WindowFigures {
  server: ServerKind
  dialect: Dialect
  scenario: ScenarioName
  stored?: { acknowledged: number; found: number }
}

/** The sections after the scenarios, in order, each once per dialect unless switched off. */
const SECTIONS = [
  ['webhooks', 'webhook deliveries', runWebhooks],
  ['metafields', 'writes with 20 metafields and without', runMetafields],
  ['scale', 'scale of the service', runScale],
  ['scale', 'memory under a mix of all scenarios', runSoak],
] as const

async function bench(session: Session, dialects: Dialect[]): Promise<number> {
  const { config, context, found, log } = session
  const startedAt = new Date()
  const runs: ScenarioRun[] = []
  const figures: Figure[] = []
  for (const dialect of config.scenarios ? dialects : []) {
    runs.push(...(await runScenarios(session, dialect)))
  }
  if (config.scenarios && dialects.includes('postgres')) {
    log('the service on PostgreSQL as one instance, then as two on one database')
    figures.push(...(await runInstances(session)))
  }
  for (const [flag, what, run] of SECTIONS) {
    for (const dialect of config[flag] ? dialects : []) {
      log(`${what} on ${dialect}`)
      figures.push(...(await run(session, dialect)))
    }
  }
  const report = {
    startedAt: startedAt.toISOString(),
    runSeconds: Math.round((Date.now() - startedAt.getTime()) / 1000),
    settings: { ...config, postgresUrl: undefined, dialects, nodeFlags: context.nodeFlags },
    machine: await machineFacts(config.postgresUrl),
    runs,
    figures,
    failures: found.failures,
    warnings: found.warnings,
  }
  console.log(
    `\nCatalogue service benchmark, ${report.startedAt.slice(0, 16)} UTC: ` +
      `${config.connections} connections, ${config.warmupS} s warm-up, ${config.durationS} s ` +
      `per scenario and server in ${ROUNDS} windows taken in turn; the service run as ` +
      `npm start runs it (node ${context.nodeFlags.join(' ')})\n`,
  )
  if (runs.length > 0) {
    for (const dialect of dialects) console.log(`${detailTable(runs, dialect)}\n`)
    console.log(`${ratioTable(runs, dialects)}\n`)
  }
  if (figures.length > 0) console.log(`${figureTable(figures, dialects)}\n`)
  const dir = join(ROOT, 'bench', 'results')
  mkdirSync(dir, { recursive: true })
  const path = join(dir, `${report.startedAt.replace(/\.\d+Z$/, 'Z').replaceAll(':', '-')}.json`)
  const json = `${JSON.stringify(report, null, 2)}\n`
  writeFileSync(path, json)
  writeFileSync(join(dir, 'latest.json'), json)
  log(`wrote ${path} and latest.json (the run took ${report.runSeconds} s)`)
  return conclude(session)
}

/** Prints what went wrong; 1 if any request failed or any acknowledged write is missing. */
function conclude({ found, log }: Session): number {
  if (found.warnings.length > 0) {
    log(`WARNING: the machine was busy with other work, so these figures are suspect:`)
    log(`  ${found.warnings.join('\n  ')}`)
  }
  if (found.failures.length > 0) log(`FAILED:\n  ${found.failures.join('\n  ')}`)
  return found.failures.length > 0 ? 1 : 0
}

/**
 * Every scenario on the service and the baselines of one dialect, each on a fresh database,
 * side by side (an idle one costs no CPU), so that their windows can be taken in turn.
 */
async function runScenarios(session: Session, dialect: Dialect): Promise<ScenarioRun[]> {
  const { context, found, log } = session
  const kinds: ServerKind[] = ['service', ...baselinesOf(dialect)]
  log(`${kinds.join(', ')} on ${dialect}, in turn`)
  const servers: RunningServer[] = []
  const runs: ScenarioRun[] = []
  try {
    for (const kind of kinds) {
      servers.push(
        kind === 'service'
          ? await startService(context, dialect)
          : await startBaseline(context, kind),
      )
    }
    for (const name of SCENARIO_NAMES) {
      const { writes, label } = SCENARIOS[name]
      // Seeded side by side: seeding is not measured.
      const arms = await Promise.all(
        servers.map(async (server) => {
          const targets = await SCENARIOS[name].seed(apiClient(server.url, server.key))
          return { server, specs: [{ scenario: name, targets }] }
        }),
      )
      const count = (server: RunningServer) =>
        writes ? countStored(server.databaseUrl, writes.table, writes.what) : Promise.resolve(0)
      const before = await Promise.all(servers.map(count))
      const merged = await measureInTurn(session, arms)
      for (const [i, server] of servers.entries()) {
        const figures = merged[i]!
        const what = `${server.kind} (${dialect}), ${label}`
        found.watch(what, figures)
        const ok = (c: { responses: number; non2xx: number }) => c.responses - c.non2xx
        const stored = writes && {
          acknowledged: ok(figures) + ok(figures.warmup),
          found: (await count(server)) - before[i]!,
        }
        // Requests in flight at a window's end may add rows no one counted: more is fine.
        if (stored && stored.found < stored.acknowledged) {
          found.failures.push(
            `${what}: ${stored.acknowledged} writes answered 200, ${writes.table}` +
              ` ${writes.what} moved by ${stored.found}`,
          )
        }
        log(
          `  ${label.padEnd(15)} ${server.kind.padEnd(19)} ${figures.reqPerS.toFixed(0).padStart(7)} req/s` +
            `  p50 ${figures.p50Ms.toFixed(2)} ms  p99 ${figures.p99Ms.toFixed(2)} ms` +
            `  non-2xx ${figures.non2xx}  errors ${figures.errors}`,
        )
        runs.push({ server: server.kind, dialect, scenario: name, ...figures, stored })
      }
    }
  } finally {
    for (const server of servers) {
      if (found.failures.some((f) => f.startsWith(`${server.kind} (${dialect})`))) {
        log(`  what ${server.kind} printed last:\n${server.output().slice(-2000)}`)
      }
    }
    await Promise.all(servers.map((server) => server.stop()))
  }
  return runs
}

/**
 * Issue 3: the service's throughput as one and as two processes on one PostgreSQL database,
 * the same connections shared out between them, in turn as the scenarios are.
 */
async function runInstances(session: Session): Promise<Figure[]> {
  const { context, found, log } = session
  const first = await startService(context, 'postgres')
  const second = await startService(context, 'postgres', { shared: first })
  try {
    const products = await createProducts(apiClient(first.url, first.key), 100)
    const figure = figureMaker('instances', 'postgres')
    const figures: Figure[] = []
    for (const name of ['create-product', 'get-product'] as const) {
      const targets = name === 'get-product' ? products.map((productId) => ({ productId })) : [{}]
      const specs = [{ scenario: name, targets }]
      const [one, two] = await measureInTurn(session, [
        { server: first, specs },
        { server: first, also: [second], specs },
      ])
      found.watch(`one instance, ${name}`, one!)
      found.watch(`two instances, ${name}`, two!)
      log(
        `  ${name}: 1 instance ${one!.reqPerS.toFixed(0)} req/s, 2 instances ${two!.reqPerS.toFixed(0)}`,
      )
      const { label } = SCENARIOS[name]
      figures.push(
        figure(`${label}, 1 instance`, one!.reqPerS, 'req/s'),
        figure(`${label}, 2 instances / 1`, ratio(two!.reqPerS, one!.reqPerS), 'x'),
      )
    }
    return figures
  } finally {
    await second.stop()
    await first.stop()
  }
}

// ---------------------------------------------------------------------------------------
// Tables, in Markdown, so that docs/benchmarks.md can take them as they are

function markdown(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(3, ...rows.map((row) => (row[i] ?? '').length)))
  const line = (row: string[]) =>
    `| ${row.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join(' | ')} |`
  const rule = `| ${widths.map((w, i) => (i === 0 ? '-'.repeat(w) : `${'-'.repeat(w - 1)}:`)).join(' | ')} |`
  return [line(rows[0]!), rule, ...rows.slice(1).map(line)].join('\n')
}

const whole = (value: number) => Math.round(value).toLocaleString('en')
const times = (value: number | null) => (value === null ? '-' : `${value.toFixed(2)}×`)

/** Every server's figures of one dialect. */
function detailTable(runs: ScenarioRun[], dialect: Dialect): string {
  const rows = [
    [
      DIALECT_LABELS[dialect],
      'req/s',
      'p50 ms',
      'p99 ms',
      'non-2xx',
      'errors',
      'peak RSS MiB',
      'CPU server/load %',
      'CPU µs/req server/pg/rest',
    ],
  ]
  for (const run of runs.filter((r) => r.dialect === dialect)) {
    rows.push([
      `${SCENARIOS[run.scenario].label}, ${run.server === 'service' ? 'service' : BASELINES[run.server].short}`,
      whole(run.reqPerS),
      run.p50Ms.toFixed(2),
      run.p99Ms.toFixed(2),
      String(run.non2xx + run.warmup.non2xx),
      String(run.errors + run.warmup.errors),
      run.peakRssMiB.toFixed(1),
      `${run.serverCpuPercent.toFixed(0)}/${run.clientCpuPercent.toFixed(0)}`,
      Object.values(run.cpuUsPerRequest)
        .map((us) => us.toFixed(0))
        .join('/'),
    ])
  }
  return markdown(rows)
}

/**
 * The service's req/s over each baseline's, per scenario; the goal is checked against the
 * goal baseline (servers.ts: the event-appending twin for writes), and so is p99 (<= 2x).
 */
function ratioTable(runs: ScenarioRun[], dialects: Dialect[]): string {
  const header = ['scenario']
  for (const dialect of dialects) {
    header.push(
      `${DIALECT_LABELS[dialect]} service`,
      ...baselinesOf(dialect).map((k) => `/ ${BASELINES[k].short}`),
    )
  }
  const rows = [[...header, 'goal', 'p99 / goal baseline']]
  for (const name of SCENARIO_NAMES) {
    const { label, goal, writes } = SCENARIOS[name]
    const row = [label]
    const p99s: string[] = []
    for (const dialect of dialects) {
      const run = (server: ServerKind) =>
        runs.find((r) => r.server === server && r.dialect === dialect && r.scenario === name)
      const service = run('service')
      const against = goalBaseline(dialect, writes !== undefined)
      row.push(service ? `${whole(service.reqPerS)} req/s` : '-')
      for (const kind of baselinesOf(dialect)) {
        const value = ratio(service?.reqPerS, run(kind)?.reqPerS)
        const missed = kind === against && goal !== undefined && value !== null && value < goal
        row.push(
          `${times(value)}${kind === against && goal !== undefined ? (missed ? ' (missed)' : ' *') : ''}`,
        )
      }
      p99s.push(times(ratio(service?.p99Ms, run(against)?.p99Ms)))
    }
    rows.push([...row, goal === undefined ? '' : `${goal.toFixed(2)}×`, p99s.join(' / ')])
  }
  return `${markdown(rows)}\n* the baseline the goal is measured against (for writes, the one that appends its event)`
}

/** The other sections' figures: one row a figure, one column a dialect. */
function figureTable(figures: Figure[], dialects: Dialect[]): string {
  const rows = [['figure', ...dialects.map((d) => DIALECT_LABELS[d]), 'goal']]
  const names = [...new Set(figures.map((f) => `${f.section}: ${f.name}`))]
  for (const key of names) {
    const of = figures.filter((f) => `${f.section}: ${f.name}` === key)
    const cells = dialects.map((dialect) => {
      const f = of.find((x) => x.dialect === dialect)
      if (!f || f.value === null) return '-'
      const value =
        f.unit === 'x'
          ? times(f.value)
          : `${['req/s', ''].includes(f.unit) ? whole(f.value) : f.value.toFixed(f.unit === 'ms' ? 0 : 1)} ${f.unit}`.trim()
      const met =
        !f.goal || (f.goal.op === '>=' ? f.value >= f.goal.value : f.value <= f.goal.value)
      return met ? value : `${value} (missed)`
    })
    const goal = of[0]!.goal
    rows.push([
      key,
      ...cells,
      goal ? `${goal.op} ${goal.value}${of[0]!.unit === 'x' ? '×' : ` ${of[0]!.unit}`}` : '',
    ])
  }
  return markdown(rows)
}

/** `npm run bench:soak`: memory alone, with npm start's V8 flags and without. */
async function soakOnly(session: Session, dialects: Dialect[]): Promise<number> {
  const which = process.env.BENCH_SOAK_FLAGS || 'both'
  for (const dialect of dialects) {
    for (const [label, flags] of [
      ['flags', session.context.nodeFlags],
      ['none', []],
    ] as const) {
      if (which !== 'both' && which !== label) continue
      const context = { ...session.context, nodeFlags: [...flags] }
      const [peak] = await runSoak({ ...session, context }, dialect)
      console.log(
        `soak ${process.version} ${dialect}, node ${flags.join(' ')}:` +
          ` peak RSS ${peak?.value?.toFixed(1)} MiB after 100,000 requests`,
      )
    }
  }
  return conclude(session)
}

await runMain('bench', async (cleanup) => {
  const config = loadBenchConfig()
  const started = Date.now()
  // Seconds since the start on each line, so that a log shows where the time goes.
  const log = (line: string) =>
    console.error(`[${Math.round((Date.now() - started) / 1000)} s] ${line}`)
  if (config.build) {
    log('building the service (npm run build), so that the figures are those of src/ as it is')
    await runCommand('npm', ['run', 'build'], { cwd: ROOT })
  }
  const context = createContext(cleanup, config)
  const load = startLoadGenerator(cleanup)
  const session: Session = { context, load, config, found: findings(), log }
  const dialects: Dialect[] = config.postgresUrl ? ['sqlite', 'postgres'] : ['sqlite']
  const soak = process.argv.includes('--soak')
  const code = await (soak ? soakOnly(session, dialects) : bench(session, dialects))
  await load.stop()
  return code
})
