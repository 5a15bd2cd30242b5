/**
 * The in-process cost of adding a variant (app.inject, 8 at a time) to products that have
 * 0, 50 and 300 variants already: the process's CPU time and the wall time per add, on one dialect: whether an add's document work grows with
 * the product's variant count (docs/decisions/0056-added-variant-document.md).
 *
 *   tsx bench/add-variant-profile.ts <sqlite|postgres> [adds per size]
 *
 * BENCH_POSTGRES_URL: the admin URL (a scratch database is made and dropped).
 */
import { call as callStore, openStore, productBody, rate } from './in-process-store.js'
import { createContext, type Dialect } from './servers.js'
import { loadBenchConfig, runMain } from './support.js'

const [dialect, countArg] = process.argv.slice(2) as [Dialect, string?]
const ADDS = Number(countArg ?? 200)
const SIZES = [0, 50, 300]
const PRODUCTS = 4

const variantBody = (n: number) => ({
  name: `Size ${n}`,
  sku: `SKU-${n}`,
  price: 21.5,
  options: { size: `s${n}`, color: `colour-${n % 7}` },
})

await runMain('add-variant-profile', async (cleanup) => {
  const store = await openStore(createContext(cleanup, loadBenchConfig()), dialect)
  const call = (method: string, path: string, body?: unknown) =>
    callStore(store, method, path, body)
  let n = 0
  const products = new Map<number, string[]>()
  for (const size of SIZES) {
    const ids: string[] = []
    for (let p = 0; p < PRODUCTS; p++)
      ids.push((await call('POST', '/products', productBody(size * 10 + p))).data.id)
    await rate(size * PRODUCTS, (i) =>
      call('POST', `/products/${ids[i % PRODUCTS]}/variants`, variantBody(n++)),
    )
    products.set(size, ids)
  }
  // Warm up the statements of the add on a product of its own.
  const { data: warm } = await call('POST', '/products', productBody(9999))
  await rate(100, () => call('POST', `/products/${warm.id}/variants`, variantBody(n++)))
  const figures: string[] = []
  for (const size of SIZES) {
    const ids = products.get(size)!
    const cpu = process.cpuUsage()
    const started = performance.now()
    await rate(ADDS, (i) =>
      call('POST', `/products/${ids[i % PRODUCTS]}/variants`, variantBody(n++)),
    )
    const wall = (performance.now() - started) / ADDS
    const used = process.cpuUsage(cpu)
    figures.push(
      `${size}: ${((used.user + used.system) / 1000 / ADDS).toFixed(3)} ms CPU, ${wall.toFixed(3)} ms wall`,
    )
  }
  console.log(
    `${dialect} add variant (${ADDS} adds per size, ${PRODUCTS} products): ${figures.join('; ')}`,
  )
  await store.close()
  return 0
})
