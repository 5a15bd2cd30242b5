import { useEffect, useState } from 'preact/hooks'
import { ApiError, call } from './api.js'
import { fieldMessages, Notice, type Session } from './ui.js'

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

/** One input per definition, suited to its type, with the API's errors beside it. */
export function MetafieldInputs(props: {
  idPrefix: string
  definitions: MetafieldDefinition[]
  stored: Record<string, unknown>
  edits: Record<string, string | boolean>
  error: unknown
  onEdit(key: string, value: string | boolean): void
}) {
  const { idPrefix, definitions, stored, edits, error, onEdit } = props
  if (definitions.length === 0) return null
  return (
    <fieldset class="card metafields">
      <legend>Custom attributes</legend>
      {definitions.map((definition) => {
        const key = `${definition.namespace}.${definition.key}`
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
    </fieldset>
  )
}

/** The screen of the store's definitions: list, create, delete. */
export function MetafieldDefinitionsPage({ session }: { session: Session }) {
  const [definitions, setDefinitions] = useState<MetafieldDefinition[]>([])
  const [form, setForm] = useState<Record<string, string | boolean>>({
    owner: 'product',
    type: 'single_line_text_field',
  })
  const [error, setError] = useState<unknown>(null)
  const [notice, setNotice] = useState('')
  const [busy, setBusy] = useState(false)

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

  const remove = async (definition: MetafieldDefinition) => {
    setBusy(true)
    setError(null)
    try {
      await call('DELETE', `/metafield-definitions/${encodeURIComponent(definition.id)}`, {
        version: definition.version,
      })
      setNotice(`Deleted “${definition.name}” and its values.`)
      await refresh()
    } catch (caught) {
      session.onError(caught)
      setError(caught)
    } finally {
      setBusy(false)
    }
  }

  const text = (name: string, label: string) => {
    const messages = fieldMessages(error, name)
    const id = `definition-${name}`
    return (
      <div class="field" key={name}>
        <label for={id}>{label}</label>
        <input
          id={id}
          name={name}
          value={String(form[name] ?? '')}
          aria-invalid={messages.length > 0 ? 'true' : undefined}
          aria-describedby={messages.length > 0 ? `${id}-error` : undefined}
          onInput={(event) => setForm({ ...form, [name]: event.currentTarget.value })}
        />
        {messages.length > 0 && (
          <p class="field-error" id={`${id}-error`}>
            {messages.join(' ')}
          </p>
        )}
      </div>
    )
  }
  const general = error instanceof ApiError && error.details.length === 0 ? error.message : ''

  return (
    <section>
      <h1>Custom attributes</h1>
      {general && <Notice kind="error">{general}</Notice>}
      {notice && <Notice kind="success">{notice}</Notice>}
      <table class="definitions">
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Owner</th>
            <th scope="col">Namespace.key</th>
            <th scope="col">Type</th>
            <th scope="col">Filter / search</th>
            {session.writable && <th scope="col">Actions</th>}
          </tr>
        </thead>
        <tbody>
          {definitions.map((definition) => (
            <tr key={definition.id}>
              <td>{definition.name}</td>
              <td>{definition.owner}</td>
              <td class="mono">
                {definition.namespace}.{definition.key}
              </td>
              <td class="mono">{definition.type}</td>
              <td>
                {definition.filterable ? 'filterable' : ''}
                {definition.filterable && definition.searchable ? ', ' : ''}
                {definition.searchable ? 'searchable' : ''}
              </td>
              {session.writable && (
                <td>
                  <button
                    type="button"
                    class="danger"
                    disabled={busy}
                    onClick={() => void remove(definition)}
                  >
                    Delete
                  </button>
                </td>
              )}
            </tr>
          ))}
        </tbody>
      </table>
      {session.writable && (
        <form class="card" onSubmit={create} noValidate>
          <h2>New attribute</h2>
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
          {text('namespace', 'Namespace')}
          {text('key', 'Key')}
          {text('name', 'Name')}
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
          {(['filterable', 'searchable'] as const).map((flag) => (
            <label class="checkbox" key={flag}>
              <input
                type="checkbox"
                checked={form[flag] === true}
                onChange={(event) => setForm({ ...form, [flag]: event.currentTarget.checked })}
              />{' '}
              {flag === 'filterable' ? 'Filterable (a filter and facet)' : 'Searchable'}
            </label>
          ))}
          <button type="submit" class="primary" disabled={busy}>
            Create
          </button>
        </form>
      )}
    </section>
  )
}
