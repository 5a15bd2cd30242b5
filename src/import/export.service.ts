import { Readable } from 'node:stream'
import { stringify } from 'csv-stringify/sync'
import { rowToProduct, rowToVariant } from '../catalog/catalog.mappers.js'
import type { Product, Variant } from '../catalog/catalog-records.schemas.js'
import type { Database } from '../db/database.js'
import type { Executor, MetafieldDefinitionRow } from '../db/schema.js'
import { cellFromValue, metafieldColumnName } from '../attributes/metafield-columns.js'
import { definitionsOfStore } from '../attributes/values/metafield-definition.repository.js'
import { toIso } from '../db/values.js'
import { exportHeader, SHOPIFY_OPTION_COLUMNS } from './shopify-columns.js'
import { listProductsOldestFirst } from '../catalog/product-list.repository.js'
import {
  findVariantsOfProducts,
  maxOptionNamesOfAProduct,
} from '../catalog/variant-bulk.repository.js'

/** Products read (and written out) per page. */
const PAGE_SIZE = 200

/**
 * RFC 4180: csv-stringify quotes a field holding a comma, a quote or a line feed; a carriage
 * return alone must be quoted too, or readers (Python's csv, spreadsheets) end the record there.
 */
const CSV_OPTIONS = { record_delimiter: 'unix', quoted_match: /\r/ } as const

/**
 * The store's catalogue as a Shopify product CSV, in pieces of text: the header, then one
 * piece per page of products. Memory holds one page. The classic columns, then the export's
 * own (product price, compare-at price, sku, barcode, tax rate; the variant's name), which an
 * import reads back, so `import(export(store))` gives the same catalogue.
 *
 * A product's options are Shopify's OptionN Name / OptionN Value columns, names on its first
 * row: as many as the product in the store with the most option names needs (three at
 * least), counted by the database before the header; those past the third come last.
 *
 * The count and every page read one snapshot of the store: the file is the catalogue as it
 * was when the export began, whatever is changed meanwhile (a variant given a fourth option
 * name after the count would otherwise lose it to the header).
 */
export async function* exportCatalog(database: Database, storeId: string): AsyncGenerator<string> {
  const snapshot = await database.readSnapshot()
  try {
    const optionCount = Math.max(
      SHOPIFY_OPTION_COLUMNS,
      await maxOptionNamesOfAProduct(snapshot.db, storeId),
    )
    const definitions = await definitionsOfStore(snapshot.db, storeId)
    const header = exportHeader(optionCount, definitions.map(metafieldColumnName))
    yield stringify([header], { ...CSV_OPTIONS, eof: true })
    for await (const page of pages(snapshot.db, storeId)) {
      const records: string[][] = []
      for (const { product, variants } of page) {
        const rows = productRecords(product, variants, optionCount)
        rows.forEach((row, i) => row.push(...metafieldCells(definitions, product, variants[i], i)))
        records.push(...rows)
      }
      yield stringify(records, CSV_OPTIONS)
    }
  } finally {
    await snapshot.release()
  }
}

/**
 * `pieces` as a stream, once its first piece is read (so that a failure before it, such as a
 * database that is down, is thrown here rather than cutting an answer already begun).
 * Destroying the stream, as a response does when its client goes away, ends the generator
 * where it waits, so its `finally` runs (the export's releases its snapshot).
 */
export async function startedStream(pieces: AsyncGenerator<string>): Promise<Readable> {
  const first = await pieces.next()
  const stream = Readable.from(pieces)
  if (!first.done) stream.unshift(first.value)
  return stream
}

async function* pages(
  db: Executor,
  storeId: string,
): AsyncGenerator<{ product: Product; variants: Variant[] }[]> {
  let after: { createdAt: string; id: string } | undefined
  for (;;) {
    const rows = await listProductsOldestFirst(db, storeId, after, PAGE_SIZE)
    if (rows.length === 0) return
    const variants = await findVariantsOfProducts(
      db,
      storeId,
      rows.map((row) => row.id),
    )
    const byProduct = new Map<string, Variant[]>()
    for (const row of variants) {
      const list = byProduct.get(row.product_id) ?? []
      list.push(rowToVariant(row))
      byProduct.set(row.product_id, list)
    }
    yield rows.map((row) => ({
      product: rowToProduct(row),
      variants: byProduct.get(row.id) ?? [],
    }))
    const last = rows.at(-1)!
    after = { createdAt: toIso(last.created_at), id: last.id }
    if (rows.length < PAGE_SIZE) return
  }
}

/** A product's option names: every name its variants use, in the order they first appear. */
function optionNames(variants: Variant[]): string[] {
  const names = new Set<string>()
  for (const variant of variants) for (const name of Object.keys(variant.options)) names.add(name)
  return [...names]
}

/** One cell per definition: a product's values on its first row, a variant's on its own. */
function metafieldCells(
  definitions: MetafieldDefinitionRow[],
  product: Product,
  variant: Variant | undefined,
  row: number,
): string[] {
  return definitions.map((definition) => {
    const key = `${definition.namespace}.${definition.key}`
    const values =
      definition.owner === 'product' ? (row === 0 ? product.metafields : {}) : variant?.metafields
    return cellFromValue(definition.type, values?.[key])
  })
}

const amount = (value: number | null) => (value === null ? '' : String(value))

/** The rows of one product: as many as its variants or its images, one at least. */
function productRecords(product: Product, variants: Variant[], optionCount: number): string[][] {
  let names = optionNames(variants)
  // Shopify's variant of a product without options: the single option Title = Default Title.
  const defaultTitle = names.length === 0 && variants.length > 0
  if (defaultTitle) names = ['Title']
  const count = Math.max(1, variants.length, product.images.length)
  const records: string[][] = []
  for (let i = 0; i < count; i++) {
    const first = i === 0
    const variant = variants[i]
    const image = product.images[i]
    const options: string[] = []
    for (let n = 0; n < optionCount; n++) {
      const name = names[n]
      options.push(first && name !== undefined ? name : '')
      options.push(
        variant && name !== undefined
          ? defaultTitle
            ? 'Default Title'
            : (variant.options[name] ?? '')
          : '',
      )
    }
    records.push([
      product.slug,
      first ? product.name : '',
      first ? (product.description ?? '') : '',
      first ? (product.vendor ?? '') : '',
      first ? (product.productType ?? '') : '',
      first ? product.tags.join(', ') : '',
      first ? (product.status === 'active' ? 'TRUE' : 'FALSE') : '',
      ...options.slice(0, 2 * SHOPIFY_OPTION_COLUMNS),
      variant?.sku ?? '',
      variant?.weightGrams === null || variant === undefined ? '' : String(variant.weightGrams),
      variant ? amount(variant.price) : '',
      variant ? amount(variant.compareAtPrice) : '',
      variant?.barcode ?? '',
      image?.url ?? '',
      image ? String(i + 1) : '',
      image?.alt ?? '',
      first ? product.status : '',
      first ? amount(product.price) : '',
      first ? amount(product.compareAtPrice) : '',
      first ? (product.sku ?? '') : '',
      first ? (product.barcode ?? '') : '',
      first ? amount(product.taxRate) : '',
      variant?.name ?? '',
      ...options.slice(2 * SHOPIFY_OPTION_COLUMNS),
    ])
  }
  return records
}
