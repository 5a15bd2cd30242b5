import { createHash } from 'node:crypto'
import type { UpdateVariantInput } from './catalog.schemas.js'
import { toStoredAmount, toStoredAmountOrNull } from './money.js'
import type { VariantFields } from './variant.columns.js'

// The merge rule of a variant's PATCH (JSON Merge Patch of its fields): a field sent replaces
// the stored one, null clears it, a field not sent keeps it; and what makes two option sets the
// same. sentColumns says, once, what each field sent becomes. The transaction path of
// variant.service.ts merges it here; PostgreSQL's one-statement PATCH sends the same values to
// a statement that applies the rule in SQL (variant-patch.repository.ts).

/** The variant's columns a merge patch may change. */
export type PatchableColumns = Pick<
  VariantFields,
  'name' | 'sku' | 'barcode' | 'price_e4' | 'compare_at_price_e4' | 'position' | 'weight_grams'
> & { options: string; metafields: string }

/** The columns a patch sends but the options and metafields; a column not sent is undefined. */
export function sentColumns(
  patch: UpdateVariantInput,
): Partial<Omit<PatchableColumns, 'options' | 'metafields'>> {
  return {
    name: patch.name,
    sku: patch.sku,
    barcode: patch.barcode,
    price_e4: patch.price === undefined ? undefined : toStoredAmount(patch.price),
    compare_at_price_e4:
      patch.compare_at_price === undefined
        ? undefined
        : toStoredAmountOrNull(patch.compare_at_price),
    position: patch.position,
    weight_grams: patch.weight_grams,
  }
}

/** The columns as `patch` leaves them (its metafields are merged on their own). */
export function mergeVariant(current: VariantFields, patch: UpdateVariantInput): PatchableColumns {
  const next: PatchableColumns = {
    name: current.name,
    sku: current.sku,
    barcode: current.barcode,
    price_e4: current.price_e4,
    compare_at_price_e4: current.compare_at_price_e4,
    position: current.position,
    weight_grams: current.weight_grams,
    options: mergeOptions(current.options, patch.options),
    metafields: jsonText(current.metafields),
  }
  for (const [column, value] of Object.entries(sentColumns(patch))) {
    if (value !== undefined) Object.assign(next, { [column]: value })
  }
  return next
}

/**
 * The options a patch leaves: the ones sent, unless they are the stored ones in another key
 * order (the same set, as the uniqueness rule compares them): then the stored text stays.
 */
function mergeOptions(
  stored: VariantFields['options'],
  sent: Record<string, string> | null | undefined,
): string {
  const storedText = optionsText(stored)
  if (sent === undefined) return storedText
  const options = sent ?? {}
  const same = optionsKey(options) === optionsKey(JSON.parse(storedText) as Record<string, string>)
  return same ? storedText : JSON.stringify(options)
}

/** Whether the merge changed nothing, so that the PATCH writes nothing. */
export function sameFields(current: VariantFields, next: PatchableColumns): boolean {
  return (Object.keys(next) as (keyof PatchableColumns)[]).every((column) =>
    column === 'options'
      ? optionsText(current.options) === next.options
      : column === 'metafields'
        ? jsonText(current.metafields) === next.metafields
        : current[column] === next[column],
  )
}

/** The options as the JSON text they were sent as (PostgreSQL's json arrives parsed). */
function optionsText(options: VariantFields['options']): string {
  return typeof options === 'string' ? options : JSON.stringify(options)
}

function jsonText(value: string | object): string {
  return typeof value === 'string' ? value : JSON.stringify(value)
}

/**
 * What makes two option sets the same: the same names with the same values, in any order.
 * Hashed so the unique index stays small whatever the options' size.
 */
export function optionsKey(options: Record<string, string>): string | null {
  const entries = Object.entries(options).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
  if (entries.length === 0) return null
  return createHash('sha256').update(JSON.stringify(entries)).digest('hex')
}
