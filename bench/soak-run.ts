/**
 * `npm run bench:soak`: only the memory soak of the benchmark (bench/soak.ts): the service,
 * on a fresh database of each dialect, answers 100,000 requests of a mix of the six scenarios,
 * and its peak RSS is read, once with `npm start`'s V8 flags and once without. The service
 * runs on the Node that runs this script, so that Node versions can be compared:
 * `PATH=<node 24>/bin:$PATH npm run bench:soak` (better-sqlite3 built for that Node).
 * Prints one line per run, and exits 1 if any request failed. It measures memory, not speed:
 * the machine may be busy.
 *
 * Environment: BENCH_POSTGRES_URL (as for npm run bench; SQLite only without it),
 * BENCH_SOAK_FLAGS (`both`, the default, `flags` or `none`).
 */
import { fileURLToPath } from 'node:url'
import { join } from 'node:path'
import { cleanUpOnSignals, createCleanup } from './cleanup.js'
import { loadBenchConfig } from './config.js'
import { startLoadGenerator } from './load-job.js'
import { runCommand } from './processes.js'
import { runSoak } from './soak.js'
import { startScriptNodeFlags, type Dialect, type TargetContext } from './targets.js'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const log = (line: string) => console.error(line)

async function soak(): Promise<number> {
  const config = { ...loadBenchConfig(), long: false }
  const flags = startScriptNodeFlags(join(ROOT, 'package.json'))
  const which = process.env.BENCH_SOAK_FLAGS ?? 'both'
  const variants: [string, string[]][] = [
    ['npm start flags', flags],
    ['V8 defaults', []],
  ]
  const chosen = variants.filter(
    ([label]) => which === 'both' || (which === 'flags') === (label === 'npm start flags'),
  )
  await runCommand('npm', ['run', 'build'], { cwd: ROOT })
  const dialects: Dialect[] = config.postgresUrl ? ['sqlite', 'postgres'] : ['sqlite']
  const load = startLoadGenerator(cleanup)
  let failed = 0
  try {
    for (const dialect of dialects) {
      for (const [label, serviceNodeFlags] of chosen) {
        const context: TargetContext = {
          cleanup,
          serviceCli: join(ROOT, 'dist', 'cli', 'main.js'),
          serviceNodeFlags,
          baselineScript: '',
          postgresUrl: config.postgresUrl,
        }
        log(`Node ${process.version}, ${dialect}, ${label} (${serviceNodeFlags.join(' ')}):`)
        const figures = await runSoak(context, dialect, load, config, log)
        failed += figures.checkpoints.reduce((sum, c) => sum + c.non2xx + c.errors, 0)
        const [checkpoint] = figures.checkpoints
        console.log(
          `soak ${process.version} ${dialect} ${label}: peak RSS ${checkpoint!.peakRssMiB.toFixed(1)} MiB` +
            ` after ${checkpoint!.requests} requests (${checkpoint!.reqPerS.toFixed(0)} req/s)`,
        )
      }
    }
  } finally {
    await load.stop()
  }
  if (failed > 0) log(`FAILED: ${failed} requests went wrong`)
  return failed > 0 ? 1 : 0
}

const cleanup = createCleanup(log)
const signalled = cleanUpOnSignals(cleanup)
try {
  process.exitCode = await soak()
} catch (error) {
  if (!signalled()) {
    log(`soak: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`)
  }
  process.exitCode = 1
} finally {
  await cleanup.runAll()
}
