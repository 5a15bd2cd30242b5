/**
 * The report as an SVG: req/s of the service and its baselines per scenario, with the
 * service's ratio to each baseline; p50 and p99 latencies; the scale figures as text.
 */
import type { BenchReport } from './report.js'
import { SCENARIO_LABELS, SCENARIOS, type Scenario } from './scenarios.js'
import { scaleLines } from './table.js'
import type { Dialect, ServerKind } from './targets.js'

const COLORS: Record<ServerKind, string> = {
  service: '#2563eb',
  'bare-normal': '#9ca3af',
  'bare-full': '#d97706',
  'bare-pg': '#6b7280',
  'bare-pg-events': '#a78bfa',
}
const LEGEND: Record<ServerKind, string> = {
  service: 'service',
  'bare-normal': 'bare SQLite, synchronous=NORMAL',
  'bare-full': 'bare SQLite, synchronous=FULL',
  'bare-pg': 'bare pg, pool of 10',
  'bare-pg-events': 'bare pg with its event, pool of 10',
}
const SERVERS: Record<Dialect, ServerKind[]> = {
  sqlite: ['service', 'bare-normal', 'bare-full'],
  postgres: ['service', 'bare-pg', 'bare-pg-events'],
}
const DIALECT_LABELS: Record<Dialect, string> = { sqlite: 'SQLite', postgres: 'PostgreSQL' }

const LEFT = 80
const MIN_WIDTH = 820
const BAR = 34
const BAR_GAP = 4
const GROUP_GAP = 26
const DIALECT_GAP = 40
const PANEL_HEIGHT = 300
const FONT = 'font-family="Helvetica, Arial, sans-serif"'

interface Slot {
  dialect: Dialect
  scenario: Scenario
  server: ServerKind
  x: number
}

export function renderChart(report: BenchReport): string {
  const slots = layout(report.settings.dialects)
  const width = Math.max(MIN_WIDTH, (slots.at(-1)?.x ?? 0) + BAR + 40)
  const parts: string[] = []
  let y = 20
  parts.push(
    text(
      LEFT,
      (y += 16),
      'Catalogue service vs bare baselines',
      'font-size="20" font-weight="bold"',
    ),
    text(
      LEFT,
      (y += 20),
      `${report.startedAt.slice(0, 16).replace('T', ' ')} UTC · ${report.machine.cpuModel}, ` +
        `${report.machine.cores} cores · Node ${report.machine.node} · ${report.settings.connections} connections, ` +
        `${report.settings.durationS} s windows`,
      'font-size="12" fill="#4b5563"',
    ),
  )
  y += 16
  parts.push(legend(report.settings.dialects, y))
  y += 70
  parts.push(throughputPanel(report, slots, y, width))
  y += PANEL_HEIGHT + 100
  parts.push(latencyPanel(report, slots, y, width))
  y += PANEL_HEIGHT + 70
  if (report.settings.scale) {
    const lines = scaleLines(report)
    lines.forEach((line, i) =>
      parts.push(
        text(
          LEFT,
          y + 22 + i * 16,
          line,
          `font-size="12" font-family="Menlo, Consolas, monospace" xml:space="preserve"${i === 0 ? ' font-weight="bold"' : ''}`,
        ),
      ),
    )
    y += 22 + lines.length * 16 + 10
  }
  const height = y + 10
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" ${FONT}>`,
    `<rect width="100%" height="100%" fill="#ffffff"/>`,
    ...parts,
    '</svg>',
    '',
  ].join('\n')
}

function layout(dialects: Dialect[]): Slot[] {
  const slots: Slot[] = []
  let x = LEFT + 20
  for (const dialect of dialects) {
    for (const scenario of SCENARIOS) {
      for (const server of SERVERS[dialect]) {
        slots.push({ dialect, scenario, server, x })
        x += BAR + BAR_GAP
      }
      x += GROUP_GAP
    }
    x += DIALECT_GAP
  }
  return slots
}

function legend(dialects: Dialect[], y: number): string {
  const kinds = [...new Set(dialects.flatMap((d) => SERVERS[d]))]
  let x = LEFT
  return kinds
    .map((kind) => {
      const item =
        `<rect x="${x}" y="${y}" width="14" height="14" fill="${COLORS[kind]}"/>` +
        text(x + 20, y + 12, LEGEND[kind], 'font-size="13"')
      x += 44 + LEGEND[kind].length * 7.5
      return item
    })
    .join('\n')
}

function throughputPanel(report: BenchReport, slots: Slot[], top: number, width: number): string {
  const bottom = top + PANEL_HEIGHT
  const values = slots.map((slot) => runOf(report, slot)?.reqPerS ?? 0)
  const max = niceCeiling(Math.max(1, ...values) * 1.12)
  const y = (value: number) => bottom - (value / max) * PANEL_HEIGHT
  const parts = panelTitle(
    top,
    'Requests per second (higher is better)',
    "Bold over a baseline's bar: the service's req/s ÷ that baseline's",
  )
  for (const tick of ticks(max)) parts.push(gridLine(y(tick), formatNumber(tick), width))
  for (const slot of slots) {
    const run = runOf(report, slot)
    if (!run) continue
    const barTop = y(run.reqPerS)
    parts.push(
      `<rect x="${slot.x}" y="${barTop}" width="${BAR}" height="${bottom - barTop}" fill="${COLORS[slot.server]}"/>`,
      text(
        slot.x + BAR / 2,
        barTop - 4,
        formatNumber(run.reqPerS),
        'font-size="10" text-anchor="middle"',
      ),
    )
    if (slot.server !== 'service') {
      const comparison = report.comparisons.find(
        (c) =>
          c.dialect === slot.dialect && c.scenario === slot.scenario && c.baseline === slot.server,
      )
      if (comparison?.reqPerS != null) {
        parts.push(
          text(
            slot.x + BAR / 2,
            barTop - 17,
            `${comparison.reqPerS.toFixed(2)}×`,
            'font-size="11" font-weight="bold" text-anchor="middle" fill="#1e3a8a"',
          ),
        )
      }
    }
  }
  parts.push(axisLabels(slots, bottom, width))
  return parts.join('\n')
}

function latencyPanel(report: BenchReport, slots: Slot[], top: number, width: number): string {
  const bottom = top + PANEL_HEIGHT
  const p99s = slots.map((slot) => runOf(report, slot)?.p99Ms ?? 0)
  const floor = 0.1
  // Log scale: latencies of reads and of fsync-bound writes differ by orders of magnitude.
  // Headroom over the highest bar for its rotated label.
  const ceiling = Math.max(1, ...p99s) * 4
  const y = (ms: number) =>
    bottom - (Math.log10(Math.max(ms, floor) / floor) / Math.log10(ceiling / floor)) * PANEL_HEIGHT
  const parts = panelTitle(
    top,
    'Latency in ms, log scale (lower is better)',
    'Dark bar p50, light bar p99; labels p50 / p99',
  )
  for (let power = Math.log10(floor); 10 ** power <= ceiling; power++) {
    parts.push(gridLine(y(10 ** power), formatNumber(10 ** power), width))
  }
  for (const slot of slots) {
    const run = runOf(report, slot)
    if (!run) continue
    const p99Top = y(run.p99Ms)
    const p50Top = y(run.p50Ms)
    parts.push(
      `<rect x="${slot.x}" y="${p99Top}" width="${BAR}" height="${bottom - p99Top}" fill="${COLORS[slot.server]}" fill-opacity="0.35"/>`,
      `<rect x="${slot.x + 7}" y="${p50Top}" width="${BAR - 14}" height="${bottom - p50Top}" fill="${COLORS[slot.server]}"/>`,
      text(
        slot.x + BAR / 2 + 4,
        p99Top - 4,
        `${formatMs(run.p50Ms)} / ${formatMs(run.p99Ms)}`,
        `font-size="10" transform="rotate(-90 ${slot.x + BAR / 2 + 4} ${p99Top - 4})"`,
      ),
    )
  }
  parts.push(axisLabels(slots, bottom, width))
  return parts.join('\n')
}

/** The x axis, scenario names under each group and dialect names under those. */
function axisLabels(slots: Slot[], bottom: number, width: number): string {
  const parts = [
    `<line x1="${LEFT}" y1="${bottom}" x2="${width - 20}" y2="${bottom}" stroke="#111827"/>`,
  ]
  const span = (group: Slot[]) => {
    const first = group[0]!
    const last = group.at(-1)!
    return (first.x + last.x + BAR) / 2
  }
  const dialects = [...new Set(slots.map((s) => s.dialect))]
  for (const dialect of dialects) {
    const ofDialect = slots.filter((s) => s.dialect === dialect)
    for (const scenario of SCENARIOS) {
      const group = ofDialect.filter((s) => s.scenario === scenario)
      if (group.length > 0) {
        parts.push(
          text(
            span(group),
            bottom + 16,
            SCENARIO_LABELS[scenario],
            'font-size="12" text-anchor="middle"',
          ),
        )
      }
    }
    parts.push(
      text(
        span(ofDialect),
        bottom + 36,
        DIALECT_LABELS[dialect],
        'font-size="14" font-weight="bold" text-anchor="middle"',
      ),
    )
  }
  return parts.join('\n')
}

function panelTitle(top: number, title: string, subtitle: string): string[] {
  return [
    text(LEFT, top - 30, title, 'font-size="15" font-weight="bold"'),
    text(LEFT, top - 12, subtitle, 'font-size="12" fill="#4b5563"'),
  ]
}

function gridLine(y: number, label: string, width: number): string {
  return (
    `<line x1="${LEFT}" y1="${y}" x2="${width - 20}" y2="${y}" stroke="#e5e7eb"/>` +
    text(LEFT - 8, y + 4, label, 'font-size="11" text-anchor="end" fill="#4b5563"')
  )
}

function runOf(report: BenchReport, slot: Slot) {
  return report.runs.find(
    (r) => r.dialect === slot.dialect && r.scenario === slot.scenario && r.server === slot.server,
  )
}

/** The least round number (1, 1.5, 2, 2.5, 3, 4, 5, 6 or 8 times a power of ten) >= value. */
function niceCeiling(value: number): number {
  const power = 10 ** Math.floor(Math.log10(value))
  return ([1, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10].find((m) => m * power >= value) ?? 10) * power
}

/** Gridlines from 0 to max at a round step, four to eight of them. */
function ticks(max: number): number[] {
  const power = 10 ** Math.floor(Math.log10(max / 4))
  const step = ([1, 2, 2.5, 5, 10].find((m) => max / (m * power) <= 8) ?? 10) * power
  return Array.from({ length: Math.floor(max / step + 1e-9) + 1 }, (_, i) => i * step)
}

const formatNumber = (value: number) =>
  value >= 1 ? Math.round(value).toLocaleString('en') : String(Number(value.toPrecision(2)))
const formatMs = (ms: number) => (ms >= 10 ? ms.toFixed(0) : ms.toFixed(ms >= 1 ? 1 : 2))

function text(x: number, y: number, content: string, attributes = ''): string {
  return `<text x="${x}" y="${y}" ${attributes}>${escapeXml(content)}</text>`
}

function escapeXml(value: string): string {
  return value.replace(
    /[<>&"]/g,
    (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;' })[c]!,
  )
}
