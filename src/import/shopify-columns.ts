import { parseMetafieldColumn, type MetafieldColumn } from '../attributes/metafield-columns.js'
import type { MetafieldType } from '../attributes/values/metafield-types.js'

/**
 * The columns of Shopify's product CSV that the catalogue stores, under their classic names
 * and their 2025 names (compared without regard to case or surrounding spaces), and the
 * columns of the export's own for what Shopify's format cannot carry.
 */
export const COLUMNS = {
  handle: ['Handle', 'URL handle'],
  title: ['Title'],
  description: ['Body (HTML)', 'Description'],
  vendor: ['Vendor'],
  type: ['Type'],
  tags: ['Tags'],
  status: ['Status'],
  published: ['Published', 'Published on online store'],
  sku: ['Variant SKU', 'SKU'],
  grams: ['Variant Grams', 'Weight value (grams)'],
  price: ['Variant Price', 'Price'],
  compareAtPrice: ['Variant Compare At Price', 'Compare-at price'],
  barcode: ['Variant Barcode', 'Barcode'],
  imageSrc: ['Image Src', 'Product image URL'],
  imagePosition: ['Image Position', 'Image position'],
  imageAlt: ['Image Alt Text', 'Image alt text'],
  productPrice: ['Product Price'],
  productCompareAtPrice: ['Product Compare At Price'],
  productSku: ['Product SKU'],
  productBarcode: ['Product Barcode'],
  productTaxRate: ['Product Tax Rate'],
  variantName: ['Variant Name'],
} as const

export type Column = keyof typeof COLUMNS

const BY_NAME = new Map<string, Column>()
for (const [column, names] of Object.entries(COLUMNS) as [Column, readonly string[]][]) {
  for (const name of names) BY_NAME.set(name.toLowerCase(), column)
}

const OPTION_COLUMN = /^option\s*(\d{1,4})\s+(name|value)$/

/** A metafield column of the file, with its definition's type once one is found. */
export type HeaderMetafield = MetafieldColumn & { type?: MetafieldType }

/** Where each stored column is in the file's records, and what the file holds besides. */
export interface Header {
  /**
   * The metafield columns: all of them as read; after resolveMetafieldColumns, those with a
   * definition of their owner, namespace and key (the others are not stored).
   */
  metafields: HeaderMetafield[]
  /** Index of each stored column present in the file. */
  index: Partial<Record<Column, number>>
  /** Per option number (1, 2, ...): the indexes of its name and value columns. */
  options: { name: number | undefined; value: number | undefined }[]
  /** The header's names, as the file spells them, by index. */
  names: string[]
  /** Names of the columns that are not stored, in the file's order. */
  notStored: string[]
  /** How many fields each record must have. */
  width: number
}

/**
 * Reads the header row. Undefined when it has no `Handle` (or `URL handle`) column: the
 * file is then refused whole. A name given twice is read from its first column only.
 */
export function readHeader(fields: string[]): Header | undefined {
  const index: Partial<Record<Column, number>> = {}
  const options: Header['options'] = []
  const notStored: string[] = []
  const metafields: HeaderMetafield[] = []
  fields.forEach((raw, i) => {
    const name = raw.trim().toLowerCase()
    const column = BY_NAME.get(name)
    if (column !== undefined && index[column] === undefined) {
      index[column] = i
      return
    }
    const option = OPTION_COLUMN.exec(name)
    if (option && Number(option[1]) >= 1) {
      const n = Number(option[1]) - 1
      while (options.length <= n) options.push({ name: undefined, value: undefined })
      const slot = options[n]!
      const part = option[2] as 'name' | 'value'
      if (slot[part] === undefined) {
        slot[part] = i
        return
      }
    }
    const metafield = parseMetafieldColumn(raw, i)
    if (metafield) {
      metafields.push(metafield)
      return
    }
    if (raw.trim() !== '') notStored.push(raw.trim())
  })
  if (index.handle === undefined) return undefined
  return {
    index,
    metafields,
    options,
    names: fields.map((name) => name.trim()),
    notStored,
    width: fields.length,
  }
}

/** The name the file gives a stored column (for error messages): its own spelling. */
export function columnName(header: Header, column: Column): string {
  const i = header.index[column]
  return i === undefined ? COLUMNS[column][0] : header.names[i]!
}

/** Shopify's own option columns: Option1 to Option3. */
export const SHOPIFY_OPTION_COLUMNS = 3

/**
 * The columns the export writes, in order: Shopify's classic ones (Option1 to Option3
 * among them), then its own, the options past the third last (Option4 Name, Option4 Value,
 * ..., for a product with more option names than Shopify's format has columns).
 */
export function exportHeader(optionCount: number, metafieldColumns: string[] = []): string[] {
  const options: string[] = []
  for (let n = 1; n <= optionCount; n++) options.push(`Option${n} Name`, `Option${n} Value`)
  const classic = options.slice(0, 2 * SHOPIFY_OPTION_COLUMNS)
  const more = options.slice(2 * SHOPIFY_OPTION_COLUMNS)
  return [
    'Handle',
    'Title',
    'Body (HTML)',
    'Vendor',
    'Type',
    'Tags',
    'Published',
    ...classic,
    'Variant SKU',
    'Variant Grams',
    'Variant Price',
    'Variant Compare At Price',
    'Variant Barcode',
    'Image Src',
    'Image Position',
    'Image Alt Text',
    'Status',
    'Product Price',
    'Product Compare At Price',
    'Product SKU',
    'Product Barcode',
    'Product Tax Rate',
    'Variant Name',
    ...more,
    ...metafieldColumns,
  ]
}
