/** The report as text for the terminal: one table per dialect, then the scale figures. */
import { ROUNDS } from './measure.js'
import {
  BASELINES,
  type BenchReport,
  type Goal,
  type ScaleGoals,
  type WebhookGoals,
} from './report.js'
import type { ListFilter } from './requests.js'
import { SCENARIO_LABELS, SCENARIOS } from './scenarios.js'
import { SERVER_LABELS, type Dialect, type ServerKind } from './targets.js'
import type { WebhookFigures } from './webhooks.js'

const DIALECT_LABELS: Record<Dialect, string> = { sqlite: 'SQLite', postgres: 'PostgreSQL' }
const BASELINE_SHORT: Record<ServerKind, string> = {
  service: 'service',
  'bare-normal': 'NORMAL',
  'bare-full': 'FULL',
  'bare-pg': 'pg',
  'bare-pg-events': 'pg+event',
}

export function formatReport(report: BenchReport): string {
  const { settings } = report
  const sections = [
    `Catalogue service benchmark: ${settings.connections} connections, ` +
      `${settings.warmupS} s warm-up, ${settings.durationS} s measured per scenario and server ` +
      `in ${ROUNDS} windows taken in turn; ` +
      `the service run as npm start runs it: node ${settings.serviceNodeFlags.join(' ')}`,
    ...settings.dialects.map((dialect) => mainTable(report, dialect)),
  ]
  if (report.webhooks.length > 0) sections.push(webhookTable(report))
  if (settings.scale) sections.push(scaleTable(report))
  if (report.instances.length > 0) sections.push(instancesTable(report))
  return sections.join('\n\n')
}

function instancesTable(report: BenchReport): string {
  const rows = [['PostgreSQL, one database', '1 instance', '2 instances', '2 / 1']]
  for (const figures of report.instances) {
    rows.push([
      SCENARIO_LABELS[figures.scenario],
      whole(figures.oneReqPerS),
      whole(figures.twoReqPerS),
      times(figures.ratio),
    ])
  }
  return render(rows)
}

function mainTable(report: BenchReport, dialect: Dialect): string {
  const rows: string[][] = [
    [
      DIALECT_LABELS[dialect],
      'req/s',
      'p50 ms',
      'p99 ms',
      'non-2xx',
      'errors',
      'peak RSS MiB',
      'CPU server/load %',
      '',
    ],
  ]
  for (const scenario of SCENARIOS) {
    rows.push([SCENARIO_LABELS[scenario]])
    for (const server of ['service', ...BASELINES[dialect]] as ServerKind[]) {
      const run = report.runs.find(
        (r) => r.server === server && r.dialect === dialect && r.scenario === scenario,
      )
      if (!run) continue
      rows.push([
        `  ${SERVER_LABELS[server]}`,
        whole(run.reqPerS),
        fixed(run.p50Ms),
        fixed(run.p99Ms),
        String(run.non2xx + run.warmup.non2xx),
        String(run.errors + run.warmup.errors),
        fixed(run.peakRssMiB, 1),
        `${run.serverCpuPercent.toFixed(0)}/${run.clientCpuPercent.toFixed(0)}`,
        '',
      ])
    }
    for (const c of report.comparisons.filter(
      (c) => c.dialect === dialect && c.scenario === scenario,
    )) {
      rows.push([
        `  service / ${BASELINE_SHORT[c.baseline]}`,
        times(c.reqPerS),
        times(c.p50),
        times(c.p99),
        '',
        '',
        times(c.peakRss),
        '',
        c.goals.map(goalText).join(', '),
      ])
    }
  }
  return render(rows)
}

function webhookTable(report: BenchReport): string {
  const dialects = report.webhooks.map((figures) => figures.dialect)
  const rows: string[][] = [
    [
      `Webhook deliveries (WEBHOOK_TIMEOUT_MS=${report.webhooks[0]!.timeoutMs})`,
      ...dialects.map((d) => DIALECT_LABELS[d]),
      'goal',
    ],
  ]
  const line = (
    label: string,
    cell: (f: WebhookFigures) => string,
    goal?: keyof Omit<WebhookGoals, 'dialect'>,
  ) =>
    rows.push(
      goalRow(
        label,
        dialects,
        (d) => cell(report.webhooks.find((f) => f.dialect === d)!),
        (d) => goal && report.webhookGoals.find((g) => g.dialect === d)?.[goal],
      ),
    )
  const lag = (l: WebhookFigures['lag']['live']) =>
    `${whole(l.lag.p50)} / ${whole(l.lag.p99)} / ${whole(l.lag.max)}`
  line('creates, 1 live endpoint / none', (f) => times(f.liveRatio), 'createRatio')
  line('creates, 1 live + 1 dead endpoint / none', (f) => times(f.deadRatio))
  line(
    '  req/s: none / live / live+dead',
    (f) =>
      `${whole(f.creates.none.reqPerS)} / ${whole(f.creates.live.reqPerS)} / ${whole(f.creates['live+dead'].reqPerS)}`,
  )
  line('steady rate, creates/s (half of live)', (f) => whole(f.ratePerS))
  line('lag p99 ms, live endpoint', (f) => whole(f.lag.live.lag.p99), 'lagP99')
  line('lag p99, with a dead endpoint / without', (f) => times(f.lagP99Ratio), 'lagP99Ratio')
  line('  lag ms p50 / p99 / max, live', (f) => lag(f.lag.live))
  line('  lag ms p50 / p99 / max, live + dead', (f) => lag(f.lag['live+dead']), 'lagMax')
  line(
    '  deliveries timed, live / live + dead',
    (f) => `${whole(f.lag.live.lag.count)} / ${whole(f.lag['live+dead'].lag.count)}`,
  )
  line(
    '  create p99 ms at the steady rate, live / live + dead',
    (f) => `${fixed(f.lag.live.p99Ms)} / ${fixed(f.lag['live+dead'].p99Ms)}`,
  )
  line('every product.created received, by webhook-id', (f) =>
    f.checks.every((c) => c.delivered >= c.created && c.malformed === 0)
      ? `yes (${f.checks.map((c) => whole(c.created)).join(' + ')})`
      : 'NO',
  )
  line(
    '  duplicates received; dead receiver connections',
    (f) => `${f.checks.reduce((n, c) => n + c.duplicates, 0)}; ${f.deadConnections}`,
  )
  return render(rows)
}

/** The scale table's lines, also drawn in the chart. */
export function scaleLines(report: BenchReport): string[] {
  return scaleTable(report).split('\n')
}

function scaleTable(report: BenchReport): string {
  const dialects = report.settings.dialects
  const header = [
    'Scale of the service (ratios within this run)',
    ...dialects.map((d) => DIALECT_LABELS[d]),
    'goal',
  ]
  const rows: string[][] = [header]
  const scale = (d: Dialect) => report.scale.find((s) => s.dialect === d)
  const soak = (d: Dialect) => report.soak.find((s) => s.dialect === d)
  const filtered = (d: Dialect, name: ListFilter['name']) =>
    scale(d)?.filteredPages.filters.find((f) => f.filter.name === name)
  const line = (
    label: string,
    cell: (d: Dialect) => string,
    goal?: keyof Omit<ScaleGoals, 'dialect'>,
  ) =>
    rows.push(
      goalRow(
        label,
        dialects,
        cell,
        (d) => goal && report.scaleGoals.find((g) => g.dialect === d)?.[goal],
      ),
    )

  line(
    '(a) create product req/s, 1M products / empty store',
    (d) => times(scale(d)?.millionProducts.ratio),
    'millionProducts',
  )
  line('      req/s: 1M store / empty store', (d) => {
    const m = scale(d)?.millionProducts
    return m ? `${whole(m.millionStore.reqPerS)} / ${whole(m.emptyStore.reqPerS)}` : '-'
  })
  line(
    '(b) 10,001st same name: fresh p50 / same-name p50',
    (d) => times(scale(d)?.sameName.speedRatio),
    'sameName',
  )
  line('      p50 ms, same name / fresh name', (d) => {
    const s = scale(d)?.sameName
    return s ? `${fixed(s.sameNameLatency.p50)} / ${fixed(s.freshNameLatency.p50)}` : '-'
  })
  line('      p99 ms, same name / fresh name', (d) => {
    const s = scale(d)?.sameName
    return s ? `${fixed(s.sameNameLatency.p99)} / ${fixed(s.freshNameLatency.p99)}` : '-'
  })
  line('      16 connections, req/s same name / unique names', (d) => {
    const s = scale(d)?.sameName
    return s
      ? `${times(s.concurrentRatio)} (${whole(s.concurrentSameName.reqPerS)} / ${whole(scale(d)!.millionProducts.millionStore.reqPerS)})`
      : '-'
  })
  line('(c) list page 1,000 / page 1, p50', (d) => times(scale(d)?.deepPage.p50Ratio), 'deepPage')
  line('      p50 ms, page 1,000 / page 1', (d) => {
    const p = scale(d)?.deepPage
    return p ? `${fixed(p.deepPageLatency.p50)} / ${fixed(p.firstPageLatency.p50)}` : '-'
  })
  line('      p99 ms, page 1,000 / page 1', (d) => {
    const p = scale(d)?.deepPage
    return p ? `${fixed(p.deepPageLatency.p99)} / ${fixed(p.firstPageLatency.p99)}` : '-'
  })
  for (const requests of [100_000, 1_000_000]) {
    line(
      `(d) peak RSS MiB after ${requests.toLocaleString('en')} requests`,
      (d) => {
        const checkpoint = soak(d)?.checkpoints.find((c) => c.requests === requests)
        if (checkpoint) return fixed(checkpoint.peakRssMiB, 1)
        return requests > 100_000 && !report.settings.long ? 'BENCH_LONG=1' : '-'
      },
      requests === 100_000 ? 'peakRssAfter100k' : 'peakRssAfter1M',
    )
  }
  line(
    '    peak RSS growth, 100k to 1M requests',
    (d) => {
      const growth = soak(d)?.growthPercent
      return growth == null ? '-' : `${growth.toFixed(1)} %`
    },
    'rssGrowth',
  )
  line(
    '(e) p50, 1M store by tag / a one-page store unfiltered',
    (d) => times(filtered(d, 'tag')?.p50Ratio),
    'tagPage',
  )
  line(
    '      by vendor / a one-page store unfiltered',
    (d) => times(filtered(d, 'vendor')?.p50Ratio),
    'vendorPage',
  )
  line(
    '      by slug / a one-page store unfiltered',
    (d) => times(filtered(d, 'slug')?.p50Ratio),
    'slugPage',
  )
  line('      p50 ms, tag / vendor / slug / unfiltered', (d) => {
    const f = scale(d)?.filteredPages
    if (!f) return '-'
    const p50 = (name: ListFilter['name']) => fixed(filtered(d, name)?.latency.p50 ?? NaN)
    return `${p50('tag')} / ${p50('vendor')} / ${p50('slug')} / ${fixed(f.referenceLatency.p50)}`
  })
  line('      p99 ms, tag / vendor / slug / unfiltered', (d) => {
    const f = scale(d)?.filteredPages
    if (!f) return '-'
    const p99 = (name: ListFilter['name']) => fixed(filtered(d, name)?.latency.p99 ?? NaN)
    return `${p99('tag')} / ${p99('vendor')} / ${p99('slug')} / ${fixed(f.referenceLatency.p99)}`
  })
  return render(rows)
}

/** A row of one cell per dialect, each marked where it missed its goal, then the goal. */
function goalRow(
  label: string,
  dialects: Dialect[],
  cell: (d: Dialect) => string,
  goalOf: (d: Dialect) => Goal | undefined,
): string[] {
  const shown = goalOf(dialects[0]!)
  return [
    label,
    ...dialects.map((d) => (goalOf(d)?.met === false ? `${cell(d)} (missed)` : cell(d))),
    shown ? `${shown.op} ${shown.value}${shown.unit}` : '',
  ]
}

/** Columns padded to their widest cell: the first left-aligned, the others right-aligned, the last left. */
function render(rows: string[][]): string {
  const columns = Math.max(...rows.map((row) => row.length))
  const widths = Array.from({ length: columns }, (_, i) =>
    Math.max(...rows.map((row) => (row[i] ?? '').length)),
  )
  return rows
    .map((row) =>
      row
        .map((cell, i) =>
          i === 0 || i === columns - 1 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!),
        )
        .join('  ')
        .trimEnd(),
    )
    .join('\n')
}

function goalText(goal: Goal): string {
  const verdict = goal.met === null ? 'n/a' : goal.met ? 'met' : 'missed'
  return `${goal.figure} ${goal.op} ${goal.value}${goal.unit}: ${verdict}`
}

const whole = (value: number) => Math.round(value).toLocaleString('en')
const fixed = (value: number, digits = 2) => (Number.isFinite(value) ? value.toFixed(digits) : '-')
const times = (value: number | null | undefined) => (value == null ? '-' : `${value.toFixed(2)}x`)
