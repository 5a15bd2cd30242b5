import { useEffect, useState } from 'preact/hooks'
import { ApiError, call, type Product, type Variant } from './api.js'
import {
  loadDefinitions,
  MetafieldInputs,
  metafieldsPatch,
  type MetafieldDefinition,
} from './metafields.js'
import { ConfirmDialog, fieldMessages, formatPrice, Notice, type Session } from './ui.js'

interface Draft {
  name: string
  sku: string
  price: string
  position: string
  options: { name: string; value: string }[]
}

function draftOf(variant: Variant | null): Draft {
  if (variant === null) return { name: '', sku: '', price: '', position: '', options: [] }
  return {
    name: variant.name,
    sku: variant.sku ?? '',
    price: formatPrice(variant.price),
    position: String(variant.position),
    options: Object.entries(variant.options).map(([name, value]) => ({ name, value })),
  }
}

/** A number when the text reads as one; else the text, for the API to say what is wrong. */
function numeric(text: string): unknown {
  const value = Number(text.trim())
  return text.trim() !== '' && Number.isFinite(value) ? value : text
}

/** The draft as the API's fields: empty inputs are left out on create and cleared on edit. */
function toBody(draft: Draft, creating: boolean): Record<string, unknown> {
  const options = Object.fromEntries(
    draft.options
      .filter((pair) => pair.name.trim() !== '' || pair.value !== '')
      .map((pair) => [pair.name.trim(), pair.value]),
  )
  const body: Record<string, unknown> = {
    name: draft.name,
    sku: draft.sku.trim() === '' ? null : draft.sku,
    price: draft.price.trim() === '' ? null : numeric(draft.price),
    position: draft.position.trim() === '' ? null : numeric(draft.position),
    options,
  }
  if (creating) {
    for (const [field, value] of Object.entries(body)) if (value === null) delete body[field]
    if (Object.keys(options).length === 0) delete body.options
  }
  return body
}

export function Variants(props: {
  product: Product
  variants: Variant[]
  session: Session
  onChanged(): Promise<void>
}) {
  const { product, variants, session } = props
  /** The variant being edited inline: its id, 'new' for the row being added, or null. */
  const [editing, setEditing] = useState<string | null>(null)
  const [draft, setDraft] = useState<Draft>(draftOf(null))
  const [error, setError] = useState<unknown>(null)
  const [notice, setNotice] = useState('')
  const [busy, setBusy] = useState(false)
  const [deleting, setDeleting] = useState<Variant | null>(null)
  const [definitions, setDefinitions] = useState<MetafieldDefinition[]>([])
  const [metaEdits, setMetaEdits] = useState<Record<string, string | boolean>>({})
  useEffect(() => {
    loadDefinitions('variant').then(setDefinitions, (caught: unknown) => session.onError(caught))
  }, [])
  const base = `/products/${encodeURIComponent(product.id)}/variants`

  const edit = (variant: Variant | null) => {
    setEditing(variant ? variant.id : 'new')
    setDraft(draftOf(variant))
    setMetaEdits({})
    setError(null)
    setNotice('')
  }

  const run = async (work: () => Promise<string>) => {
    setBusy(true)
    setError(null)
    setNotice('')
    try {
      const done = await work()
      await props.onChanged()
      setNotice(done)
    } catch (caught) {
      session.onError(caught)
      setError(caught)
    } finally {
      setBusy(false)
    }
  }

  const save = (event: Event) => {
    event.preventDefault()
    void run(async () => {
      if (editing === 'new') {
        const metafields = metafieldsPatch(definitions, {}, metaEdits)
        await call('POST', base, { body: { ...toBody(draft, true), metafields } })
        setEditing(null)
        return `Added variant “${draft.name.trim()}”.`
      }
      const variant = variants.find((candidate) => candidate.id === editing)!
      const before = toBody(draftOf(variant), false)
      const after = toBody(draft, false)
      const patch: Record<string, unknown> = Object.fromEntries(
        Object.entries(after).filter(
          ([field, value]) => JSON.stringify(value) !== JSON.stringify(before[field]),
        ),
      )
      const metafields = metafieldsPatch(definitions, variant.metafields, metaEdits)
      if (metafields) patch.metafields = metafields
      if (Object.keys(patch).length > 0) {
        await call('PATCH', `${base}/${encodeURIComponent(variant.id)}`, {
          body: patch,
          version: variant.version,
        })
      }
      setEditing(null)
      return `Saved variant “${draft.name.trim()}”.`
    })
  }

  const remove = () => {
    const variant = deleting!
    setDeleting(null)
    void run(async () => {
      await call('DELETE', `${base}/${encodeURIComponent(variant.id)}`, {
        version: variant.version,
      })
      return `Deleted variant “${variant.name}”.`
    })
  }

  const problems = (field: string) => fieldMessages(error, field)
  const unplaced =
    error instanceof ApiError &&
    ['name', 'sku', 'price', 'position', 'options'].every((field) => problems(field).length === 0)
      ? error.code === 'precondition_failed'
        ? 'Someone else changed this variant since the page loaded; nothing was saved. Cancel and edit it again.'
        : error.message
      : ''

  const cellInput = (field: 'name' | 'sku' | 'price' | 'position', label: string) => {
    const messages = problems(field)
    const id = `variant-${field}`
    return (
      <>
        <input
          id={id}
          type="text"
          form="variant-form"
          aria-label={label}
          inputMode={field === 'price' ? 'decimal' : field === 'position' ? 'numeric' : undefined}
          value={draft[field]}
          aria-invalid={messages.length > 0 ? 'true' : undefined}
          aria-describedby={messages.length > 0 ? `${id}-error` : undefined}
          onInput={(event) => setDraft({ ...draft, [field]: event.currentTarget.value })}
        />
        {messages.length > 0 && (
          <p class="field-error" id={`${id}-error`}>
            {messages.join(' ')}
          </p>
        )}
      </>
    )
  }

  const setOption = (index: number, part: 'name' | 'value', text: string) =>
    setDraft({
      ...draft,
      options: draft.options.map((pair, at) => (at === index ? { ...pair, [part]: text } : pair)),
    })

  const editRow = (key: string) => {
    const optionMessages = problems('options')
    // A key of its own: were the row's elements reused, the Edit button just clicked would
    // become this Save button before the click's default action, and submit the form.
    return (
      <tr key={`edit-${key}`} class="editing">
        <td>{cellInput('name', 'Variant name')}</td>
        <td>{cellInput('sku', 'Variant SKU')}</td>
        <td>{cellInput('price', 'Variant price')}</td>
        <td>
          <fieldset class="options-editor">
            <legend class="visually-hidden">Options</legend>
            {draft.options.map((pair, index) => (
              <div class="option-pair" key={index}>
                <input
                  type="text"
                  form="variant-form"
                  aria-label={`Option ${index + 1} name`}
                  placeholder="name"
                  value={pair.name}
                  onInput={(event) => setOption(index, 'name', event.currentTarget.value)}
                />
                <input
                  type="text"
                  form="variant-form"
                  aria-label={`Option ${index + 1} value`}
                  placeholder="value"
                  value={pair.value}
                  onInput={(event) => setOption(index, 'value', event.currentTarget.value)}
                />
                <button
                  type="button"
                  class="icon"
                  aria-label={`Remove option ${index + 1}`}
                  onClick={() =>
                    setDraft({ ...draft, options: draft.options.filter((_, at) => at !== index) })
                  }
                >
                  ×
                </button>
              </div>
            ))}
            <button
              type="button"
              class="link"
              onClick={() =>
                setDraft({ ...draft, options: [...draft.options, { name: '', value: '' }] })
              }
            >
              Add option
            </button>
            {optionMessages.length > 0 && (
              <p class="field-error" id="variant-options-error">
                {optionMessages.join(' ')}
              </p>
            )}
          </fieldset>
          <MetafieldInputs
            idPrefix="variant"
            definitions={definitions}
            stored={variants.find((candidate) => candidate.id === editing)?.metafields ?? {}}
            edits={metaEdits}
            error={error}
            onEdit={(key, value) => setMetaEdits({ ...metaEdits, [key]: value })}
          />
        </td>
        <td>{cellInput('position', 'Variant position')}</td>
        <td class="row-actions">
          <button type="submit" form="variant-form" class="primary" disabled={busy}>
            Save
          </button>
          <button type="button" class="ghost" onClick={() => setEditing(null)}>
            Cancel
          </button>
        </td>
      </tr>
    )
  }

  return (
    <section class="card variants" aria-labelledby="variants-heading">
      <div class="section-head">
        <h2 id="variants-heading">Variants</h2>
        {session.writable && editing === null && (
          <button type="button" onClick={() => edit(null)}>
            Add variant
          </button>
        )}
      </div>
      {unplaced && <Notice kind="error">{unplaced}</Notice>}
      {notice && <Notice kind="success">{notice}</Notice>}
      {/* The inline row's inputs belong to this form through their form attribute. */}
      {session.writable && <form id="variant-form" onSubmit={save} noValidate />}
      <div class="table-scroll">
        <table class="table">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">SKU</th>
              <th scope="col" class="number">
                Price
              </th>
              <th scope="col">Options</th>
              <th scope="col" class="number">
                Position
              </th>
              {session.writable && (
                <th scope="col">
                  <span class="visually-hidden">Actions</span>
                </th>
              )}
            </tr>
          </thead>
          <tbody>
            {variants.map((variant) =>
              editing === variant.id ? (
                editRow(variant.id)
              ) : (
                <tr key={variant.id}>
                  <td>{variant.name}</td>
                  <td class="mono">{variant.sku ?? '—'}</td>
                  <td class="number">{formatPrice(variant.price)}</td>
                  <td>
                    {Object.entries(variant.options).map(([name, value]) => (
                      <span class="chip" key={name}>
                        {name}: {value}
                      </span>
                    ))}
                  </td>
                  <td class="number">{variant.position}</td>
                  {session.writable && (
                    <td class="row-actions">
                      <button
                        type="button"
                        class="ghost"
                        disabled={editing !== null}
                        aria-label={`Edit variant ${variant.name}`}
                        onClick={() => edit(variant)}
                      >
                        Edit
                      </button>
                      <button
                        type="button"
                        class="ghost danger-text"
                        disabled={editing !== null}
                        onClick={() => setDeleting(variant)}
                      >
                        Delete variant
                      </button>
                    </td>
                  )}
                </tr>
              ),
            )}
            {editing === 'new' && editRow('new')}
            {variants.length === 0 && editing !== 'new' && (
              <tr>
                <td colSpan={session.writable ? 6 : 5} class="empty">
                  No variants yet.
                </td>
              </tr>
            )}
          </tbody>
        </table>
      </div>
      {session.writable && (
        <ConfirmDialog
          id="delete-variant"
          open={deleting !== null}
          title="Delete this variant?"
          confirmLabel="Delete variant"
          onConfirm={remove}
          onCancel={() => setDeleting(null)}
        >
          <p>“{deleting?.name}” will be deleted. This cannot be undone.</p>
        </ConfirmDialog>
      )}
    </section>
  )
}
