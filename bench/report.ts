/** The run's results as one document: figures, ratios to the baselines, goals, failures. */
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import prettier from 'prettier'
import type { InstanceFigures } from './instances.js'
import type { MachineFacts } from './machine.js'
import type { WindowFigures } from './measure.js'
import type { ListFilter } from './requests.js'
import type { ScaleFigures } from './scale.js'
import { SCENARIO_LABELS, type Scenario, type ScenarioRun } from './scenarios.js'
import type { SoakFigures } from './soak.js'
import { describeErrors, ratio } from './stats.js'
import { SERVER_LABELS, type Dialect, type ServerKind } from './targets.js'
import { WEBHOOK_ARM_LABELS, type WebhookFigures } from './webhooks.js'

/** A target of issue 3, checked against a ratio (or a size); reported, never fatal. */
export interface Goal {
  figure: string
  op: '>=' | '<=' | '<'
  value: number
  /** Printed after the value: ' MiB', ' %', or nothing for a ratio. */
  unit: string
  /** Null when the figure was not measured (BENCH_LONG, say). */
  met: boolean | null
}

/** The scale goals of issues 3 and 14 for one dialect. */
export interface ScaleGoals {
  dialect: Dialect
  millionProducts: Goal
  sameName: Goal
  deepPage: Goal
  tagPage: Goal
  vendorPage: Goal
  slugPage: Goal
  peakRssAfter100k: Goal
  peakRssAfter1M: Goal
  rssGrowth: Goal
}

/** The webhook goals of issue 15 and of the contract for one dialect. */
export interface WebhookGoals {
  dialect: Dialect
  /** Creates with one live endpoint over creates with none. */
  createRatio: Goal
  /** Delivery lag p99 at half the create capacity. */
  lagP99: Goal
  /** The contract: an attempt starts within 2 s of being due (the lag ends later still). */
  lagMax: Goal
  /** The live endpoint's lag p99 with a dead endpoint besides, over without. */
  lagP99Ratio: Goal
}

export function webhookGoals(figures: WebhookFigures): WebhookGoals {
  const live = figures.lag.live.lag
  const maxLag = Math.max(live.max, figures.lag['live+dead'].lag.max)
  return {
    dialect: figures.dialect,
    createRatio: goal('req/s ratio', '>=', 0.85, figures.liveRatio),
    lagP99: goal('lag p99', '<=', 1000, Number.isFinite(live.p99) ? live.p99 : null, ' ms'),
    lagMax: goal('lag max', '<=', 2000, Number.isFinite(maxLag) ? maxLag : null, ' ms'),
    lagP99Ratio: goal('p99 ratio', '<=', 1.5, figures.lagP99Ratio),
  }
}

/** The service's figures over one baseline's, for one scenario. */
export interface Comparison {
  dialect: Dialect
  scenario: Scenario
  baseline: ServerKind
  reqPerS: number | null
  p50: number | null
  p99: number | null
  peakRss: number | null
  goals: Goal[]
}

export interface BenchReport {
  startedAt: string
  finishedAt: string
  runSeconds: number
  command: string
  settings: {
    warmupS: number
    durationS: number
    connections: number
    dialects: Dialect[]
    long: boolean
    scale: boolean
    scenarios?: boolean
    webhooks: boolean
    /** The node flags the service ran with: those of `npm start`. */
    serviceNodeFlags: string[]
  }
  machine: MachineFacts
  runs: ScenarioRun[]
  comparisons: Comparison[]
  scale: ScaleFigures[]
  soak: SoakFigures[]
  scaleGoals: ScaleGoals[]
  /** One and two service processes on one PostgreSQL database (runs with PostgreSQL only). */
  instances: InstanceFigures[]
  /** The webhook delivery figures of issue 15, per dialect (BENCH_WEBHOOKS=0 skips them). */
  webhooks: WebhookFigures[]
  webhookGoals: WebhookGoals[]
  /** Why the run failed: errors or non-2xx answers anywhere, or acknowledged rows missing. */
  failures: string[]
  /** Why some figures may be off, though the run did not fail. */
  warnings: string[]
}

/** The baselines of each dialect; the first is the one the goals are set against. */
export const BASELINES: Record<Dialect, Exclude<ServerKind, 'service'>[]> = {
  sqlite: ['bare-normal', 'bare-full'],
  postgres: ['bare-pg', 'bare-pg-events'],
}

/** Issues 3 and 14: least service/baseline req/s per scenario against the first baseline. */
const REQ_PER_S_GOALS: Partial<Record<Scenario, number>> = {
  'create-product': 0.75,
  'add-variant': 0.7,
  'get-product': 0.75,
  'patch-product': 0.75,
  'patch-variant': 0.75,
}
const P99_RATIO_GOAL = 2

export function compare(runs: ScenarioRun[]): Comparison[] {
  const comparisons: Comparison[] = []
  for (const service of runs.filter((run) => run.server === 'service')) {
    BASELINES[service.dialect].forEach((kind, index) => {
      const base = runs.find(
        (run) =>
          run.server === kind &&
          run.dialect === service.dialect &&
          run.scenario === service.scenario,
      )
      if (!base) return
      const reqPerS = ratio(service.reqPerS, base.reqPerS)
      const p99 = ratio(service.p99Ms, base.p99Ms)
      const reqGoal = REQ_PER_S_GOALS[service.scenario]
      comparisons.push({
        dialect: service.dialect,
        scenario: service.scenario,
        baseline: kind,
        reqPerS,
        p50: ratio(service.p50Ms, base.p50Ms),
        p99,
        peakRss: ratio(service.peakRssMiB, base.peakRssMiB),
        goals:
          index > 0
            ? []
            : [
                ...(reqGoal === undefined ? [] : [goal('req/s', '>=', reqGoal, reqPerS)]),
                goal('p99', '<=', P99_RATIO_GOAL, p99),
              ],
      })
    })
  }
  return comparisons
}

export function goal(
  figure: string,
  op: Goal['op'],
  value: number,
  actual: number | null,
  unit = '',
): Goal {
  const met =
    actual === null
      ? null
      : op === '>='
        ? actual >= value
        : op === '<='
          ? actual <= value
          : actual < value
  return { figure, op, value, unit, met }
}

export function scaleGoals(scale: ScaleFigures, soak: SoakFigures | undefined): ScaleGoals {
  const peak = (requests: number) =>
    soak?.checkpoints.find((checkpoint) => checkpoint.requests === requests)?.peakRssMiB ?? null
  return {
    dialect: scale.dialect,
    millionProducts: goal('req/s ratio', '>=', 0.9, scale.millionProducts.ratio),
    sameName: goal('speed ratio', '>=', 0.9, scale.sameName.speedRatio),
    deepPage: goal('p50 ratio', '<=', 1.5, scale.deepPage.p50Ratio),
    tagPage: filteredPageGoal(scale, 'tag'),
    vendorPage: filteredPageGoal(scale, 'vendor'),
    slugPage: filteredPageGoal(scale, 'slug'),
    peakRssAfter100k: goal('peak RSS', '<=', 150, peak(100_000), ' MiB'),
    peakRssAfter1M: goal('peak RSS', '<=', 150, peak(1_000_000), ' MiB'),
    rssGrowth: goal('RSS growth', '<', 10, soak?.growthPercent ?? null, ' %'),
  }
}

/** Issue 14: a filtered page of the 1M store costs at most 1.5x the reference page. */
function filteredPageGoal(scale: ScaleFigures, filter: ListFilter['name']): Goal {
  const page = scale.filteredPages.filters.find((f) => f.filter.name === filter)
  return goal('p50 ratio', '<=', 1.5, page?.p50Ratio ?? null)
}

/** Every window, warm-up, sequence and soak that saw a non-2xx answer or a connection error. */
export function findFailures(
  runs: ScenarioRun[],
  scale: ScaleFigures[],
  soak: SoakFigures[],
  instances: InstanceFigures[] = [],
  webhooks: WebhookFigures[] = [],
): string[] {
  const failures: string[] = []
  const check = (
    what: string,
    counts: { non2xx: number; errors: number; errorCounts?: Record<string, number> },
  ) => {
    if (counts.non2xx > 0 || counts.errors > 0) {
      failures.push(
        `${what}: ${counts.non2xx} non-2xx answers, ${counts.errors} errors` +
          describeErrors(counts.errorCounts ?? {}),
      )
    }
  }
  for (const run of runs) {
    const what = `${SERVER_LABELS[run.server]} (${run.dialect}), ${SCENARIO_LABELS[run.scenario]}`
    check(what, run)
    check(`${what}, warm-up`, run.warmup)
    // In-flight requests cut off at the end of a window may add rows no one counted: more is fine.
    if (run.stored && run.stored.found < run.stored.acknowledged) {
      const { acknowledged, found, table } = run.stored
      failures.push(
        run.stored.what === 'rows'
          ? `${what}: ${acknowledged} creates answered 200 but only ${found} ${table} rows were stored`
          : `${what}: ${acknowledged} changes answered 200 but the ${table}' versions only moved by ${found}`,
      )
    }
  }
  for (const figures of scale) {
    const what = `scale (${figures.dialect})`
    check(`${what}, create product on a 1M store`, figures.millionProducts.millionStore)
    check(`${what}, its warm-up`, figures.millionProducts.millionStore.warmup)
    check(`${what}, create product on an empty store`, figures.millionProducts.emptyStore)
    check(`${what}, its warm-up`, figures.millionProducts.emptyStore.warmup)
    check(`${what}, same name at full load`, figures.sameName.concurrentSameName)
    check(`${what}, its warm-up`, figures.sameName.concurrentSameName.warmup)
    check(`${what}, one-at-a-time requests`, { non2xx: figures.sequentialNon2xx, errors: 0 })
  }
  for (const figures of soak) {
    for (const checkpoint of figures.checkpoints) {
      check(`soak (${figures.dialect}) to ${checkpoint.requests} requests`, checkpoint)
    }
  }
  for (const figures of instances) check(`1 and 2 instances, ${figures.scenario}`, figures)
  for (const figures of webhooks) {
    const what = `webhooks (${figures.dialect})`
    for (const [arm, window] of Object.entries(figures.creates)) {
      const label = WEBHOOK_ARM_LABELS[arm as keyof typeof figures.creates]
      check(`${what}, creates with ${label}`, window)
      check(`${what}, creates with ${label}, warm-up`, window.warmup)
    }
    for (const [arm, lag] of Object.entries(figures.lag)) {
      check(`${what}, steady creates with ${WEBHOOK_ARM_LABELS[arm as 'live']}`, lag)
    }
    for (const c of figures.checks) {
      if (c.delivered < c.created || c.malformed > 0) {
        failures.push(
          `${what}, ${WEBHOOK_ARM_LABELS[c.arm]}: ${c.created} products created, their events` +
            ` reached the live receiver ${c.delivered} times (${c.malformed} malformed)`,
        )
      }
    }
    if (figures.deadConnections === 0) {
      failures.push(`${what}: no attempt ever reached the dead receiver`)
    }
  }
  return failures
}

/** Share of one core that other work on the machine may take before a window is suspect. */
const FOREIGN_CPU_LIMIT = 15

/** Windows during which something besides the benchmark kept the 2 cores busy. */
export function findWarnings(runs: ScenarioRun[], scale: ScaleFigures[]): string[] {
  const windows: [string, WindowFigures][] = [
    ...runs.map((run): [string, WindowFigures] => [
      `${SERVER_LABELS[run.server]} (${run.dialect}), ${SCENARIO_LABELS[run.scenario]}`,
      run,
    ]),
    ...scale.flatMap((figures): [string, WindowFigures][] => [
      [`scale (${figures.dialect}), create on a 1M store`, figures.millionProducts.millionStore],
      [`scale (${figures.dialect}), create on an empty store`, figures.millionProducts.emptyStore],
      [`scale (${figures.dialect}), same name at full load`, figures.sameName.concurrentSameName],
    ]),
  ]
  return windows
    .filter(([, figures]) => figures.foreignCpuPercent > FOREIGN_CPU_LIMIT)
    .map(
      ([what, figures]) =>
        `${what}: other processes used ${figures.foreignCpuPercent.toFixed(0)} % of a core meanwhile`,
    )
}

/**
 * Writes results/<start time>-<dialects>.json and results/latest.json; returns the first
 * path. Formatted as the project's Prettier would, so that its format check passes on them.
 */
export async function writeReport(report: BenchReport, dir: string): Promise<string> {
  mkdirSync(dir, { recursive: true })
  const stamp = report.startedAt.replace(/\.\d+Z$/, 'Z').replaceAll(':', '-')
  const path = join(dir, `${stamp}-${report.settings.dialects.join('-')}.json`)
  const options = await prettier.resolveConfig(path)
  const json = await prettier.format(JSON.stringify(report), { ...options, filepath: path })
  writeFileSync(path, json)
  writeFileSync(join(dir, 'latest.json'), json)
  return path
}
