/**
 * `npm run bench`: the load benchmark of issue 3. One run on one machine; every figure that
 * matters is a ratio of two measurements taken in this run.
 *
 * Builds the service, then starts the servers of one dialect side by side, each on a fresh
 * database (the service on SQLite and, with BENCH_POSTGRES_URL, on PostgreSQL; the bare
 * baselines of baseline-server.ts), and drives them from a child process (load.ts) through
 * six scenarios (scenarios.ts), their windows taken in turn (measure.ts). Then the scale figures of the
 * service. Prints a table, writes results/<time>-<dialects>.json, results/latest.json
 * and results/latest.svg, and exits 1 if any request failed.
 *
 * Environment: BENCH_WARMUP_S (3), BENCH_DURATION_S (10), BENCH_POSTGRES_URL (an admin URL on
 * this machine, where scratch databases bench_* are created and dropped), BENCH_LONG=1 (soak
 * to 1,000,000 requests), BENCH_SCALE=0 (skip the scale figures), BENCH_WEBHOOKS=0 (skip the
 * webhook delivery figures of webhooks.ts), BENCH_SCENARIOS=0 (skip the scenarios against the
 * baselines and the instances figures: with BENCH_SCALE=0, the webhook section alone).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { buildBaselineServer } from './baseline-build.js'
import { renderChart } from './chart.js'
import { cleanUpOnSignals, createCleanup, type Cleanup } from './cleanup.js'
import { loadBenchConfig, type BenchConfig } from './config.js'
import { runInstances, type InstanceFigures } from './instances.js'
import { startLoadGenerator, type LoadGenerator } from './load-job.js'
import { machineFacts } from './machine.js'
import { runCommand } from './processes.js'
import {
  BASELINES,
  compare,
  findFailures,
  findWarnings,
  scaleGoals,
  webhookGoals,
  writeReport,
  type BenchReport,
} from './report.js'
import { runScale, type ScaleFigures } from './scale.js'
import { runScenarios, type ScenarioRun } from './scenarios.js'
import { runSoak, type SoakFigures } from './soak.js'
import { formatReport } from './table.js'
import { runWebhooks, type WebhookFigures } from './webhooks.js'
import {
  SERVER_LABELS,
  settle,
  startBaseline,
  startScriptNodeFlags,
  startService,
  type Dialect,
  type RunningServer,
  type ServerKind,
  type TargetContext,
} from './targets.js'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const RESULTS = join(ROOT, 'bench', 'results')

const log = (line: string) => console.error(line)

async function bench(config: BenchConfig, cleanup: Cleanup): Promise<number> {
  const startedAt = new Date()
  log('building the service (npm run build), so that the figures are those of src/ as it is')
  await runCommand('npm', ['run', 'build'], { cwd: ROOT })

  // Inside the project, where the baseline's packages resolve; git ignores results/tmp/.
  mkdirSync(join(RESULTS, 'tmp'), { recursive: true })
  const work = mkdtempSync(join(RESULTS, 'tmp', 'run-'))
  cleanup.add(`remove ${work}`, () => rmSync(work, { recursive: true, force: true }))
  const context: TargetContext = {
    cleanup,
    serviceCli: join(ROOT, 'dist', 'cli', 'main.js'),
    serviceNodeFlags: startScriptNodeFlags(join(ROOT, 'package.json')),
    baselineScript: buildBaselineServer(work),
    postgresUrl: config.postgresUrl,
  }
  const dialects: Dialect[] = config.postgresUrl ? ['sqlite', 'postgres'] : ['sqlite']
  const load = startLoadGenerator(cleanup)

  const runs = config.scenarios ? await runAllServers(context, dialects, load, config) : []
  const instances: InstanceFigures[] = []
  if (config.scenarios && dialects.includes('postgres')) {
    log('the service on PostgreSQL as one instance, then as two on one database')
    instances.push(...(await runInstances(context, load, config, log)))
  }
  const webhooks: WebhookFigures[] = []
  if (config.webhooks) {
    for (const dialect of dialects) {
      log(`webhook deliveries of the service on ${dialect}`)
      webhooks.push(await runWebhooks(context, dialect, load, config, log))
    }
  }
  const scale: ScaleFigures[] = []
  const soak: SoakFigures[] = []
  if (config.scale) {
    for (const dialect of dialects) {
      log(`scale of the service on ${dialect}`)
      scale.push(await runScale(context, dialect, load, config, log))
      log(`memory of the service on ${dialect} under a mix of all scenarios`)
      soak.push(await runSoak(context, dialect, load, config, log))
    }
  }
  await load.stop()

  const finishedAt = new Date()
  const report: BenchReport = {
    startedAt: startedAt.toISOString(),
    finishedAt: finishedAt.toISOString(),
    runSeconds: Math.round((finishedAt.getTime() - startedAt.getTime()) / 1000),
    command: 'npm run bench',
    settings: {
      warmupS: config.warmupS,
      durationS: config.durationS,
      connections: config.connections,
      dialects,
      long: config.long,
      scale: config.scale,
      scenarios: config.scenarios,
      webhooks: config.webhooks,
      serviceNodeFlags: context.serviceNodeFlags,
    },
    machine: await machineFacts(ROOT, config.postgresUrl),
    runs,
    comparisons: compare(runs),
    scale,
    soak,
    scaleGoals: scale.map((figures) =>
      scaleGoals(
        figures,
        soak.find((s) => s.dialect === figures.dialect),
      ),
    ),
    instances,
    webhooks,
    webhookGoals: webhooks.map(webhookGoals),
    failures: findFailures(runs, scale, soak, instances, webhooks),
    warnings: findWarnings(runs, scale),
  }
  return publish(report)
}

/**
 * Every scenario on every server, each on a fresh database. The servers of a dialect run side
 * by side, so that their windows can be taken in turn; an idle one costs no CPU.
 */
async function runAllServers(
  context: TargetContext,
  dialects: Dialect[],
  load: LoadGenerator,
  config: BenchConfig,
): Promise<ScenarioRun[]> {
  const runs: ScenarioRun[] = []
  for (const dialect of dialects) {
    const kinds = ['service', ...BASELINES[dialect]] as ServerKind[]
    log(`${kinds.map((kind) => SERVER_LABELS[kind]).join(', ')} on ${dialect}, in turn`)
    const servers: RunningServer[] = []
    try {
      for (const kind of kinds) {
        servers.push(
          kind === 'service'
            ? await startService(context, dialect)
            : await startBaseline(context, kind),
        )
      }
      const serverRuns = await runScenarios(servers, load, config, () => settle(context), log)
      runs.push(...serverRuns)
      for (const server of servers) {
        const own = serverRuns.filter((run) => run.server === server.kind)
        if (findFailures(own, [], []).length > 0) {
          log(`  what ${server.kind} printed last:\n${server.output().slice(-2000)}`)
        }
      }
    } finally {
      await Promise.all(servers.map((server) => server.stop()))
    }
  }
  return runs
}

/** Prints the tables, writes the JSON and the chart; 1 when any request went wrong. */
async function publish(report: BenchReport): Promise<number> {
  console.log(`\n${formatReport(report)}\n`)
  const path = await writeReport(report, RESULTS)
  writeFileSync(join(RESULTS, 'latest.svg'), renderChart(report))
  log(`wrote ${path}, latest.json and latest.svg (the run took ${report.runSeconds} s)`)
  if (report.warnings.length > 0) {
    log(`WARNING: the machine was busy with other work, so these figures are suspect:`)
    log(`  ${report.warnings.join('\n  ')}`)
  }
  if (report.failures.length > 0) {
    log(`FAILED: requests went wrong:\n  ${report.failures.join('\n  ')}`)
    return 1
  }
  return 0
}

const cleanup = createCleanup(log)
const signalled = cleanUpOnSignals(cleanup)
try {
  process.exitCode = await bench(loadBenchConfig(), cleanup)
} catch (error) {
  // After a signal, whatever was under way fails as its children are stopped: no news.
  if (!signalled()) {
    log(`bench: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`)
  }
  process.exitCode = 1
} finally {
  await cleanup.runAll()
}
