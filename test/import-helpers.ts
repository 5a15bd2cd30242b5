import { fileURLToPath } from 'node:url'
import { createReadStream } from 'node:fs'
import { getProduct } from '../src/catalog/product.service.js'
import type { Database } from '../src/db/database.js'
import { toIso } from '../src/db/values.js'
import { exportCatalog } from '../src/import/export.service.js'
import {
  importCatalog,
  type ImportOptions,
  type ImportSummary,
} from '../src/import/import.service.js'
import { listProductsOldestFirst } from '../src/catalog/product-list.repository.js'

/**
 * Shopify's own templates: copies, byte for byte, of those in shared/data/shopify beside the
 * repository (never edited), so that a clone anywhere runs the tests; `test/import.test.ts`
 * checks that they still match the shared ones wherever those are present.
 */
export const SHOPIFY_SAMPLES = fileURLToPath(new URL('fixtures/shopify', import.meta.url))
export const SHARED_SHOPIFY_SAMPLES = fileURLToPath(
  new URL('../../shared/data/shopify', import.meta.url),
)
export const SAMPLE_CLASSIC = `${SHOPIFY_SAMPLES}/product_template_classic.csv`
export const SAMPLE_2025 = `${SHOPIFY_SAMPLES}/product_template_2025.csv`

/** Imports CSV text (or bytes, or a file path given as {file}) into the store. */
export function importText(
  database: Database,
  store: string,
  csv: string | Buffer | { file: string },
  options?: ImportOptions,
): Promise<ImportSummary> {
  const input =
    typeof csv === 'object' && 'file' in csv
      ? createReadStream(csv.file)
      : (async function* () {
          yield typeof csv === 'string' ? Buffer.from(csv) : csv
        })()
  return importCatalog(database, store, input, options)
}

export async function exportText(database: Database, store: string): Promise<string> {
  let text = ''
  for await (const piece of exportCatalog(database, store)) text += piece
  return text
}

/** CSV lines joined with CRLF, as Shopify writes them. */
export function csv(...lines: string[]): string {
  return `${lines.join('\r\n')}\r\n`
}

/**
 * The store's catalogue as a user compares two of them: every product (oldest first) with
 * its variants in order, without what a store assigns (ids, times, versions, positions).
 */
export async function catalogue(database: Database, store: string) {
  const products: Record<string, unknown>[] = []
  let after: { createdAt: string; id: string } | undefined
  for (;;) {
    const rows = await listProductsOldestFirst(database.kysely, store, after, 100)
    if (rows.length === 0) break
    for (const row of rows) {
      const product = await getProduct(database, store, row.id)
      const { id, createdAt, updatedAt, version, variants, ...fields } = product
      ;(void id, createdAt, updatedAt, version)
      products.push({
        ...fields,
        variants: variants.map((variant) => {
          const { id, productId, createdAt, updatedAt, version, position, ...rest } = variant
          ;(void id, productId, createdAt, updatedAt, version, position)
          return rest
        }),
      })
    }
    const last = rows.at(-1)!
    after = { createdAt: toIso(last.created_at), id: last.id }
  }
  return products
}

/** The summary of an import that did nothing but read `rows` rows. */
export function unchanged(rows: number, summary: ImportSummary) {
  return {
    rowsProcessed: rows,
    productsCreated: 0,
    productsUpdated: 0,
    variantsCreated: 0,
    variantsUpdated: 0,
    rowsFailed: 0,
    errors: [],
    columnsNotStored: summary.columnsNotStored,
    warnings: summary.warnings,
    skusCleared: summary.skusCleared,
    productsFailed: 0,
    productsSkippedForDuplicateSkus: 0,
    rowsSkippedForDuplicateSkus: 0,
    errorCount: 0,
  }
}
