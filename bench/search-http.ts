/**
 * The search bench's figures over HTTP (issue 34), on its loaded store: the service (`catalog
 * serve`) and bare baselines (baseline-server.ts with baseline-search.ts) all on that one
 * database, their windows taken in turn (measure.ts measureInTurn), ratios of one run.
 *
 * - Throughput, 32 clients: a word in about 1 % of products with three facets, by price; the
 *   bare route runs the very statements the service ran for that query (captured in process
 *   by search.ts), prepared once, on the raw driver.
 * - Writes, 16 clients: create and PATCH on the service, on the bare route with its event and
 *   the product's search document, and on the bare route with its event alone.
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import { join } from 'node:path'
import type { CapturedSearch } from './baseline-search.js'
import { startLoadGenerator } from './load.js'
import { findings, measureInTurn, type Arm, type Session, type WindowFigures } from './measure.js'
import { API, PAGE_SIZE, SCENARIOS, type Spec } from './scenarios.js'
import {
  BASELINES,
  createContext,
  ROOT,
  startBaseline,
  startService,
  type Dialect,
  type RunningServer,
} from './servers.js'
import { apiClient, createCleanup, loadBenchConfig, ratio, runCommand } from './support.js'

const THROUGHPUT_CONNECTIONS = 32
const load = () =>
  os
    .loadavg()
    .map((n) => n.toFixed(1))
    .join(' ')
let built = false

/** `npm run build`, once per process, so that the figures are those of src/ as it is. */
export async function buildServiceOnce(log: (line: string) => void): Promise<void> {
  if (built) return
  log('building the service (npm run build), so that the figures are those of src/ as it is')
  await runCommand('npm', ['run', 'build'], { cwd: ROOT })
  built = true
}

export async function runSearchHttp(
  dialect: Dialect,
  databaseUrl: string,
  search: CapturedSearch,
  query: string,
): Promise<void> {
  const log = (line: string) => console.error(line)
  const config = loadBenchConfig()
  const cleanup = createCleanup(log)
  try {
    await buildServiceOnce(log)
    const context = createContext(cleanup, config)
    const session: Session = {
      context,
      load: startLoadGenerator(cleanup),
      config,
      found: findings(),
      log,
    }
    const dir = join(ROOT, 'bench', 'results')
    mkdirSync(dir, { recursive: true })
    const file = join(dir, `search-statements-${dialect}-${process.pid}.json`)
    writeFileSync(file, JSON.stringify(search))
    cleanup.add(`remove ${file}`, () => import('node:fs').then((fs) => fs.rmSync(file)))
    const [readKind, eventKind, documentKind] =
      dialect === 'sqlite'
        ? (['bare-normal', 'bare-normal-events', 'bare-normal-events-search'] as const)
        : (['bare-pg', 'bare-pg-events', 'bare-pg-events-search'] as const)
    const service = await startService(context, dialect, { databaseUrl })
    const bare = await startBaseline(context, readKind, {
      databaseUrl,
      env: { BASELINE_SEARCH: file },
    })
    const withDocument = await startBaseline(context, documentKind, { databaseUrl })
    const withoutDocument = await startBaseline(context, eventKind, { databaseUrl })

    const path = `${API}/products?limit=${PAGE_SIZE}&${query}`
    const pages = await Promise.all(
      [service, bare].map((s) =>
        apiClient(s.url, s.key).json<{ data: { id: string }[] }>('GET', path),
      ),
    )
    const ids = pages.map((page) =>
      page.data
        .slice(0, PAGE_SIZE)
        .map((p) => p.id)
        .join(),
    )
    if (ids[0] !== ids[1]) throw new Error(`the bare search route answers other products: ${path}`)
    log(
      `${dialect}: ${pages[0]!.data.length} products on the page, the same from both; load ${load()}`,
    )

    const rows: string[][] = []
    const row = (what: string, server: RunningServer, f: WindowFigures, base?: WindowFigures) => {
      session.found.watch(`${what}, ${server.kind} (${dialect})`, f)
      const name = server.kind === 'service' ? 'service' : `bare ${BASELINES[server.kind].short}`
      rows.push([
        what,
        name,
        f.reqPerS.toFixed(0),
        f.p50Ms.toFixed(1),
        f.p99Ms.toFixed(1),
        base ? `${ratio(f.reqPerS, base.reqPerS)?.toFixed(2) ?? '-'}×` : '',
        `${f.serverCpuPercent.toFixed(0)}/${f.clientCpuPercent.toFixed(0)}/${f.foreignCpuPercent.toFixed(0)}`,
      ])
    }

    log(
      `${dialect}: throughput, ${THROUGHPUT_CONNECTIONS} clients, service and bare search in turn`,
    )
    const searchSpecs: Spec[] = [{ scenario: 'list-page', targets: [{ query: `&${query}` }] }]
    const arms: Arm[] = [service, bare].map((server) => ({
      server,
      specs: searchSpecs,
      connections: THROUGHPUT_CONNECTIONS,
    }))
    const [s, b] = await measureInTurn(session, arms)
    row('search, 32 clients', service, s!, b!)
    row('search, 32 clients', bare, b!)

    for (const name of ['create-product', 'patch-product'] as const) {
      log(`${dialect}: ${name}, ${config.connections} clients, in turn; load ${load()}`)
      const servers = [service, withDocument, withoutDocument]
      const writeArms: Arm[] = []
      for (const server of servers) {
        const targets = await SCENARIOS[name].seed(apiClient(server.url, server.key))
        writeArms.push({ server, specs: [{ scenario: name, targets }] })
      }
      const [sw, dw, pw] = await measureInTurn(session, writeArms)
      const label = `${SCENARIOS[name].label}, ${config.connections} clients`
      row(label, service, sw!, dw!)
      row(label, withDocument, dw!, pw!)
      row(label, withoutDocument, pw!)
    }
    console.log(
      `\n| ${dialect}, ${new Date().toISOString().slice(0, 16)} UTC, load ${load()} | server | req/s | p50 ms | p99 ms | / next row | CPU server/load/other % |`,
    )
    console.log('| --- | --- | ---: | ---: | ---: | ---: | ---: |')
    for (const r of rows) console.log(`| ${r.join(' | ')} |`)
    for (const w of session.found.warnings) log(`WARNING: ${w}`)
    if (session.found.failures.length > 0) {
      throw new Error(`FAILED:\n  ${session.found.failures.join('\n  ')}`)
    }
    await session.load.stop()
  } finally {
    await cleanup.runAll()
  }
}
