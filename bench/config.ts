/** Settings of one benchmark run, read from the environment once and frozen. */
export interface BenchConfig {
  /** Seconds of load before each measured window, whose figures are thrown away. */
  readonly warmupS: number
  /** Seconds of each measured window. */
  readonly durationS: number
  /** Concurrent connections of the load generator. */
  readonly connections: number
  /** Admin URL of a PostgreSQL server to benchmark on as well; each run creates its own databases there. */
  readonly postgresUrl: string | undefined
  /** Also run the soak to 1,000,000 requests (minutes), not only to 100,000. */
  readonly long: boolean
  /** Measure the scale figures (a million products seeded, same-name slugs, deep pages, soak). */
  readonly scale: boolean
  /** Run the six scenarios against the bare baselines, and the instances figures. */
  readonly scenarios: boolean
  /** Measure the webhook delivery figures (webhooks.ts). */
  readonly webhooks: boolean
}

export class BenchConfigError extends Error {}

export function loadBenchConfig(env: NodeJS.ProcessEnv = process.env): BenchConfig {
  return Object.freeze({
    warmupS: seconds(env, 'BENCH_WARMUP_S', 3),
    durationS: seconds(env, 'BENCH_DURATION_S', 10),
    connections: 16,
    postgresUrl: postgresUrl(env.BENCH_POSTGRES_URL),
    long: flag(env, 'BENCH_LONG', false),
    scale: flag(env, 'BENCH_SCALE', true),
    scenarios: flag(env, 'BENCH_SCENARIOS', true),
    webhooks: flag(env, 'BENCH_WEBHOOKS', true),
  })
}

function seconds(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name]
  if (raw === undefined || raw === '') return fallback
  const value = Number(raw)
  if (!Number.isInteger(value) || value < 1 || value > 3600) {
    throw new BenchConfigError(`${name} must be a whole number of seconds from 1 to 3600`)
  }
  return value
}

function flag(env: NodeJS.ProcessEnv, name: string, fallback: boolean): boolean {
  const raw = env[name]
  if (raw === undefined || raw === '') return fallback
  if (raw === '1') return true
  if (raw === '0') return false
  throw new BenchConfigError(`${name} must be 1 or 0`)
}

function postgresUrl(raw: string | undefined): string | undefined {
  if (raw === undefined || raw === '') return undefined
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    throw new BenchConfigError('BENCH_POSTGRES_URL must be a postgres:// URL')
  }
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:') {
    throw new BenchConfigError('BENCH_POSTGRES_URL must be a postgres:// URL')
  }
  // The load only ever goes to this machine; so does the database it is measured against.
  if (!['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname)) {
    throw new BenchConfigError('BENCH_POSTGRES_URL must point at this machine (127.0.0.1)')
  }
  return raw
}
