/**
 * Issue 35's import figure (bench/import.ts): the benchmark's file, and the same file with a
 * product metafield column per BENCH_METAFIELDS definition (20: text, integer, boolean and list
 * of text in turn, half filterable; the values the API benchmark writes), each imported by
 * `catalog import` into a fresh database that holds those 20 definitions, the two in turn,
 * `rounds` times (alternating which goes first). Goal: with / without >= 0.8 (products per
 * second, from the sums of the rounds' times). The values' import is checked: every product
 * holds its filter index rows.
 */
import { createDefinitionWork } from '../src/attributes/metafield-definition.service.js'
import { createDatabase } from '../src/db/database.js'
import { migrateToLatest } from '../src/db/migrate.js'
import { cliImport, writeCatalogueCsv, type MetafieldColumnSpec } from './import-file.js'
import { BENCH_METAFIELDS, METAFIELD_DEFINITIONS } from './scenarios.js'
import { BENCH_STORE, scratchDatabase, settle, type Context, type Dialect } from './servers.js'
import { ratio } from './support.js'

/** The two files of the figure: the same products, without and with the 20 columns. */
const ARMS: { name: 'without' | 'with20'; columns: readonly MetafieldColumnSpec[] }[] = [
  { name: 'without', columns: [] },
  { name: 'with20', columns: BENCH_METAFIELDS },
]

/** Filter index rows of one product of the file: one per filterable definition (no lists). */
const INDEXED_PER_PRODUCT = BENCH_METAFIELDS.filter(
  (m) => m.filterable && !m.type.startsWith('list.'),
).length

export async function importMetafields(
  context: Context,
  dialect: Dialect,
  options: { products: number; rounds: number; dir: string; log: (line: string) => void },
) {
  const { products, rounds, dir, log } = options
  const variants = products * 4
  const files = new Map<string, string>()
  for (const arm of ARMS) {
    const file = `${dir}/metafields-${arm.name}.csv`
    await writeCatalogueCsv(file, products, arm.columns)
    files.set(arm.name, file)
  }
  const runs: Record<string, { seconds: number; productsPerS: number; peakRssMiB: number }[]> = {
    without: [],
    with20: [],
  }
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? ARMS : [...ARMS].reverse()
    for (const arm of order) {
      const scratch = await scratchDatabase(context, dialect)
      const database = createDatabase(scratch.url)
      try {
        await migrateToLatest(database)
        for (const definition of METAFIELD_DEFINITIONS) {
          await database.write(createDefinitionWork(BENCH_STORE, definition))
        }
        await settle(context)
        const run = await cliImport(context, scratch.url, files.get(arm.name)!, variants)
        const indexed = await database.kysely
          .selectFrom('metafield_values')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .executeTakeFirstOrThrow()
        const expected = arm.columns.length === 0 ? 0 : products * INDEXED_PER_PRODUCT
        if (Number(indexed.n) !== expected) {
          throw new Error(`${arm.name}: ${indexed.n} filter index rows, not ${expected}`)
        }
        runs[arm.name]!.push({
          seconds: run.seconds,
          productsPerS: products / run.seconds,
          peakRssMiB: run.peakRssMiB,
        })
        log(
          `${dialect} import, ${arm.columns.length} metafield columns: ${run.seconds.toFixed(2)} s, ${(products / run.seconds).toFixed(0)} products/s`,
        )
      } finally {
        await database.close()
        await scratch.remove()
      }
    }
  }
  const sum = (list: { seconds: number }[]) => list.reduce((total, r) => total + r.seconds, 0)
  // Rate with / rate without, from the sums of the rounds' times.
  const rateRatio = ratio(sum(runs.without!), sum(runs.with20!))
  const line =
    `${dialect}: import with 20 metafield columns / without ${rateRatio?.toFixed(2)} (goal >= 0.8); ` +
    `${(products / (sum(runs.with20!) / rounds)).toFixed(0)} products/s with, ` +
    `${(products / (sum(runs.without!) / rounds)).toFixed(0)} without`
  return { entry: { runs, rateRatio }, line }
}
