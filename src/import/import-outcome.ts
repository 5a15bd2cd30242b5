import type { ImportError } from './product-mapping.js'

/** What importing (or, in a dry run, checking) one product did: its counts, or its rows' errors. */
export interface Outcome {
  created: boolean
  updated: boolean
  variantsCreated: number
  variantsUpdated: number
  errors: ImportError[]
}

export function unchanged(): Outcome {
  return { created: false, updated: false, variantsCreated: 0, variantsUpdated: 0, errors: [] }
}

/** A product not written: its rows' errors. */
export function failed(errors: ImportError[]): Outcome {
  return { created: false, updated: false, variantsCreated: 0, variantsUpdated: 0, errors }
}
