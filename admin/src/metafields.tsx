import { useEffect, useState } from 'preact/hooks'
import { ApiError, call } from './api.js'
import { fieldMessages, Notice, type Session, useFocusHeading } from './ui.js'

export type MetafieldOwner = 'product' | 'variant'

export interface MetafieldDefinition {
  id: string
  owner: MetafieldOwner
  namespace: string
  key: string
  type: string
  name: string
  description: string | null
  validations: Record<string, unknown>
  filterable: boolean
  searchable: boolean
  version: number
}

export const METAFIELD_TYPES = [
  'single_line_text_field',
  'multi_line_text_field',
  'number_integer',
  'number_decimal',
  'boolean',
  'date',
  'date_time',
  'url',
  'color',
  'json',
  'list.single_line_text_field',
  'list.number_integer',
] as const

/** Every definition of the store for `owner`, all pages. */
export async function loadDefinitions(owner?: MetafieldOwner): Promise<MetafieldDefinition[]> {
  const all: MetafieldDefinition[] = []
  let cursor: string | null = null
  do {
    const query = new URLSearchParams({ limit: '200' })
    if (owner) query.set('owner', owner)
    if (cursor) query.set('cursor', cursor)
    const page: { data: MetafieldDefinition[]; nextCursor: string | null } = await call(
      'GET',
      `/metafield-definitions?${query}`,
    )
    all.push(...page.data)
    cursor = page.nextCursor
  } while (cursor)
  return all
}

/** A value as its input shows it: lists one item a line, json as JSON text. */
function toInput(type: string, value: unknown): string | boolean {
  if (value === undefined || value === null) return type === 'boolean' ? false : ''
  if (type === 'boolean') return value === true
  if (type === 'json') return JSON.stringify(value, null, 2)
  if (Array.isArray(value)) return value.join('\n')
  return String(value)
}

/** An input's text as the API's value: empty is null (removes it); the API checks the rest. */
function fromInput(type: string, input: string | boolean): unknown {
  if (type === 'boolean') return input === true
  const text = String(input)
  if (text.trim() === '') return null
  if (type === 'number_integer' || type === 'number_decimal') {
    return Number.isNaN(Number(text)) ? text : Number(text)
  }
  if (type === 'list.number_integer') {
    return text
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => (Number.isNaN(Number(line)) ? line : Number(line)))
  }
  if (type === 'list.single_line_text_field') return text.split('\n').filter((l) => l !== '')
  if (type === 'json') {
    try {
      return JSON.parse(text)
    } catch {
      return text
    }
  }
  return text
}

/**
 * The edits of a record's metafields as a merge patch: the keys whose input changed, null for
 * one emptied. Undefined when none changed.
 */
export function metafieldsPatch(
  definitions: MetafieldDefinition[],
  stored: Record<string, unknown>,
  edits: Record<string, string | boolean>,
): Record<string, unknown> | undefined {
  const patch: Record<string, unknown> = {}
  for (const definition of definitions) {
    const key = `${definition.namespace}.${definition.key}`
    if (!(key in edits)) continue
    const value = fromInput(definition.type, edits[key]!)
    if (JSON.stringify(value) !== JSON.stringify(stored[key] ?? null)) patch[key] = value
  }
  return Object.keys(patch).length > 0 ? patch : undefined
}

/** The HTML input of a scalar type: a date picker, a color picker, a number... */
function inputType(type: string): string {
  if (type === 'date' || type === 'color' || type === 'url') return type
  return type.startsWith('number') ? 'number' : 'text'
}

/** Whether a record holds a value for the key (what the API answers holds only values set). */
const isSet = (stored: Record<string, unknown>, key: string) =>
  stored[key] !== undefined && stored[key] !== null

/**
 * The record's custom attributes, as Shopify's admin shows its metafields: one input, suited to
 * its type, for each attribute that has a value (or was added here, or has an error), and an
 * "Add attribute" choice of the others; the API's errors beside each input.
 */
export function MetafieldInputs(props: {
  idPrefix: string
  definitions: MetafieldDefinition[]
  stored: Record<string, unknown>
  edits: Record<string, string | boolean>
  error: unknown
  onEdit(key: string, value: string | boolean): void
}) {
  const { idPrefix, definitions, stored, edits, error, onEdit } = props
  const [adding, setAdding] = useState('')
  if (definitions.length === 0) return null
  const keyOf = (definition: MetafieldDefinition) => `${definition.namespace}.${definition.key}`
  const shown = definitions.filter((definition) => {
    const key = keyOf(definition)
    return (
      isSet(stored, key) || key in edits || fieldMessages(error, `metafields.${key}`).length > 0
    )
  })
  const others = definitions.filter((definition) => !shown.includes(definition))
  const chosen = others.find((definition) => keyOf(definition) === adding) ?? others[0]
  const addId = `${idPrefix}-mf-add`
  return (
    <fieldset class="card metafields">
      <legend>Custom attributes</legend>
      {shown.length === 0 && <p class="muted">None set.</p>}
      {shown.map((definition) => {
        const key = keyOf(definition)
        const id = `${idPrefix}-mf-${key}`
        const value = key in edits ? edits[key]! : toInput(definition.type, stored[key])
        const messages = fieldMessages(error, `metafields.${key}`)
        const common = {
          id,
          name: `metafields.${key}`,
          'aria-invalid': messages.length > 0 ? ('true' as const) : undefined,
          'aria-describedby': messages.length > 0 ? `${id}-error` : undefined,
        }
        const onText = (event: { currentTarget: { value: string } }) =>
          onEdit(key, event.currentTarget.value)
        const type = definition.type
        return (
          <div class={`field field-metafield field-${type}`} key={key}>
            {type === 'boolean' ? (
              <label for={id} class="checkbox">
                <input
                  type="checkbox"
                  {...common}
                  checked={value === true}
                  onChange={(event) => onEdit(key, event.currentTarget.checked)}
                />{' '}
                {definition.name}
              </label>
            ) : (
              <label for={id}>{definition.name}</label>
            )}
            {type === 'boolean' ? null : type === 'multi_line_text_field' || type === 'json' ? (
              <textarea rows={4} {...common} value={String(value)} onInput={onText} />
            ) : type.startsWith('list.') ? (
              <textarea
                rows={3}
                {...common}
                value={String(value)}
                onInput={onText}
                placeholder="One item a line"
              />
            ) : (
              <input
                type={inputType(type) as 'text'}
                step={type === 'number_decimal' ? 'any' : undefined}
                placeholder={type === 'date_time' ? '2026-11-30T10:00:00Z' : undefined}
                {...common}
                value={String(value)}
                onInput={onText}
              />
            )}
            {messages.length > 0 && (
              <p class="field-error" id={`${id}-error`}>
                {messages.join(' ')}
              </p>
            )}
          </div>
        )
      })}
      {others.length > 0 && chosen && (
        <div class="metafield-add">
          <div class="field">
            <label for={addId}>Add attribute</label>
            <select
              id={addId}
              value={keyOf(chosen)}
              onChange={(event) => setAdding(event.currentTarget.value)}
            >
              {others.map((definition) => (
                <option value={keyOf(definition)} key={definition.id}>
                  {definition.name}
                </option>
              ))}
            </select>
          </div>
          <button
            type="button"
            onClick={() => {
              onEdit(keyOf(chosen), toInput(chosen.type, undefined))
              setAdding('')
              // The new input takes the focus once it is drawn.
              const id = `${idPrefix}-mf-${keyOf(chosen)}`
              requestAnimationFrame(() => document.getElementById(id)?.focus())
            }}
          >
            Add
          </button>
        </div>
      )}
      <p class="help">
        Emptied, an attribute is removed from the record on Save.{' '}
        <a href="#/attributes">Custom attributes</a> lists them all.
      </p>
    </fieldset>
  )
}

/** What the edit form of a definition holds: what PATCH may change. */
interface DefinitionDraft {
  name: string
  description: string
  validations: string
  filterable: boolean
  searchable: boolean
}

const draftOf = (definition: MetafieldDefinition): DefinitionDraft => ({
  name: definition.name,
  description: definition.description ?? '',
  validations:
    Object.keys(definition.validations).length > 0
      ? JSON.stringify(definition.validations, null, 2)
      : '',
  filterable: definition.filterable,
  searchable: definition.searchable,
})

const FLAG_LABELS = {
  filterable: 'Filterable: a filter and a facet of the product list',
  searchable: 'Searchable: its text is found by the search',
} as const

/** A definition's flags in words, for its row. */
const flagsOf = (definition: MetafieldDefinition) =>
  [definition.filterable && 'filterable', definition.searchable && 'searchable']
    .filter(Boolean)
    .join(', ') || '—'

/** One text input of a form, with the API's errors for its field beside it. */
function TextField(props: {
  id: string
  name: string
  label: string
  value: string
  error: unknown
  multiline?: boolean
  help?: string
  onInput(value: string): void
}) {
  const { id, name, label, value, error, multiline, help, onInput } = props
  const messages = fieldMessages(error, name)
  const described = [messages.length > 0 && `${id}-error`, help && `${id}-help`]
    .filter(Boolean)
    .join(' ')
  const common = {
    id,
    name,
    value,
    'aria-invalid': messages.length > 0 ? ('true' as const) : undefined,
    'aria-describedby': described || undefined,
    onInput: (event: { currentTarget: { value: string } }) => onInput(event.currentTarget.value),
  }
  return (
    <div class="field">
      <label for={id}>{label}</label>
      {multiline ? <textarea rows={3} class="mono" {...common} /> : <input {...common} />}
      {help && (
        <p class="help" id={`${id}-help`}>
          {help}
        </p>
      )}
      {messages.length > 0 && (
        <p class="field-error" id={`${id}-error`}>
          {messages.join(' ')}
        </p>
      )}
    </div>
  )
}

/** The checkboxes of a definition's flags. */
function Flags(props: {
  idPrefix: string
  filterable: boolean
  searchable: boolean
  onChange(flag: 'filterable' | 'searchable', checked: boolean): void
}) {
  return (
    <fieldset class="checks">
      <legend>Use</legend>
      {(['filterable', 'searchable'] as const).map((flag) => (
        <label class="checkbox" key={flag} for={`${props.idPrefix}-${flag}`}>
          <input
            type="checkbox"
            id={`${props.idPrefix}-${flag}`}
            checked={props[flag]}
            onChange={(event) => props.onChange(flag, event.currentTarget.checked)}
          />
          {FLAG_LABELS[flag]}
        </label>
      ))}
    </fieldset>
  )
}

/** The screen of the store's definitions: list, create, change (PATCH), delete. */
export function MetafieldDefinitionsPage({ session }: { session: Session }) {
  const [definitions, setDefinitions] = useState<MetafieldDefinition[] | null>(null)
  const [form, setForm] = useState<Record<string, string | boolean>>({
    owner: 'product',
    type: 'single_line_text_field',
  })
  const [editing, setEditing] = useState<MetafieldDefinition | null>(null)
  const [draft, setDraft] = useState<DefinitionDraft | null>(null)
  const [error, setError] = useState<unknown>(null)
  const [editError, setEditError] = useState<unknown>(null)
  const [notice, setNotice] = useState('')
  const [busy, setBusy] = useState(false)
  const heading = useFocusHeading()

  const refresh = async () => {
    try {
      setDefinitions(await loadDefinitions())
    } catch (caught) {
      session.onError(caught)
      setError(caught)
    }
  }
  useEffect(() => {
    void refresh()
  }, [])

  const create = async (event: Event) => {
    event.preventDefault()
    setBusy(true)
    setError(null)
    setNotice('')
    try {
      const { data } = await call<{ data: MetafieldDefinition }>('POST', '/metafield-definitions', {
        body: {
          owner: form.owner,
          namespace: form.namespace ?? '',
          key: form.key ?? '',
          type: form.type,
          name: form.name ?? '',
          filterable: form.filterable === true,
          searchable: form.searchable === true,
        },
      })
      setNotice(`Created “${data.name}”.`)
      setForm({ owner: String(form.owner), type: String(form.type) })
      await refresh()
    } catch (caught) {
      session.onError(caught)
      setError(caught)
    } finally {
      setBusy(false)
    }
  }

  const startEdit = (definition: MetafieldDefinition) => {
    setEditing(definition)
    setDraft(draftOf(definition))
    setEditError(null)
    setNotice('')
    requestAnimationFrame(() => document.getElementById('edit-definition-name')?.focus())
  }
  const stopEdit = () => {
    setEditing(null)
    setDraft(null)
    setEditError(null)
  }

  /** PATCH with what changed (a merge patch), based on the version the form was filled from. */
  const save = async (event: Event) => {
    event.preventDefault()
    if (!editing || !draft) return
    const before = draftOf(editing)
    const body: Record<string, unknown> = {}
    if (draft.name !== before.name) body.name = draft.name
    if (draft.description !== before.description) {
      body.description = draft.description.trim() === '' ? null : draft.description
    }
    if (draft.filterable !== before.filterable) body.filterable = draft.filterable
    if (draft.searchable !== before.searchable) body.searchable = draft.searchable
    if (draft.validations !== before.validations) {
      if (draft.validations.trim() === '') body.validations = {}
      else {
        try {
          body.validations = JSON.parse(draft.validations)
        } catch {
          setEditError(
            new ApiError(400, 'validation_failed', 'The validations are not JSON.', [
              { field: 'validations', message: 'Not JSON: write an object such as {"max": 40}.' },
            ]),
          )
          return
        }
      }
    }
    setBusy(true)
    setEditError(null)
    try {
      const { data } = await call<{ data: MetafieldDefinition }>(
        'PATCH',
        `/metafield-definitions/${encodeURIComponent(editing.id)}`,
        { body, version: editing.version },
      )
      setNotice(`Saved “${data.name}”.`)
      stopEdit()
      await refresh()
    } catch (caught) {
      session.onError(caught)
      setEditError(caught)
    } finally {
      setBusy(false)
    }
  }

  const remove = async (definition: MetafieldDefinition) => {
    setBusy(true)
    setError(null)
    try {
      await call('DELETE', `/metafield-definitions/${encodeURIComponent(definition.id)}`, {
        version: definition.version,
      })
      setNotice(`Deleted “${definition.name}” and its values.`)
      if (editing?.id === definition.id) stopEdit()
      await refresh()
    } catch (caught) {
      session.onError(caught)
      setError(caught)
    } finally {
      setBusy(false)
    }
  }

  const general = error instanceof ApiError && error.details.length === 0 ? error.message : ''
  const editGeneral =
    editError instanceof ApiError && editError.details.length === 0 ? editError.message : ''

  return (
    <section class="attributes" aria-labelledby="attributes-heading">
      <div class="page-head">
        <h1 id="attributes-heading" ref={heading} tabIndex={-1}>
          Custom attributes
        </h1>
      </div>
      <p class="muted">
        Typed attributes of products and variants, named as Shopify’s metafields. A filterable one
        is a filter and a facet of the product list; a searchable one adds its text to what the
        search finds.
      </p>
      {general && <Notice kind="error">{general}</Notice>}
      {notice && <Notice kind="success">{notice}</Notice>}
      <div class="card table-card">
        <table class="table table-stack definitions">
          <caption class="visually-hidden">Custom attributes, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Owner</th>
              <th scope="col">Namespace.key</th>
              <th scope="col">Type</th>
              <th scope="col">Filter / search</th>
              {session.writable && (
                <th scope="col">
                  <span class="visually-hidden">Actions</span>
                </th>
              )}
            </tr>
          </thead>
          <tbody aria-busy={definitions === null ? 'true' : 'false'}>
            {definitions?.map((definition) => (
              <tr key={definition.id} class={editing?.id === definition.id ? 'editing' : undefined}>
                <td>{definition.name}</td>
                <td data-label="Owner">{definition.owner}</td>
                <td class="mono" data-label="Namespace.key">
                  {definition.namespace}.{definition.key}
                </td>
                <td class="mono" data-label="Type">
                  {definition.type}
                </td>
                <td data-label="Filter / search">{flagsOf(definition)}</td>
                {session.writable && (
                  <td class="row-actions">
                    <button
                      type="button"
                      aria-label={`Edit ${definition.name}`}
                      disabled={busy}
                      onClick={() => startEdit(definition)}
                    >
                      Edit
                    </button>
                    <button
                      type="button"
                      class="danger"
                      aria-label={`Delete ${definition.name}`}
                      disabled={busy}
                      onClick={() => void remove(definition)}
                    >
                      Delete
                    </button>
                  </td>
                )}
              </tr>
            ))}
            {definitions && definitions.length === 0 && (
              <tr>
                <td colSpan={6} class="empty">
                  No custom attributes yet. An import with “Create the missing custom attributes”
                  makes those of its file.
                </td>
              </tr>
            )}
          </tbody>
        </table>
      </div>
      {editing && draft && (
        <form
          class="card definition-form"
          onSubmit={save}
          noValidate
          aria-label={`Edit ${editing.name}`}
        >
          <h2>
            Edit <span class="mono">{`${editing.namespace}.${editing.key}`}</span>
          </h2>
          <p class="help">
            Its owner, namespace, key and type stay. A change applies from the next request: values
            already stored stay, even those new validations would refuse.
          </p>
          {editGeneral && <Notice kind="error">{editGeneral}</Notice>}
          <TextField
            id="edit-definition-name"
            name="name"
            label="Name"
            value={draft.name}
            error={editError}
            onInput={(name) => setDraft({ ...draft, name })}
          />
          <TextField
            id="edit-definition-description"
            name="description"
            label="Description"
            value={draft.description}
            error={editError}
            multiline
            onInput={(description) => setDraft({ ...draft, description })}
          />
          <TextField
            id="edit-definition-validations"
            name="validations"
            label="Validations (JSON)"
            value={draft.validations}
            error={editError}
            multiline
            help='Replaced whole: min, max, choices, regex, e.g. {"choices": ["Teak", "Rattan"]}. Empty: none.'
            onInput={(validations) => setDraft({ ...draft, validations })}
          />
          <Flags
            idPrefix="edit-definition"
            filterable={draft.filterable}
            searchable={draft.searchable}
            onChange={(flag, checked) => setDraft({ ...draft, [flag]: checked })}
          />
          <div class="actions">
            <button type="submit" class="primary" disabled={busy}>
              Save
            </button>
            <button type="button" class="ghost" onClick={stopEdit}>
              Cancel
            </button>
          </div>
        </form>
      )}
      {session.writable && (
        <form
          class="card definition-form"
          onSubmit={create}
          noValidate
          aria-labelledby="new-attribute"
        >
          <h2 id="new-attribute">New attribute</h2>
          <div class="row">
            <div class="field">
              <label for="definition-owner">Owner</label>
              <select
                id="definition-owner"
                value={String(form.owner)}
                onChange={(event) => setForm({ ...form, owner: event.currentTarget.value })}
              >
                <option value="product">Product</option>
                <option value="variant">Variant</option>
              </select>
            </div>
            <div class="field">
              <label for="definition-type">Type</label>
              <select
                id="definition-type"
                value={String(form.type)}
                onChange={(event) => setForm({ ...form, type: event.currentTarget.value })}
              >
                {METAFIELD_TYPES.map((type) => (
                  <option value={type} key={type}>
                    {type}
                  </option>
                ))}
              </select>
            </div>
          </div>
          <div class="row">
            {(
              [
                ['namespace', 'Namespace'],
                ['key', 'Key'],
                ['name', 'Name'],
              ] as const
            ).map(([name, label]) => (
              <TextField
                key={name}
                id={`definition-${name}`}
                name={name}
                label={label}
                value={String(form[name] ?? '')}
                error={error}
                onInput={(value) => setForm({ ...form, [name]: value })}
              />
            ))}
          </div>
          <Flags
            idPrefix="definition"
            filterable={form.filterable === true}
            searchable={form.searchable === true}
            onChange={(flag, checked) => setForm({ ...form, [flag]: checked })}
          />
          <button type="submit" class="primary" disabled={busy}>
            Create
          </button>
        </form>
      )}
    </section>
  )
}
