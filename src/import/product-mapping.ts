import type { CreateProductInput, CreateVariantInput } from '../catalog/catalog.schemas.js'
import { MAX_SET_SLUG_LENGTH, SLUG_PATTERN } from '../catalog/catalog.schemas.js'
import { slugify } from '../slugs/slug.js'
import type { CsvRecord } from './csv-records.js'
import { metafieldsOfRecord } from './metafield-import.js'
import { columnName, type Column, type Header } from './shopify-columns.js'

/** The codes an import reports a row with: the contract's, and invalid_csv. */
export type ImportErrorCode =
  'validation_failed' | 'duplicate_sku' | 'duplicate_options' | 'duplicate_slug' | 'invalid_csv'

export interface ImportError {
  /** The record's number as a spreadsheet shows it: the header is row 1. */
  row: number
  handle: string
  /** The column, as the file names it; null when the error is about the row or the file. */
  field: string | null
  error: ImportErrorCode
  message: string
}

/** The fields of a product the file sets: a column the file lacks leaves its field out. */
export type ProductFields = Partial<Omit<CreateProductInput, 'status'>> & {
  status?: 'draft' | 'active' | 'archived'
}

export interface MappedVariant {
  row: number
  /** Every field a create takes; `price` left out when the file gives none. */
  input: CreateVariantInput
  /** Whether its name is made of its option values (no Variant Name given), for its errors. */
  nameFromOptions: boolean
  /**
   * The fields the file sets (a column it lacks leaves the stored value on an update): the
   * options only when the file has option columns, the name when it has those or a Variant
   * Name.
   */
  sets: ReadonlySet<keyof CreateVariantInput>
}

/** One product of the file: all the consecutive rows of one handle, read. */
export interface MappedProduct {
  handle: string
  /**
   * The handle when it is a valid slug (kept as it is), else the slug the part 1 rules make
   * of it: then only the base of the slug the product gets (suffixed when another product
   * has it), and the handle is recorded with its product (decision 0059).
   */
  slug: string
  /** Whether the handle is not a valid slug and was made into `slug`. */
  slugMade: boolean
  /**
   * Whether the product may be matched by `slug` (a product of the store with that slug and
   * no other handle recorded). False when an earlier product of the file has that slug: a
   * handle made into it is then another product (see FileSlugs).
   */
  matchBySlug: boolean
  /**
   * The slug its product has once planned or written: the stored product's, the slug claimed
   * for it (writePlan), else `slug`. What FileSlugs keeps.
   */
  givenSlug?: string
  rows: number[]
  fields: ProductFields
  /** The row of each of `fields.images`, in their order, for their errors. */
  imageRows: number[]
  variants: MappedVariant[]
  /** Problems found reading the rows; a product with any is skipped whole. */
  errors: ImportError[]
  /** The column each field came from, to name it in errors found later. */
  columns: Record<string, string>
  /** The column each field of a variant comes from, as the file names it, for its errors. */
  variantColumns: Record<string, string>
  /** Per option number, its name (from the first row) and its columns, as the file names them. */
  optionColumns: { name: string; nameColumn: string; valueColumn: string }[]
}

const SLUG = new RegExp(SLUG_PATTERN)
const DECIMAL = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/

/** A handle kept as the slug when it is one by the PATCH rule, else made into one. */
export function handleToSlug(handle: string): string {
  return handle.length <= MAX_SET_SLUG_LENGTH && SLUG.test(handle) ? handle : slugify(handle)
}

/**
 * Maps the rows of one handle to a product and its variants, by the contract's table. The
 * values are not checked against the field rules here (the API's schemas do that, in
 * import-plan.ts); only what cannot be turned into a value at all is reported: a number
 * that is not one, a value of an option without a name.
 */
export function mapProduct(header: Header, handle: string, records: CsvRecord[]): MappedProduct {
  const first = records[0]!
  const errors: ImportError[] = []
  const columns: Record<string, string> = {}
  const variantMetafieldColumns: Record<string, string> = {}
  const cell = (record: CsvRecord, column: Column): string | undefined => {
    const i = header.index[column]
    return i === undefined ? undefined : (record.fields[i] ?? '')
  }
  const fail = (row: number, field: string | null, message: string) =>
    errors.push({ row, handle, field, error: 'validation_failed', message })
  const number = (record: CsvRecord, column: Column): number | null | undefined => {
    const text = cell(record, column)?.trim()
    if (text === undefined || text === '') return text === undefined ? undefined : null
    if (!DECIMAL.test(text)) {
      fail(record.row, columnName(header, column), `must be a number, not "${clip(text)}"`)
      return undefined
    }
    return Number(text)
  }

  for (const record of records) {
    if (record.fields.length !== header.width) {
      fail(
        record.row,
        null,
        `has ${record.fields.length} columns where the header has ${header.width}`,
      )
    }
    if (record.invalidUtf8) {
      const i = record.fields.findIndex((field) => field.includes('\uFFFD'))
      fail(record.row, i >= 0 ? (header.names[i] ?? null) : null, 'holds bytes that are not UTF-8')
    }
  }

  const fields: ProductFields = {}
  const text = (column: Column, field: keyof ProductFields) => {
    const value = cell(first, column)
    if (value === undefined) return
    columns[field] = columnName(header, column)
    // A description is kept as written; the other fields are trimmed by the field rules.
    const empty = field === 'description' ? value === '' : value.trim() === ''
    ;(fields as Record<string, unknown>)[field] = empty ? null : value
  }
  columns.handle = columnName(header, 'handle')
  // A name missing (no Title column, or an empty cell) is reported on the Title column too.
  columns.name = columnName(header, 'title')
  const title = cell(first, 'title')
  if (title !== undefined && title.trim() !== '') fields.name = title
  text('description', 'description')
  text('vendor', 'vendor')
  text('type', 'product_type')
  text('productSku', 'sku')
  text('productBarcode', 'barcode')
  const tags = cell(first, 'tags')
  if (tags !== undefined) {
    columns.tags = columnName(header, 'tags')
    fields.tags = tags
      .split(',')
      .map((tag) => tag.trim())
      .filter((tag) => tag !== '')
  }
  const status = readStatus(cell(first, 'status'), cell(first, 'published'))
  if (status === 'invalid')
    fail(first.row, columnName(header, 'status'), statusMessage(first, header))
  else if (status !== undefined) {
    fields.status = status
    columns.status = columnName(header, cell(first, 'status')?.trim() ? 'status' : 'published')
  }
  const productPrice = number(first, 'productPrice')
  if (productPrice !== undefined && productPrice !== null) {
    fields.price = productPrice
    columns.price = columnName(header, 'productPrice')
  }
  const productCompareAt = number(first, 'productCompareAtPrice')
  if (productCompareAt !== undefined) {
    fields.compare_at_price = productCompareAt
    columns.compare_at_price = columnName(header, 'productCompareAtPrice')
  }
  const productMetafields = metafieldsOfRecord(header, first, 'product')
  if (productMetafields) {
    fields.metafields = productMetafields.values
    Object.assign(columns, productMetafields.columns)
  }
  const taxRate = number(first, 'productTaxRate')
  if (taxRate !== undefined) {
    fields.tax_rate = taxRate
    columns.tax_rate = columnName(header, 'productTaxRate')
  }

  // Option names come from the product's first row. Names and values are kept as written
  // (the API keeps them so); an empty cell is no option.
  const optionNames = header.options.map((slot) =>
    slot.name === undefined ? '' : (first.fields[slot.name] ?? ''),
  )
  const optionColumns = header.options.map((slot, n) => ({
    name: optionNames[n]!,
    nameColumn: slot.name === undefined ? `Option${n + 1} Name` : header.names[slot.name]!,
    valueColumn: slot.value === undefined ? `Option${n + 1} Value` : header.names[slot.value]!,
  }))
  const fileHasOptions = header.options.some((slot) => slot.value !== undefined)
  const variants: MappedVariant[] = []
  const images: {
    url: string
    alt: string | null
    position: number
    order: number
    row: number
  }[] = []
  for (const record of records) {
    const src = cell(record, 'imageSrc')?.trim()
    if (src) {
      const position = number(record, 'imagePosition')
      const alt = cell(record, 'imageAlt')
      images.push({
        url: src,
        alt: alt === undefined || alt === '' ? null : alt,
        position: position ?? Infinity,
        order: images.length,
        row: record.row,
      })
    }
    const variant = mapVariant(record)
    if (variant) variants.push(variant)
  }
  if (header.index.imageSrc !== undefined) {
    columns.images = columnName(header, 'imageSrc')
    if (header.index.imageAlt !== undefined) columns['images.alt'] = columnName(header, 'imageAlt')
    images.sort((a, b) => a.position - b.position || a.order - b.order)
    fields.images = images.map(({ url, alt }) => ({ url, alt }))
  }
  // A product's price is its first variant's, unless the export's own column gives it: which
  // variant is first (the lowest position) is known once the stored ones are read, so the
  // import plan sets it (firstVariantPrice, in import-plan.ts).

  function mapVariant(record: CsvRecord): MappedVariant | undefined {
    const options: Record<string, string> = {}
    let anyValue = false
    header.options.forEach((slot, n) => {
      const value = slot.value === undefined ? '' : (record.fields[slot.value] ?? '')
      if (value === '') return
      anyValue = true
      const { name, nameColumn, valueColumn } = optionColumns[n]!
      if (name === '') {
        fail(record.row, nameColumn, `is required when ${valueColumn} is given`)
        return
      }
      if (Object.hasOwn(options, name)) {
        fail(record.row, nameColumn, `names the option "${clip(name)}" twice`)
        return
      }
      options[name] = value
    })
    const sku = cell(record, 'sku')?.trim()
    const barcode = cell(record, 'barcode')?.trim()
    const name = cell(record, 'variantName')?.trim()
    const price = number(record, 'price')
    const compareAt = number(record, 'compareAtPrice')
    const grams = number(record, 'grams')
    const metafields = metafieldsOfRecord(header, record, 'variant')
    if (metafields) Object.assign(variantMetafieldColumns, metafields.columns)
    const carriesVariant =
      !!metafields ||
      anyValue ||
      !!sku ||
      !!barcode ||
      !!name ||
      (price !== undefined && price !== null) ||
      (compareAt !== undefined && compareAt !== null) ||
      (grams !== undefined && grams !== null)
    if (!carriesVariant) return undefined
    const entries = Object.entries(options)
    // Shopify's variant of a product without options: the single option Title = Default Title.
    if (
      entries.length === 1 &&
      entries[0]![0].toLowerCase() === 'title' &&
      entries[0]![1].toLowerCase() === 'default title'
    ) {
      delete options[entries[0]![0]]
    }
    const values = Object.values(options)
    // A create takes every field: without option columns a variant has no options and is
    // `Default Title`. An update sets the options only when the file has option columns, and
    // the name when it gives one (Variant Name) or the options it is made of.
    const input: CreateVariantInput = {
      name: name || (values.length === 0 ? 'Default Title' : values.join(' / ')),
      options,
    }
    const sets = new Set<keyof CreateVariantInput>()
    if (fileHasOptions) sets.add('options')
    if (name || fileHasOptions) sets.add('name')
    const set = <K extends keyof CreateVariantInput>(
      field: K,
      value: CreateVariantInput[K] | undefined,
    ) => {
      if (value === undefined) return
      input[field] = value
      sets.add(field)
    }
    set('sku', sku === undefined ? undefined : sku || null)
    set('barcode', barcode === undefined ? undefined : barcode || null)
    if (price !== null) set('price', price)
    set('compare_at_price', compareAt)
    set('weight_grams', grams == null ? grams : Math.round(grams))
    set('metafields', metafields?.values)
    return { row: record.row, input, nameFromOptions: !name && values.length > 0, sets }
  }

  const slug = handleToSlug(handle)
  return {
    handle,
    slug,
    slugMade: slug !== handle,
    matchBySlug: true,
    rows: records.map((record) => record.row),
    fields,
    imageRows: images.map((image) => image.row),
    variants,
    errors,
    columns,
    variantColumns: {
      name: columnName(header, 'variantName'),
      sku: columnName(header, 'sku'),
      barcode: columnName(header, 'barcode'),
      price: columnName(header, 'price'),
      compare_at_price: columnName(header, 'compareAtPrice'),
      weight_grams: columnName(header, 'grams'),
      options: optionColumns[0]?.valueColumn ?? 'Option1 Value',
      ...variantMetafieldColumns,
    },
    optionColumns,
  }
}

/**
 * Status: `active`, `draft` or `archived` in any case, `unlisted` read as active; without a
 * Status, Published `true` (any case) is active and anything else draft. Undefined when the
 * file has neither column.
 */
function readStatus(
  status: string | undefined,
  published: string | undefined,
): ProductFields['status'] | 'invalid' | undefined {
  const value = status?.trim().toLowerCase()
  if (value) {
    if (value === 'unlisted') return 'active'
    if (value === 'active' || value === 'draft' || value === 'archived') return value
    return 'invalid'
  }
  if (published === undefined) return undefined
  return published.trim().toLowerCase() === 'true' ? 'active' : 'draft'
}

function statusMessage(first: CsvRecord, header: Header): string {
  const value = first.fields[header.index.status!] ?? ''
  return `must be active, draft, archived or unlisted, not "${clip(value.trim())}"`
}

/** A value quoted in a message, cut to a length a person reads. */
export function clip(value: string): string {
  return value.length > 40 ? `${value.slice(0, 40)}…` : value
}

/**
 * The slugs the file's products imported so far have, each with its first row, and the
 * handles made into a slug: a later product of the file with its handle again (after other
 * rows), or with a valid handle an earlier product's slug, is duplicate_slug, rather than
 * overwriting the earlier one (and being overwritten back by a second run). A handle made
 * into an earlier product's slug is another product (matchBySlug false): it gets a suffixed
 * slug (decision 0059). It grows with the file, by one slug per product (about 14 MB
 * for 250,000 products) and one entry per handle made into a slug.
 */
export class FileSlugs {
  private readonly slugs = new Map<string, number>()
  private readonly madeHandles = new Map<string, number>()

  /**
   * Whether an earlier product of the file, still to be written (`pending`), must be written
   * first for check() to know its slug: one of the same slug, or a handle made into a slug
   * that may get this one as its suffixed slug (`cafe-2` after `Café`).
   */
  waitsFor(product: MappedProduct, pending: readonly MappedProduct[]): boolean {
    return pending.some(
      (earlier) =>
        earlier.slug === product.slug ||
        (earlier.slugMade && product.slug.startsWith(`${earlier.slug}-`)),
    )
  }

  /** The error of a product whose handle or slug an earlier product of the file has. */
  check(product: MappedProduct): ImportError | undefined {
    const duplicate = (message: string): ImportError => ({
      row: product.rows[0]!,
      handle: product.handle,
      field: product.columns.handle!,
      error: 'duplicate_slug',
      message,
    })
    if (product.slugMade) {
      const earlier = this.madeHandles.get(product.handle)
      if (earlier !== undefined) return duplicate(`the product of row ${earlier} has this handle`)
      if (this.slugs.has(product.slug)) product.matchBySlug = false
      return undefined
    }
    const earlier = this.slugs.get(product.slug)
    return earlier === undefined
      ? undefined
      : duplicate(`the product of row ${earlier} has this handle's slug`)
  }

  /** Keeps an imported product's slug (the one it has: givenSlug) and handle. */
  keep(product: MappedProduct): void {
    const row = product.rows[0]!
    const slug = product.givenSlug ?? product.slug
    if (!this.slugs.has(slug)) this.slugs.set(slug, row)
    if (product.slugMade) this.madeHandles.set(product.handle, row)
  }
}
