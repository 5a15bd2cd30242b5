import { createHash } from 'node:crypto'
import type { UpdateVariantInput } from './catalog.schemas.js'
import { toStoredAmount, toStoredAmountOrNull } from './money.js'
import type { VariantFields } from './variant.columns.js'

// The merge rule of a variant's PATCH (JSON Merge Patch of its fields), and what makes two
// option sets the same. The transaction path of variant.service.ts runs it; PostgreSQL's
// one-statement PATCH writes the same rule in SQL (variant-patch.repository.ts).

/** The variant's columns a merge patch may change. */
export type PatchableColumns = Pick<
  VariantFields,
  'name' | 'sku' | 'barcode' | 'price_e4' | 'compare_at_price_e4' | 'position' | 'weight_grams'
> & { options: string; metafields: string }

/** The columns as `patch` leaves them: a field sent replaces the stored one, null clears it. */
export function mergeVariant(current: VariantFields, patch: UpdateVariantInput): PatchableColumns {
  const pick = <T>(sent: T | null | undefined, stored: T): T | null =>
    sent === undefined ? stored : sent
  return {
    name: patch.name ?? current.name,
    sku: pick(patch.sku, current.sku),
    barcode: pick(patch.barcode, current.barcode),
    price_e4: patch.price === undefined ? current.price_e4 : toStoredAmount(patch.price),
    compare_at_price_e4:
      patch.compare_at_price === undefined
        ? current.compare_at_price_e4
        : toStoredAmountOrNull(patch.compare_at_price),
    options: mergeOptions(current.options, patch.options),
    position: patch.position ?? current.position,
    weight_grams: pick(patch.weight_grams, current.weight_grams),
    metafields: jsonText(current.metafields),
  }
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
