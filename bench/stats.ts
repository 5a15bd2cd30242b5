/** Latencies of a set of requests, in milliseconds. */
export interface LatencySummary {
  count: number
  p50: number
  p99: number
  mean: number
  max: number
}

/** Exact percentiles (nearest rank) of raw samples, not of a bucketed histogram. */
export function summarizeLatencies(samples: ArrayLike<number>): LatencySummary {
  const sorted = Float64Array.from(samples).sort()
  const count = sorted.length
  if (count === 0) return { count, p50: NaN, p99: NaN, mean: NaN, max: NaN }
  let total = 0
  for (const value of sorted) total += value
  return {
    count,
    p50: percentile(sorted, 0.5),
    p99: percentile(sorted, 0.99),
    mean: total / count,
    max: sorted[count - 1]!,
  }
}

function percentile(sorted: Float64Array, fraction: number): number {
  return sorted[Math.max(0, Math.ceil(fraction * sorted.length) - 1)]!
}

/** `a / b`, or null when either is missing or b is 0, so that no ratio is made up. */
export function ratio(a: number | null | undefined, b: number | null | undefined): number | null {
  if (a == null || b == null || !Number.isFinite(a) || !Number.isFinite(b) || b === 0) return null
  return a / b
}

/** { a: 1 } and { a: 2, b: 1 } make { a: 3, b: 1 }. */
export function addCounts(counts: Record<string, number>[]): Record<string, number> {
  const total: Record<string, number> = {}
  for (const each of counts) {
    for (const [key, count] of Object.entries(each)) total[key] = (total[key] ?? 0) + count
  }
  return total
}

/** ' (ECONNRESET 2, request timed out 1)' for a log line, or '' when there were none. */
export function describeErrors(errorCounts: Record<string, number>): string {
  const kinds = Object.entries(errorCounts).map(([kind, count]) => `${kind} ${count}`)
  return kinds.length === 0 ? '' : ` (${kinds.join(', ')})`
}
