import type { Executor } from '../db/schema.js'
import { definitionsOfStore } from './values/metafield-definition.repository.js'
import type { MetafieldOwner, MetafieldType } from './values/metafield-types.js'

/**
 * Shopify's CSV columns of metafields, `Label (product.metafields.<ns>.<key>)` or
 * `(variant.metafields.<ns>.<key>)`, and their cells: list items joined by `; ` as Shopify
 * writes them, other values as text.
 */

export interface MetafieldColumn {
  /** The column's index in the file. */
  index: number
  /** The column's name as the file spells it. */
  name: string
  label: string
  owner: MetafieldOwner
  namespace: string
  key: string
}

const COLUMN = /^(.*?)\s*\((product|variant)\.metafields\.([a-z0-9_-]{2,64})\.([a-z0-9_-]{2,64})\)$/

export function parseMetafieldColumn(name: string, index: number): MetafieldColumn | undefined {
  const match = COLUMN.exec(name.trim())
  if (!match) return undefined
  const [, label, owner, namespace, key] = match as unknown as [
    string,
    string,
    MetafieldOwner,
    string,
    string,
  ]
  return { index, name: name.trim(), label: label || `${namespace}.${key}`, owner, namespace, key }
}

export const LIST_SEPARATOR = '; '

/** The column a definition is exported as. */
export function metafieldColumnName(definition: {
  name: string
  owner: string
  namespace: string
  key: string
}): string {
  return `${definition.name} (${definition.owner}.metafields.${definition.namespace}.${definition.key})`
}

/**
 * A cell read as a value of `type`: a list split at `; `, a number or boolean parsed, json
 * parsed. Text that cannot be read as the type is given as it is, for the definition's
 * checks to refuse with the field named.
 */
export function valueFromCell(type: MetafieldType, text: string): unknown {
  switch (type) {
    case 'list.single_line_text_field':
      return text.split(LIST_SEPARATOR)
    case 'list.number_integer':
      return text.split(LIST_SEPARATOR).map((item) => numberOrText(item.trim()))
    case 'number_integer':
    case 'number_decimal':
      return numberOrText(text.trim())
    case 'boolean': {
      const lower = text.trim().toLowerCase()
      return lower === 'true' ? true : lower === 'false' ? false : text
    }
    case 'json':
      try {
        return JSON.parse(text)
      } catch {
        return text
      }
    case 'single_line_text_field':
    case 'multi_line_text_field':
      return text
    default:
      return text.trim()
  }
}

function numberOrText(text: string): unknown {
  return /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/.test(text) ? Number(text) : text
}

/** A value as its cell: list items joined by `; `, json as JSON text. */
export function cellFromValue(type: string, value: unknown): string {
  if (value === undefined || value === null) return ''
  if (type === 'json') return JSON.stringify(value)
  if (Array.isArray(value)) return value.map(String).join(LIST_SEPARATOR)
  return String(value)
}

/** The store's definitions, by `<owner>.<namespace>.<key>`, with their types. */
export async function definitionTypes(
  db: Executor,
  storeId: string,
): Promise<Map<string, MetafieldType>> {
  const rows = await definitionsOfStore(db, storeId)
  return new Map(
    rows.map((row) => [`${row.owner}.${row.namespace}.${row.key}`, row.type as MetafieldType]),
  )
}

/**
 * The type `--create-definitions` gives a column without a definition: a list when one of
 * its values holds `; `, else a single line of text; multi-line text when a value holds a
 * line break or passes 5,000 characters, which a single line would refuse.
 */
export function typeForColumnValues(values: { list: boolean; multiLine: boolean }): MetafieldType {
  if (values.list) return 'list.single_line_text_field'
  return values.multiLine ? 'multi_line_text_field' : 'single_line_text_field'
}
