/**
 * The import benchmark's generated Shopify CSV and its run by the CLI (bench/import.ts), shared
 * by its sections: the file, with or without metafield columns, and `catalog import`.
 */
import { once } from 'node:events'
import { createWriteStream } from 'node:fs'
import { cellFromValue } from '../src/attributes/metafield-columns.js'
import type { MetafieldType } from '../src/attributes/values/metafield-types.js'
import { metafieldValues } from './scenarios.js'
import { BENCH_STORE, type Context } from './servers.js'
import { childEnv, readMemory, spawnChild } from './support.js'

// ---------------------------------------------------------------------------------------
// The file: Shopify's classic columns with two options, as the export writes them, and, for
// the metafields figure, product metafield columns after them

export const HEADER = (
  'Handle,Title,Body (HTML),Vendor,Type,Tags,Published,Option1 Name,Option1 Value,Option2 Name,' +
  'Option2 Value,Variant SKU,Variant Grams,Variant Price,Variant Compare At Price,' +
  'Variant Barcode,Image Src,Image Position,Image Alt Text,Status'
).split(',')
const SIZES = ['S', 'M', 'L', 'XL']
const COLORS = ['Red', 'Blue', 'Green', 'Black', 'White']

/** A handle of letters only: one ending in digits would be read as a suffixed slug. */
function handleOf(n: number): string {
  let letters = ''
  do {
    letters = String.fromCharCode(97 + (n % 26)) + letters
    n = Math.floor(n / 26)
  } while (n > 0)
  return `bench-product-${letters}`
}

/**
 * The rows of product n, in HEADER's columns: 4 variants (Size x one Color), 3 tags, 2 images;
 * then a cell per metafield column, its value on the first row (the product's).
 */
function productRows(n: number, metafields: readonly MetafieldColumnSpec[]): string[][] {
  const handle = handleOf(n)
  const color = COLORS[n % COLORS.length]!
  return SIZES.map((size, i) => {
    const first = (value: string) => (i === 0 ? value : '')
    const image = (value: string) => (i < 2 ? value : '')
    return [
      handle,
      first(`Bench product ${handle.slice(14)}`),
      first(`<p>Product ${n}, made for the import benchmark.</p>`),
      first(`Vendor ${n % 50}`),
      first(`Type ${n % 20}`),
      first(`bench, tag-${n % 100}, colour ${color}`),
      first('true'),
      first('Size'),
      size,
      first('Color'),
      color,
      `SKU-${n}-${size}`,
      String(200 + i * 50),
      `${19 + i}.99`,
      first('29.99'),
      `BAR${String(n * 4 + i).padStart(10, '0')}`,
      image(`https://cdn.example.com/products/${n}/${i + 1}.jpg`),
      image(String(i + 1)),
      image(`Bench product ${n}, view ${i + 1}`),
      first('active'),
      ...(i === 0 ? metafieldCells(n, metafields) : metafields.map(() => '')),
    ]
  })
}

/** A product metafield column of the file: the definition it is stored under. */
export interface MetafieldColumnSpec {
  key: string
  type: MetafieldType
}

/** The columns of `metafields`, in the namespace of the benchmark's values (`bench.<key>`). */
function metafieldHeader(metafields: readonly MetafieldColumnSpec[]): string[] {
  return metafields.map((m) => `${m.key} (product.metafields.bench.${m.key})`)
}

/** Product n's cells: the values the API benchmark writes (metafieldValues), as Shopify's cells. */
function metafieldCells(n: number, metafields: readonly MetafieldColumnSpec[]): string[] {
  if (metafields.length === 0) return []
  const values = metafieldValues(n)
  return metafields.map((m) => cellFromValue(m.type, values[`bench.${m.key}`]))
}

const csvLine = (fields: string[]) =>
  `${fields.map((f) => (/[",\n\r]/.test(f) ? `"${f.replaceAll('"', '""')}"` : f)).join(',')}\r\n`

/** The file of `products` products, with a column per `metafields` (none by default). */
export async function writeCatalogueCsv(
  path: string,
  products: number,
  metafields: readonly MetafieldColumnSpec[] = [],
): Promise<void> {
  const out = createWriteStream(path)
  out.write(csvLine([...HEADER, ...metafieldHeader(metafields)]))
  for (let n = 0; n < products; n++) {
    if (!out.write(productRows(n, metafields).map(csvLine).join(''))) await once(out, 'drain')
  }
  out.end()
  await once(out, 'finish')
}

/** `catalog import` of `file` into the database, with its time and the process's peak RSS. */
export async function cliImport(
  context: Context,
  databaseUrl: string,
  file: string,
  variants: number,
) {
  const started = performance.now()
  const env = childEnv({ DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn' })
  const child = spawnChild(
    context.cleanup,
    'catalog import',
    process.execPath,
    [context.cli, 'import', file, '--store', BENCH_STORE, '--new-store', '--json'],
    env,
  )
  let peak = 0
  const timer = setInterval(() => {
    try {
      peak = Math.max(peak, readMemory(child.pid).peakMiB)
    } catch {
      // it has exited
    }
  }, 50)
  let stdout = ''
  child.process.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()))
  const code = await child.exited
  clearInterval(timer)
  const seconds = (performance.now() - started) / 1000
  if (code !== 0) throw new Error(`catalog import exited ${code}:\n${child.output()}`)
  const summary = JSON.parse(stdout) as { variantsCreated: number; rowsFailed: number }
  if (summary.variantsCreated !== variants || summary.rowsFailed !== 0) {
    throw new Error(`catalog import did not create every variant: ${stdout.slice(0, 500)}`)
  }
  return { seconds, variantsPerS: variants / seconds, peakRssMiB: peak }
}
