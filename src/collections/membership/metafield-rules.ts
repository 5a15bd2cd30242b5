import { sql, type RawBuilder } from 'kysely'
import { definitionsOfOwner } from '../../attributes/values/metafield-definition.repository.js'
import type { MetafieldType } from '../../attributes/values/metafield-types.js'
import { dialectOf } from '../../db/dialect.js'
import type { Executor } from '../../db/schema.js'

/**
 * Smart rules on `metafield.<namespace>.<key>` of a filterable product attribute (decision
 * 0042): `equals` (text without case, numbers exactly) and, for number types, `greater_than`
 * and `less_than`; a list matches when one item does. In memory over the product's stored
 * values, in SQL over the filter index, with the same meaning.
 */

export const METAFIELD_PREFIX = 'metafield.'
const NUMBER_TYPES: readonly string[] = ['number_integer', 'number_decimal', 'list.number_integer']
const TEXT_TYPES: readonly string[] = [
  'single_line_text_field',
  'multi_line_text_field',
  'list.single_line_text_field',
  'url',
  'color',
  'date',
  'date_time',
]

/** The store's filterable product attributes by rule field, when `rules` name any. */
export async function ruleAttributes(
  db: Executor,
  storeId: string,
  rules: readonly unknown[],
): Promise<Map<string, MetafieldType>> {
  const named = rules.some(
    (rule) =>
      typeof (rule as { field?: unknown } | null)?.field === 'string' &&
      (rule as { field: string }).field.startsWith(METAFIELD_PREFIX),
  )
  if (!named) return new Map()
  const rows = await definitionsOfOwner(db, storeId, 'product')
  return new Map(
    rows
      .filter((row) => row.filterable === true || row.filterable === 1)
      .map((row) => [`${METAFIELD_PREFIX}${row.namespace}.${row.key}`, row.type as MetafieldType]),
  )
}

/** The relations a rule on an attribute of `type` takes (none for boolean and json). */
export function metafieldRelations(type: MetafieldType): string[] {
  if (NUMBER_TYPES.includes(type)) return ['equals', 'greater_than', 'less_than']
  return TEXT_TYPES.includes(type) ? ['equals'] : []
}

/** Why `value` cannot be a rule's value on an attribute of `type`, or undefined. */
export function metafieldValueProblem(type: MetafieldType, value: unknown): string | undefined {
  if (NUMBER_TYPES.includes(type)) {
    const integer = type !== 'number_decimal'
    if (typeof value !== 'number' || !Number.isFinite(value)) return 'must be a number'
    return integer && !Number.isSafeInteger(value) ? 'must be an integer' : undefined
  }
  if (typeof value !== 'string' || value.length < 1 || value.length > 5000) {
    return 'must be text of 1 to 5000 characters'
  }
  return undefined
}

const itemsOf = (value: unknown): unknown[] =>
  value === undefined || value === null ? [] : Array.isArray(value) ? value : [value]

/** The rule as a test of the product's stored values (`<namespace>.<key>` to value). */
export function metafieldTest(
  field: string,
  relation: string,
  value: string | number,
): (metafields: Readonly<Record<string, unknown>>) => boolean {
  const key = field.slice(METAFIELD_PREFIX.length)
  if (typeof value === 'string') {
    const text = value.toLowerCase()
    return (metafields) =>
      itemsOf(metafields[key]).some(
        (item) => typeof item === 'string' && item.toLowerCase() === text,
      )
  }
  const holds =
    relation === 'greater_than'
      ? (item: number) => item > value
      : relation === 'less_than'
        ? (item: number) => item < value
        : (item: number) => item === value
  return (metafields) =>
    itemsOf(metafields[key]).some((item) => typeof item === 'number' && holds(item))
}

/** The rule as a condition on the products row `p`: one pass over the attribute's index rows. */
export function metafieldRuleSql(
  db: Executor,
  field: string,
  relation: string,
  value: string | number,
): RawBuilder<boolean> {
  const [namespace, key] = splitField(field)
  const dialect = dialectOf(db)
  const test =
    typeof value === 'string'
      ? sql`${dialect.lower(sql.ref('mv.value'))} = ${JSON.stringify(value.toLowerCase())}`
      : relation === 'equals'
        ? sql`mv.value = ${JSON.stringify(value)}`
        : sql`${dialect.jsonNumber(sql.ref('mv.value'))} ${sql.raw(relation === 'greater_than' ? '>' : '<')} ${value}`
  return sql<boolean>`p.id in (select mv.product_id from metafield_values mv
    join metafield_definitions d on d.store_id = mv.store_id and d.id = mv.definition_id
    where d.store_id = p.store_id and d.owner = 'product' and d.namespace = ${namespace}
      and d.key = ${key} and ${test})`
}

function splitField(field: string): [string, string] {
  const rest = field.slice(METAFIELD_PREFIX.length)
  const dot = rest.indexOf('.')
  return [rest.slice(0, dot), rest.slice(dot + 1)]
}
