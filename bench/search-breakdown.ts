/**
 * Where the service's time goes, statement by statement (issue 34's throughput and write
 * cost), on a store kept by `bench/search.ts --keep`, one unit at a time, in process (no
 * HTTP), each statement timed from its send to its rows; the rest of a unit (BEGIN, COMMIT,
 * JS) is its total less its statements'. Units: the search of search-http.ts (a word, three
 * facets, by price: listProducts), a create and a PATCH (createProductWork,
 * updateProductWork, as the routes run them).
 *
 *   npx tsx bench/search-breakdown.ts '<the URL search.ts --keep printed>' [units] [word]
 *
 * The word: the bench's WORDS[17] (`kadra` with its vocabulary).
 */
import type { KyselyPlugin } from 'kysely'
import { createDatabase } from '../src/db/database.js'
import { listProducts } from '../src/search/search.service.js'
import { createProductWork } from '../src/catalog/product-create-work.js'
import { updateProductWork } from '../src/catalog/product-update-work.js'

const [url, units = '300', word = 'kadra'] = process.argv.slice(2)
if (!url) throw new Error('usage: search-breakdown.ts <database URL> [units] [word]')
const n = Number(units)
const database = createDatabase(url)
const spent = new Map<string, { count: number; ms: number }>()
/** A statement's kind: its verbs and tables. */
function labelOf(sql: string): string {
  const text = sql.replace(/\s+/g, ' ').replace(/"/g, '').trim()
  const writes = text.match(/(insert into \w+|update \w+ set|delete from \w+)/gi) ?? []
  if (writes.length > 0) return [...new Set(writes)].join(' + ')
  return (
    text.match(/^select .*? from (\w+)/i)?.[1]?.replace(/^/, 'select from ') ?? text.slice(0, 50)
  )
}
// One unit at a time: a statement runs from its compile (or, for one compiled once and kept,
// from the end of the one before) to its rows.
const labels = new Map<string, string>()
let pending: { id: string; at: number } | undefined
let lastEnd = 0
const executor = database.kysely.getExecutor()
const timing: KyselyPlugin = {
  transformQuery({ node, queryId }) {
    if (!labels.has(queryId.queryId))
      labels.set(queryId.queryId, labelOf(executor.compileQuery(node, queryId).sql))
    pending = { id: queryId.queryId, at: performance.now() }
    return node
  },
  async transformResult({ queryId, result }) {
    const now = performance.now()
    const from = pending && pending.id === queryId.queryId ? Math.max(pending.at, lastEnd) : lastEnd
    const label = labels.get(queryId.queryId) ?? 'a statement compiled once'
    const entry = spent.get(label) ?? { count: 0, ms: 0 }
    entry.count++
    entry.ms += now - from
    spent.set(label, entry)
    lastEnd = now
    return result
  },
}
const db = database.kysely.withPlugin(timing)

async function measure(what: string, unit: (i: number) => Promise<unknown>) {
  for (let i = 0; i < 20; i++) await unit(-1 - i) // warm-up
  spent.clear()
  const t0 = performance.now()
  lastEnd = t0
  for (let i = 0; i < n; i++) await unit(i)
  const total = (performance.now() - t0) / n
  console.log(
    `\n${database.dialect}, ${what}: ${total.toFixed(2)} ms a unit (${(1000 / total).toFixed(0)}/s, one client)`,
  )
  let statements = 0
  for (const [label, { count, ms }] of [...spent].sort((a, b) => b[1].ms - a[1].ms)) {
    statements += ms / n
    console.log(`  ${(ms / n).toFixed(2).padStart(6)} ms  ${(count / n).toFixed(1)}x  ${label}`)
  }
  console.log(`  ${(total - statements).toFixed(2).padStart(6)} ms  BEGIN, COMMIT and JS`)
}

const query = { q: word, sort: 'price', facets: 'vendor,tag,option.Color', limit: 50 }
await measure(`search (${new URLSearchParams(query as never)})`, () =>
  listProducts({ ...database, kysely: db }, 'bench', query),
)
const ids: string[] = []
await measure('create', async (i) => {
  const product = await createProductWork('bench', {
    name: `Breakdown ${i} ${Date.now()} tee`,
    description: 'A product made by the load benchmark.',
    price: 19.99,
    status: 'active',
  })(db)
  ids.push(product.id)
})
await measure('PATCH', (i) =>
  updateProductWork(
    'bench',
    ids[(i + ids.length) % ids.length]!,
    { name: `Breakdown edit ${i} ${Date.now()}`, price: 10 + (Math.abs(i) % 100) },
    undefined,
  )(db),
)
await database.close()
