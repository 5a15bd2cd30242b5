/**
 * Where the CPU of one request goes, the service against the bare PostgreSQL baselines (with
 * and without the event) in one run: the server's process, PostgreSQL's processes (every `postgres` process of the machine,
 * so run it on a PostgreSQL nothing else uses), and the rest of the machine (the load
 * generator, the kernel's network work, whatever else runs). On this 2-core machine, where
 * the CPU bounds PostgreSQL's writes, these sums are what the benchmark's ratios come from.
 *
 *   tsx bench/cpu-split.ts [scenario] [rounds] [requests]
 *
 * scenario: create-product (default), add-variant, get-product, patch-product, patch-variant.
 * Both servers are started as the benchmark starts them (bench/targets.ts), on fresh
 * databases; in `rounds` rounds (4) each gets a warm-up, then `requests` (10,000) from 16
 * connections, in turn (A B C, C B A, ...). Medians of the rounds are printed.
 * BENCH_POSTGRES_URL: the admin URL (postgres://postgres@127.0.0.1:5432/test by default).
 * CPU_PROF_DIR=<dir>: the service also writes a `--cpu-prof` profile there when it stops.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { buildBaselineServer } from './baseline-build.js'
import { cleanUpOnSignals, createCleanup } from './cleanup.js'
import { scenarioSpec } from './fixtures.js'
import { startLoadGenerator } from './load-job.js'
import { cpuSeconds, machineCpuSeconds, postgresCpuSeconds } from './proc.js'
import { startBaseline, startScriptNodeFlags, startService, type TargetContext } from './targets.js'

const ROOT = join(import.meta.dirname, '..')
const [scenario = 'create-product', roundsArg, countArg] = process.argv.slice(2)
const rounds = Number(roundsArg ?? 4)
const requests = Number(countArg ?? 10_000)
const profileDir = process.env.CPU_PROF_DIR

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = sorted.length >> 1
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2
}

async function main(): Promise<void> {
  const cleanup = createCleanup()
  cleanUpOnSignals(cleanup)
  try {
    // Inside the project, where the baseline's packages resolve; git ignores results/tmp/.
    mkdirSync(join(ROOT, 'bench', 'results', 'tmp'), { recursive: true })
    const work = mkdtempSync(join(ROOT, 'bench', 'results', 'tmp', 'split-'))
    cleanup.add(`remove ${work}`, () => rmSync(work, { recursive: true, force: true }))
    const context: TargetContext = {
      cleanup,
      serviceCli: join(ROOT, 'dist', 'cli', 'main.js'),
      serviceNodeFlags: [
        ...startScriptNodeFlags(join(ROOT, 'package.json')),
        ...(profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : []),
      ],
      baselineScript: buildBaselineServer(work),
      postgresUrl: process.env.BENCH_POSTGRES_URL || 'postgres://postgres@127.0.0.1:5432/test',
    }
    const load = startLoadGenerator(cleanup)
    const servers = [
      await startService(context, 'postgres'),
      await startBaseline(context, 'bare-pg'),
      await startBaseline(context, 'bare-pg-events'),
    ]
    const builds = []
    for (const server of servers) {
      builds.push({
        server,
        spec: await scenarioSpec(server, scenario),
        own: [] as number[],
        postgres: [] as number[],
        rest: [] as number[],
      })
    }
    for (let round = 0; round < rounds; round++) {
      for (const build of round % 2 === 0 ? builds : [...builds].reverse()) {
        const job = {
          targets: [{ url: build.server.url, key: build.server.key }],
          specs: [build.spec],
          connections: 16,
        }
        await load.load({ ...job, until: { requests: round === 0 ? 5000 : 1000 } })
        const own = cpuSeconds(build.server.pid)
        const postgres = postgresCpuSeconds()
        const busy = machineCpuSeconds()
        const result = await load.load({ ...job, until: { requests } })
        if (result.non2xx > 0 || result.errors > 0) {
          throw new Error(`${build.server.kind}: ${result.non2xx} non-2xx, ${result.errors} errors`)
        }
        const perRequest = (seconds: number) => (seconds * 1e6) / result.responses
        const ownUs = perRequest(cpuSeconds(build.server.pid) - own)
        const postgresUs = perRequest(postgresCpuSeconds() - postgres)
        build.own.push(ownUs)
        build.postgres.push(postgresUs)
        build.rest.push(perRequest(machineCpuSeconds() - busy) - ownUs - postgresUs)
      }
    }
    console.log(`${scenario}, µs of CPU per request (medians of ${rounds} rounds of ${requests}):`)
    for (const { server, own, postgres, rest } of builds) {
      const [a, b, c] = [median(own), median(postgres), median(rest)]
      console.log(
        `  ${server.kind.padEnd(14)} process ${a.toFixed(0)}, postgres ${b.toFixed(0)}, ` +
          `rest ${c.toFixed(0)}, total ${(a + b + c).toFixed(0)}`,
      )
    }
    await load.stop()
  } finally {
    await cleanup.runAll()
  }
}

main().catch((error) => {
  console.error(error)
  process.exitCode = 1
})
