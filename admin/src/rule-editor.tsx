import { useEffect, useState } from 'preact/hooks'
import { ApiError, call, type CollectionRule } from './api.js'
import type { MetafieldDefinition } from './metafields.js'
import { problemsOf, type Session } from './ui.js'

/** A smart collection's condition as the editor holds it: every part as typed. */
export interface RuleDraft {
  /** name, vendor, product_type, tag, price, status, option or metafield */
  field: string
  /** The option's name, or the attribute's `namespace.key`. */
  name: string
  relation: string
  value: string
}

/** The contract's most rules per collection. */
const MAX_RULES = 60
const TEXT = ['equals', 'not_equals', 'contains', 'not_contains', 'starts_with', 'ends_with']
const NUMBER = ['equals', 'greater_than', 'less_than']
const NUMBER_TYPES = ['number_integer', 'number_decimal', 'list.number_integer']
const TEXT_TYPES = [
  'single_line_text_field',
  'multi_line_text_field',
  'list.single_line_text_field',
  'url',
  'color',
  'date',
  'date_time',
]

const FIELDS: { id: string; label: string; relations: string[] }[] = [
  { id: 'name', label: 'Product name', relations: TEXT },
  { id: 'vendor', label: 'Vendor', relations: TEXT },
  { id: 'product_type', label: 'Product type', relations: TEXT },
  { id: 'tag', label: 'Tag', relations: ['equals', 'not_equals'] },
  { id: 'price', label: 'Price', relations: NUMBER },
  { id: 'status', label: 'Status', relations: ['equals', 'not_equals'] },
  { id: 'option', label: 'Variant option', relations: ['equals'] },
  { id: 'metafield', label: 'Custom attribute', relations: ['equals'] },
]

const RELATION_LABEL: Record<string, string> = {
  equals: 'is equal to',
  not_equals: 'is not equal to',
  contains: 'contains',
  not_contains: 'does not contain',
  starts_with: 'starts with',
  ends_with: 'ends with',
  greater_than: 'is greater than',
  less_than: 'is less than',
}

/** The product attributes a rule may read: filterable, of a text or number type. */
export function ruleAttributes(definitions: MetafieldDefinition[]): MetafieldDefinition[] {
  return definitions.filter(
    (d) =>
      d.owner === 'product' &&
      d.filterable &&
      (NUMBER_TYPES.includes(d.type) || TEXT_TYPES.includes(d.type)),
  )
}

const keyOf = (d: MetafieldDefinition) => `${d.namespace}.${d.key}`

function relationsOf(draft: RuleDraft, attributes: MetafieldDefinition[]): string[] {
  if (draft.field === 'metafield') {
    const type = attributes.find((d) => keyOf(d) === draft.name)?.type ?? ''
    return NUMBER_TYPES.includes(type) ? NUMBER : ['equals']
  }
  return FIELDS.find((field) => field.id === draft.field)?.relations ?? ['equals']
}

export function newRule(): RuleDraft {
  return { field: 'name', name: '', relation: 'contains', value: '' }
}

/** A stored rule as the editor shows it. */
export function draftOf(rule: CollectionRule): RuleDraft {
  const [head, ...rest] = rule.field.split('.')
  const compound = head === 'option' || head === 'metafield'
  return {
    field: compound ? head! : rule.field,
    name: compound ? rest.join('.') : '',
    relation: rule.relation,
    value: String(rule.value),
  }
}

/** A number as typed, when it reads as one; else the text, for the API to say what is wrong. */
const numberOr = (text: string): string | number =>
  text.trim() !== '' && Number.isFinite(Number(text)) ? Number(text) : text

/** The drafts as the API takes them. */
export function rulesOf(drafts: RuleDraft[], attributes: MetafieldDefinition[]): CollectionRule[] {
  return drafts.map((draft) => {
    const field = draft.field === 'option' || draft.field === 'metafield'
    const numeric =
      draft.field === 'price' ||
      (draft.field === 'metafield' &&
        NUMBER_TYPES.includes(attributes.find((d) => keyOf(d) === draft.name)?.type ?? ''))
    return {
      field: field ? `${draft.field}.${draft.name}` : draft.field,
      relation: draft.relation,
      value: numeric ? numberOr(draft.value) : draft.value,
    }
  })
}

const complete = (draft: RuleDraft) =>
  draft.value.trim() !== '' &&
  (draft.field !== 'option' && draft.field !== 'metafield' ? true : draft.name.trim() !== '')

/** Exact problems of one request field (`rules[2].value`), one sentence each. */
const exact = (error: unknown, field: string) =>
  problemsOf(error, field)
    .filter((problem) => problem.field === field)
    .map((problem) => problem.message)

/** Whether an error of the API names the rules, or one of them (`rules[2].value`). */
const aboutRules = (error: unknown) =>
  error instanceof ApiError &&
  error.details.some((problem) => problem.field === 'rules' || problem.field.startsWith('rules['))

/**
 * A smart collection's conditions: one row a rule, "all" or "any", and how many products they
 * match now (POST /collections/preview), asked again a moment after each change, before saving.
 */
export function RuleEditor(props: {
  rules: RuleDraft[]
  disjunctive: boolean
  attributes: MetafieldDefinition[]
  /** The error of the last save: its rule problems are shown beside their rule. */
  error: unknown
  session: Session
  onChange(rules: RuleDraft[], disjunctive: boolean): void
}) {
  const { rules, disjunctive, attributes, onChange } = props
  const [count, setCount] = useState<number | null>(null)
  const [previewError, setPreviewError] = useState<unknown>(null)
  const ready = rules.length > 0 && rules.every(complete)
  const body = JSON.stringify({ rules: rulesOf(rules, attributes), disjunctive })

  useEffect(() => {
    setCount(null)
    setPreviewError(null)
    if (!ready) return
    let current = true
    const timer = setTimeout(() => {
      call<{ data: { productsCount: number } }>('POST', '/collections/preview', {
        body: JSON.parse(body),
      }).then(
        (answer) => current && setCount(answer.data.productsCount),
        (caught: unknown) => {
          if (!current) return
          props.session.onError(caught)
          setPreviewError(caught)
        },
      )
    }, 300)
    return () => {
      current = false
      clearTimeout(timer)
    }
  }, [body, ready])

  const error = aboutRules(props.error) ? props.error : previewError
  const change = (index: number, part: Partial<RuleDraft>) => {
    const next = rules.map((rule, i) => {
      if (i !== index) return rule
      const changed = { ...rule, ...part }
      const relations = relationsOf(changed, attributes)
      if (!relations.includes(changed.relation)) changed.relation = relations[0]!
      if (part.field === 'status') changed.value = 'active'
      else if (part.field !== undefined && rule.field === 'status') changed.value = ''
      return changed
    })
    onChange(next, disjunctive)
  }

  return (
    <fieldset class="card rule-editor">
      <legend>Conditions</legend>
      <fieldset class="rule-mode">
        <legend>Products must match</legend>
        {[false, true].map((any) => (
          <label class="check" key={String(any)}>
            <input
              type="radio"
              name="disjunctive"
              checked={disjunctive === any}
              onChange={() => onChange(rules, any)}
            />
            <span>{any ? 'any condition' : 'all conditions'}</span>
          </label>
        ))}
      </fieldset>
      <ol class="rules">
        {rules.map((rule, i) => (
          <RuleRow
            key={i}
            index={i}
            rule={rule}
            attributes={attributes}
            error={error}
            relations={relationsOf(rule, attributes)}
            onChange={(part) => change(i, part)}
            onRemove={() =>
              onChange(
                rules.filter((_, j) => j !== i),
                disjunctive,
              )
            }
          />
        ))}
      </ol>
      {exact(error, 'rules').length > 0 && (
        <p class="field-error" id="rules-error">
          {exact(error, 'rules').join(' ')}
        </p>
      )}
      <button
        type="button"
        disabled={rules.length >= MAX_RULES}
        onClick={() => onChange([...rules, newRule()], disjunctive)}
      >
        Add condition
      </button>
      <p class="match-count" role="status">
        {!ready
          ? 'Complete each condition to see how many products match.'
          : count === null
            ? previewError
              ? 'Fix the conditions to see how many products match.'
              : 'Counting matching products…'
            : `${count} ${count === 1 ? 'product matches' : 'products match'} these conditions now.`}
      </p>
    </fieldset>
  )
}

function RuleRow(props: {
  index: number
  rule: RuleDraft
  attributes: MetafieldDefinition[]
  relations: string[]
  error: unknown
  onChange(part: Partial<RuleDraft>): void
  onRemove(): void
}) {
  const { index, rule, attributes, error, onChange } = props
  const id = `rule-${index}`
  const label = `Condition ${index + 1}`
  const at = `rules[${index}]`
  const messages = [
    ...exact(error, at),
    ...exact(error, `${at}.field`),
    ...exact(error, `${at}.relation`),
    ...exact(error, `${at}.value`),
  ]
  const invalid = (part: string) =>
    exact(error, `${at}.${part}`).length > 0 ? ('true' as const) : undefined
  const described = messages.length > 0 ? `${id}-error` : undefined
  const common = (part: string) => ({
    id: `${id}-${part}`,
    'aria-invalid': invalid(part === 'name' ? 'field' : part),
    'aria-describedby': described,
  })
  return (
    <li class="rule">
      <label for={`${id}-field`} class="visually-hidden">
        {label}: field
      </label>
      <select
        {...common('field')}
        value={rule.field}
        onChange={(e) => onChange({ field: e.currentTarget.value, name: '' })}
      >
        {FIELDS.filter(
          (f) => f.id !== 'metafield' || attributes.length > 0 || rule.field === 'metafield',
        ).map((f) => (
          <option value={f.id} key={f.id}>
            {f.label}
          </option>
        ))}
      </select>
      {rule.field === 'option' && (
        <>
          <label for={`${id}-name`} class="visually-hidden">
            {label}: option name
          </label>
          <input
            type="text"
            placeholder="Option name, e.g. Color"
            {...common('name')}
            value={rule.name}
            onInput={(e) => onChange({ name: e.currentTarget.value })}
          />
        </>
      )}
      {rule.field === 'metafield' && (
        <>
          <label for={`${id}-name`} class="visually-hidden">
            {label}: attribute
          </label>
          <select
            {...common('name')}
            value={rule.name}
            onChange={(e) => onChange({ name: e.currentTarget.value })}
          >
            <option value="">Choose…</option>
            {rule.name && !attributes.some((d) => keyOf(d) === rule.name) && (
              <option value={rule.name}>{rule.name} (not filterable)</option>
            )}
            {attributes.map((d) => (
              <option value={keyOf(d)} key={d.id}>
                {d.name} ({keyOf(d)})
              </option>
            ))}
          </select>
        </>
      )}
      <label for={`${id}-relation`} class="visually-hidden">
        {label}: relation
      </label>
      <select
        {...common('relation')}
        value={rule.relation}
        onChange={(e) => onChange({ relation: e.currentTarget.value })}
      >
        {props.relations.map((relation) => (
          <option value={relation} key={relation}>
            {RELATION_LABEL[relation]}
          </option>
        ))}
      </select>
      <label for={`${id}-value`} class="visually-hidden">
        {label}: value
      </label>
      {rule.field === 'status' ? (
        <select
          {...common('value')}
          value={rule.value}
          onChange={(e) => onChange({ value: e.currentTarget.value })}
        >
          <option value="draft">Draft</option>
          <option value="active">Active</option>
          <option value="archived">Archived</option>
        </select>
      ) : (
        <input
          type="text"
          inputMode={rule.field === 'price' ? 'decimal' : undefined}
          {...common('value')}
          value={rule.value}
          onInput={(e) => onChange({ value: e.currentTarget.value })}
        />
      )}
      <button
        type="button"
        class="ghost"
        onClick={props.onRemove}
        aria-label={`Remove ${label.toLowerCase()}`}
      >
        Remove
      </button>
      {messages.length > 0 && (
        <p class="field-error rule-error" id={`${id}-error`}>
          {messages.join(' ')}
        </p>
      )}
    </li>
  )
}

/** Whether an error of the API is about the rules (shown by the editor, beside them). */
export const isRulesError = aboutRules
