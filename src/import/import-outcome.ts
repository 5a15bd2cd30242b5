import type { ImportError } from './product-mapping.js'

/**
 * A row imported otherwise than the file says, and why: with --duplicate-skus=clear, a variant
 * imported without its sku, which another product (or an earlier row) keeps (`sku`); a handle
 * that is not a valid slug, made into one (`slug`, the product's first row).
 */
export interface ImportWarning {
  /** The record's number as a spreadsheet shows it: the header is row 1. */
  row: number
  handle: string
  field: 'sku' | 'slug'
  message: string
}

/** What importing (or, in a dry run, checking) one product did: its counts, or its rows' errors. */
export interface Outcome {
  created: boolean
  updated: boolean
  variantsCreated: number
  variantsUpdated: number
  errors: ImportError[]
  /** Its rows' warnings (empty when it failed: nothing of it was imported). */
  warnings: ImportWarning[]
}

export function unchanged(): Outcome {
  return {
    created: false,
    updated: false,
    variantsCreated: 0,
    variantsUpdated: 0,
    errors: [],
    warnings: [],
  }
}

/** A product not written: its rows' errors. */
export function failed(errors: ImportError[]): Outcome {
  return { ...unchanged(), errors }
}
