import { sql, type RawBuilder } from 'kysely'
import { dialectOf } from '../../db/dialect.js'
import type { Executor } from '../../db/schema.js'
import { validationFailed, type FieldProblem } from '../../errors.js'
import type { MetafieldType } from '../../attributes/values/metafield-types.js'
import { optionIn, priceBetween, statusIn, tagIn } from '../../search/documents/filters.js'
import {
  METAFIELD_PREFIX,
  metafieldRelations,
  metafieldRuleSql,
  metafieldTest,
  metafieldValueProblem,
} from './metafield-rules.js'

/**
 * The rules of smart collections: their validation, and their meaning written twice, with
 * the same semantics: in memory (one product against every smart collection of its store,
 * on each product write) and in SQL (one collection against every product, on a rules
 * change). Text is compared lowercased (toLowerCase; the dialect's `lower`); a field that
 * is null equals, contains, starts and ends with nothing, so its `not_*` relations hold.
 * Where a rule is the very condition of a search filter (status, tag, option.<Name> equals,
 * price bounds), its SQL is that filter's (search/documents/filters.ts), over search_facets.
 */

export const RULE_RELATIONS = [
  'equals',
  'not_equals',
  'contains',
  'not_contains',
  'starts_with',
  'ends_with',
  'greater_than',
  'less_than',
] as const
export type RuleRelation = (typeof RULE_RELATIONS)[number]

export interface Rule {
  field: string
  relation: RuleRelation
  value: string | number
}

export const MAX_RULES = 60
const PRODUCT_STATUSES = ['draft', 'active', 'archived']
const TEXT_RELATIONS: RuleRelation[] = [
  'equals',
  'not_equals',
  'contains',
  'not_contains',
  'starts_with',
  'ends_with',
]
const TEXT_COLUMNS = { name: 'name', vendor: 'vendor', product_type: 'product_type' } as const
type TextField = keyof typeof TEXT_COLUMNS
const OPTION_PREFIX = 'option.'

/** The relations a field takes; undefined for a field that is not a rule's. */
function relationsOf(field: string): RuleRelation[] | undefined {
  if (field in TEXT_COLUMNS) return TEXT_RELATIONS
  if (field === 'tag' || field === 'status') return ['equals', 'not_equals']
  if (field === 'price') return ['equals', 'greater_than', 'less_than']
  if (field.startsWith(OPTION_PREFIX)) {
    const name = field.slice(OPTION_PREFIX.length).trim()
    return name.length >= 1 && name.length <= 64 ? ['equals'] : undefined
  }
  return undefined
}

/** A price as the rules compare it: a JSON number of the Money range, at most 4 decimals. */
function isRulePrice(value: unknown): value is number {
  return (
    typeof value === 'number' &&
    Number.isFinite(value) &&
    value >= 0 &&
    value <= 1_000_000_000 &&
    Math.abs(Math.round(value * 10_000) - value * 10_000) < 1e-6
  )
}

/**
 * The rules of a request checked, as stored: every problem named `rules[i].field`,
 * `rules[i].relation` or `rules[i].value` (400 validation_failed). Text values are trimmed,
 * as the products' fields they are compared with are.
 */
export function checkRules(
  rules: readonly unknown[],
  attributes: ReadonlyMap<string, MetafieldType> = new Map(),
): Rule[] {
  const problems: FieldProblem[] = []
  const checked: Rule[] = []
  rules.forEach((raw, i) => {
    const at = `rules[${i}]`
    if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
      problems.push({ field: at, message: 'must be an object with field, relation and value' })
      return
    }
    const { field, relation, value } = raw as Record<string, unknown>
    if (typeof field !== 'string') {
      problems.push({ field: `${at}.field`, message: 'must be text' })
      return
    }
    if (field.startsWith(METAFIELD_PREFIX)) {
      const type = attributes.get(field)
      const relations = type === undefined ? [] : metafieldRelations(type)
      if (type === undefined || relations.length === 0) {
        problems.push({
          field: `${at}.field`,
          message: 'must name a filterable product attribute of a text or number type',
        })
      } else if (typeof relation !== 'string' || !relations.includes(relation)) {
        problems.push({
          field: `${at}.relation`,
          message: `must be one of ${relations.join(', ')} for ${field}`,
        })
      } else {
        const problem = metafieldValueProblem(type, value)
        if (problem !== undefined) problems.push({ field: `${at}.value`, message: problem })
        else checked.push({ field, relation: relation as RuleRelation, value: value as string })
      }
      return
    }
    const relations = relationsOf(field)
    if (relations === undefined) {
      problems.push({
        field: `${at}.field`,
        message:
          'must be one of name, vendor, product_type, tag, price, status, option.<Name>, ' +
          'metafield.<namespace>.<key>',
      })
      return
    }
    if (typeof relation !== 'string' || !relations.includes(relation as RuleRelation)) {
      problems.push({
        field: `${at}.relation`,
        message: `must be one of ${relations.join(', ')} for ${field}`,
      })
      return
    }
    const valueProblem = checkValue(field, value)
    if (valueProblem !== undefined) {
      problems.push({ field: `${at}.value`, message: valueProblem })
      return
    }
    const kept = typeof value === 'string' ? value.trim() : (value as number)
    const name = field.startsWith(OPTION_PREFIX)
      ? `${OPTION_PREFIX}${field.slice(OPTION_PREFIX.length).trim()}`
      : field
    checked.push({ field: name, relation: relation as RuleRelation, value: kept })
  })
  if (problems.length > 0) throw validationFailed(problems)
  return checked
}

function checkValue(field: string, value: unknown): string | undefined {
  if (field === 'price') {
    return isRulePrice(value)
      ? undefined
      : 'must be a number from 0 to 1000000000 with at most 4 decimal places'
  }
  if (typeof value !== 'string') return 'must be text'
  const text = value.trim()
  if (field === 'status') {
    return PRODUCT_STATUSES.includes(text) ? undefined : 'must be one of draft, active, archived'
  }
  if (text.length < 1 || text.length > 255) return 'must be 1 to 255 characters after trimming'
  return undefined
}

/** What the rules read of a product: its fields, tag keys and variants' options, lowercased. */
export interface ProductFacts {
  name: string
  vendor: string | null
  productType: string | null
  status: string
  priceE4: number
  /** The product's tags, lowercased. */
  tags: ReadonlySet<string>
  /** `name\u0000value` of every option of every variant, lowercased. */
  options: ReadonlySet<string>
  /** The product's stored custom attribute values (read when a rule reads them). */
  metafields: Readonly<Record<string, unknown>>
}

const lower = (text: string) => text.toLowerCase()
const priceE4 = (value: number) => Math.round(value * 10_000)

/** Whether any rule reads the product's custom attributes. */
export function readsMetafields(rules: readonly Rule[]): boolean {
  return rules.some((rule) => rule.field.startsWith(METAFIELD_PREFIX))
}

/** Whether the rules any field reads the variants' options (so they must be loaded). */
export function readsOptions(rules: readonly Rule[]): boolean {
  return rules.some((rule) => rule.field.startsWith(OPTION_PREFIX))
}

/**
 * Whether a product's facts match a collection's rules (all of them, or any when
 * disjunctive), as one test of a product's facts, their values lowercased once: a product write
 * evaluates every smart collection of its store, so each test costs a few comparisons.
 */
export function compileRules(
  rules: readonly Rule[],
  disjunctive: boolean,
): (facts: ProductFacts) => boolean {
  const tests = rules.map(compileRule)
  return disjunctive
    ? (facts) => tests.some((test) => test(facts))
    : (facts) => tests.every((test) => test(facts))
}

function compileRule(rule: Rule): (facts: ProductFacts) => boolean {
  const { field, relation, value } = rule
  if (field.startsWith(METAFIELD_PREFIX)) {
    const test = metafieldTest(field, relation, value)
    return (facts) => test(facts.metafields)
  }
  if (field === 'price') {
    const bound = priceE4(value as number)
    if (relation === 'equals') return (facts) => facts.priceE4 === bound
    return relation === 'greater_than'
      ? (facts) => facts.priceE4 > bound
      : (facts) => facts.priceE4 < bound
  }
  const text = lower(String(value))
  const positive = relation === 'equals'
  if (field === 'status') return (facts) => (facts.status === text) === positive
  if (field === 'tag') return (facts) => facts.tags.has(text) === positive
  if (field.startsWith(OPTION_PREFIX)) {
    const key = `${lower(field.slice(OPTION_PREFIX.length))}\u0000${text}`
    return (facts) => facts.options.has(key)
  }
  const negated = relation.startsWith('not_')
  return (facts) => {
    const stored = textOf(field as TextField, facts)
    const found = stored !== null && textHolds(relation, lower(stored), text)
    return negated ? !found : found
  }
}

function textOf(field: TextField, facts: ProductFacts): string | null {
  return field === 'name' ? facts.name : field === 'vendor' ? facts.vendor : facts.productType
}

function textHolds(relation: RuleRelation, stored: string, text: string): boolean {
  switch (relation) {
    case 'equals':
    case 'not_equals':
      return stored === text
    case 'contains':
    case 'not_contains':
      return stored.includes(text)
    case 'starts_with':
      return stored.startsWith(text)
    default:
      return stored.endsWith(text)
  }
}

/**
 * The rules as one SQL condition over the products row `p` (never null): a product of the
 * store belongs when it holds.
 */
export function rulesSql(
  db: Executor,
  rules: readonly Rule[],
  disjunctive: boolean,
): RawBuilder<boolean> {
  const parts = rules.map((rule) => sql`(${ruleSql(db, rule)})`)
  return sql<boolean>`(${sql.join(parts, sql` ${sql.raw(disjunctive ? 'or' : 'and')} `)})`
}

function ruleSql(db: Executor, rule: Rule): RawBuilder<boolean> {
  const { field, relation, value } = rule
  if (field.startsWith(METAFIELD_PREFIX)) return metafieldRuleSql(db, field, relation, value)
  if (field === 'price') {
    // Stored prices are whole ten-thousandths: a strict bound is the next inclusive one.
    const bound = priceE4(value as number)
    if (relation === 'equals') return priceBetween(bound, bound)
    return relation === 'greater_than'
      ? priceBetween(bound + 1, undefined)
      : priceBetween(undefined, bound - 1)
  }
  const text = lower(String(value))
  const negate = (condition: RawBuilder<boolean>) =>
    relation.startsWith('not_') ? sql<boolean>`not (${condition})` : condition
  if (field === 'status') return negate(statusIn(db, [text]))
  if (field === 'tag') return negate(tagIn(db, [text]))
  if (field.startsWith(OPTION_PREFIX)) {
    return optionIn(db, lower(field.slice(OPTION_PREFIX.length)), [text])
  }
  // Without case, unlike search's exact vendor and product_type filters: not one condition.
  const dialect = dialectOf(db)
  const column = dialect.lower(sql.ref(`p.${TEXT_COLUMNS[field as TextField]}`))
  const escaped = text.replace(/[\\%_]/g, (c) => `\\${c}`)
  const pattern =
    relation === 'contains' || relation === 'not_contains'
      ? `%${escaped}%`
      : relation === 'starts_with'
        ? `${escaped}%`
        : `%${escaped}`
  const found =
    relation === 'equals' || relation === 'not_equals'
      ? sql<boolean>`coalesce(${column} = ${text}, false)`
      : sql<boolean>`coalesce(${column} like ${pattern} escape '\\', false)`
  return negate(found)
}
