import { useEffect, useState } from 'preact/hooks'
import { ApiError, call, type Collection } from './api.js'
import { CollectionMembers } from './collection-members.js'
import { KindBadge } from './collections.js'
import { ReadOnlyDetails, SORT_LABEL, sortOrders } from './collection-details.js'
import { loadDefinitions, type MetafieldDefinition } from './metafields.js'
import {
  draftOf,
  isRulesError,
  newRule,
  RuleEditor,
  ruleAttributes,
  rulesOf,
  type RuleDraft,
} from './rule-editor.js'
import {
  ConfirmDialog,
  fieldMessages,
  formatDate,
  navigate,
  Notice,
  type Session,
  setFlash,
  takeFlash,
  useFocusHeading,
} from './ui.js'

type Kind = Collection['kind']
type TextField = 'title' | 'handle' | 'description' | 'sort_order'

function stored(collection: Collection | null, field: TextField, kind: Kind): string {
  if (collection === null)
    return field === 'sort_order' ? (kind === 'manual' ? 'manual' : 'newest') : ''
  if (field === 'sort_order') return collection.sortOrder
  return collection[field] ?? ''
}

/** The messages of one field, a taken handle's 409 included. */
function messagesOf(error: unknown, field: TextField): string[] {
  const messages = fieldMessages(error, field)
  if (field === 'handle' && error instanceof ApiError && error.code === 'duplicate_handle') {
    messages.push(error.message)
  }
  return messages
}

/** A collection (`#/collections/<id>`), or a new one (`#/collections/new`): its form and products. */
export function CollectionPage({ id, session }: { id: string | null; session: Session }) {
  const [collection, setCollection] = useState<Collection | null>(null)
  const [kind, setKind] = useState<Kind>('manual')
  const [edits, setEdits] = useState<Partial<Record<TextField, string>>>({})
  const [rules, setRules] = useState<RuleDraft[]>([newRule()])
  const [disjunctive, setDisjunctive] = useState(false)
  const [attributes, setAttributes] = useState<MetafieldDefinition[]>([])
  const [loadError, setLoadError] = useState('')
  const [error, setError] = useState<unknown>(null)
  const [conflict, setConflict] = useState(false)
  const [notice, setNotice] = useState(takeFlash)
  const [busy, setBusy] = useState(false)
  const [confirming, setConfirming] = useState(false)
  const heading = useFocusHeading()

  const show = (data: Collection) => {
    setCollection(data)
    setKind(data.kind)
    setEdits({})
    setRules((data.rules ?? []).map(draftOf))
    setDisjunctive(data.disjunctive)
  }
  const load = async () => {
    if (id === null) return
    try {
      const { data } = await call<{ data: Collection }>(
        'GET',
        `/collections/${encodeURIComponent(id)}`,
      )
      show(data)
      setError(null)
      setConflict(false)
    } catch (caught) {
      session.onError(caught)
      setLoadError(caught instanceof Error ? caught.message : String(caught))
    }
  }
  useEffect(() => {
    void load()
    loadDefinitions('product').then(
      (definitions) => setAttributes(ruleAttributes(definitions)),
      (caught: unknown) => session.onError(caught),
    )
  }, [id])

  const fail = (caught: unknown) => {
    session.onError(caught)
    if (caught instanceof ApiError && caught.code === 'precondition_failed') setConflict(true)
    else setError(caught)
  }
  const value = (field: TextField) => edits[field] ?? stored(collection, field, kind)

  /** A create's body, or a merge patch of what changed. */
  const body = (): Record<string, unknown> => {
    const apiRules = rulesOf(rules, attributes)
    if (collection === null) {
      return {
        title: value('title'),
        ...(value('handle').trim() !== '' && { handle: value('handle').trim() }),
        ...(value('description').trim() !== '' && { description: value('description') }),
        sort_order: value('sort_order'),
        ...(kind === 'smart' && { rules: apiRules, disjunctive }),
      }
    }
    const patch: Record<string, unknown> = {}
    for (const field of ['title', 'handle', 'description', 'sort_order'] as const) {
      const edit = edits[field]
      if (edit === undefined || edit === stored(collection, field, kind)) continue
      patch[field] = field === 'description' && edit.trim() === '' ? null : edit
    }
    if (collection.kind === 'smart') {
      if (JSON.stringify(apiRules) !== JSON.stringify(collection.rules)) patch.rules = apiRules
      if (disjunctive !== collection.disjunctive) patch.disjunctive = disjunctive
    }
    return patch
  }

  const save = async (event: Event) => {
    event.preventDefault()
    setBusy(true)
    setError(null)
    setNotice('')
    try {
      if (collection === null) {
        const { data } = await call<{ data: Collection }>('POST', '/collections', { body: body() })
        setFlash(`Created “${data.title}”.`)
        navigate(`#/collections/${encodeURIComponent(data.id)}`)
        return
      }
      const patch = body()
      if (Object.keys(patch).length === 0) {
        setNotice('Nothing changed.')
        return
      }
      const path = `/collections/${encodeURIComponent(collection.id)}`
      const { data } = await call<{ data: Collection }>('PATCH', path, {
        body: patch,
        version: collection.version,
      })
      show(data)
      setNotice('Saved.')
    } catch (caught) {
      fail(caught)
    } finally {
      setBusy(false)
    }
  }

  const remove = async () => {
    setConfirming(false)
    setBusy(true)
    setError(null)
    try {
      await call('DELETE', `/collections/${encodeURIComponent(collection!.id)}`, {
        version: collection!.version,
      })
      setFlash(`Deleted “${collection!.title}”.`)
      navigate('#/collections')
    } catch (caught) {
      fail(caught)
    } finally {
      setBusy(false)
    }
  }

  if (loadError) {
    return (
      <section>
        <a href="#/collections">← Collections</a>
        <h1 ref={heading} tabIndex={-1}>
          Collection
        </h1>
        <Notice kind="error">{loadError}</Notice>
      </section>
    )
  }
  if (id !== null && collection === null) return <p class="loading">Loading…</p>

  const onFields = (['title', 'handle', 'description', 'sort_order'] as const).some(
    (field) => messagesOf(error, field).length > 0,
  )
  const generalError = !error
    ? ''
    : !(error instanceof ApiError)
      ? String(error)
      : onFields || isRulesError(error)
        ? `${error.message} See the fields below.`
        : error.message

  const input = (field: TextField, label: string, help?: string) => {
    const fieldId = `collection-${field}`
    const messages = messagesOf(error, field)
    const describedBy =
      [messages.length > 0 && `${fieldId}-error`, help && `${fieldId}-help`]
        .filter(Boolean)
        .join(' ') || undefined
    const common = {
      id: fieldId,
      name: field,
      value: value(field),
      'aria-invalid': messages.length > 0 ? ('true' as const) : undefined,
      'aria-describedby': describedBy,
      onInput: (event: { currentTarget: { value: string } }) =>
        setEdits({ ...edits, [field]: event.currentTarget.value }),
    }
    return (
      <div class={`field field-${field}`}>
        <label for={fieldId}>{label}</label>
        {field === 'description' ? (
          <textarea rows={3} {...common} />
        ) : field === 'sort_order' ? (
          <select {...common}>
            {sortOrders(kind).map((order) => (
              <option value={order} key={order}>
                {SORT_LABEL[order]}
              </option>
            ))}
          </select>
        ) : (
          <input
            type="text"
            required={field === 'title'}
            placeholder={
              field === 'handle' && !collection ? 'Made from the title when saved' : undefined
            }
            {...common}
          />
        )}
        {help && (
          <p class="help" id={`${fieldId}-help`}>
            {help}
          </p>
        )}
        {messages.length > 0 && (
          <p class="field-error" id={`${fieldId}-error`}>
            {messages.join(' ')}
          </p>
        )}
      </div>
    )
  }

  return (
    <section>
      <div class="page-head">
        <div>
          <a class="back" href="#/collections">
            ← Collections
          </a>
          <h1 ref={heading} tabIndex={-1}>
            {collection ? collection.title : 'New collection'}
          </h1>
          {collection && (
            <p class="muted meta">
              <KindBadge kind={collection.kind} /> <span class="mono">{collection.handle}</span> ·{' '}
              {collection.productsCount} {collection.productsCount === 1 ? 'product' : 'products'} ·
              version {collection.version} · updated{' '}
              <time dateTime={collection.updatedAt}>{formatDate(collection.updatedAt)}</time>
            </p>
          )}
        </div>
        {session.writable && (
          <div class="actions">
            {collection && (
              <button
                type="button"
                class="danger"
                disabled={busy}
                onClick={() => setConfirming(true)}
              >
                Delete collection
              </button>
            )}
            <button type="submit" form="collection-form" class="primary" disabled={busy}>
              Save
            </button>
          </div>
        )}
      </div>
      {conflict && (
        <Notice kind="warning">
          <p>
            <strong>Someone else changed this collection</strong> since you opened it, so your
            changes were not saved. Reload to see the current collection, then make your changes
            again.
          </p>
          <button type="button" onClick={() => void load()}>
            Reload
          </button>
        </Notice>
      )}
      {generalError && <Notice kind="error">{generalError}</Notice>}
      {notice && <Notice kind="success">{notice}</Notice>}
      {session.writable ? (
        <form id="collection-form" class="collection-form" onSubmit={save} noValidate>
          <fieldset class="card">
            <legend>Collection</legend>
            {collection === null && (
              <fieldset class="kind-choice">
                <legend>Kind</legend>
                {(['manual', 'smart'] as const).map((choice) => (
                  <label class="check" key={choice}>
                    <input
                      type="radio"
                      name="kind"
                      checked={kind === choice}
                      onChange={() => {
                        setKind(choice)
                        setEdits({
                          ...edits,
                          sort_order: choice === 'manual' ? 'manual' : 'newest',
                        })
                      }}
                    />
                    <span>
                      {choice === 'manual'
                        ? 'Manual: you choose the products and their order'
                        : 'Smart: every product that matches conditions'}
                    </span>
                  </label>
                ))}
              </fieldset>
            )}
            {input('title', 'Title')}
            {input('handle', 'Handle', 'Lowercase letters, digits and single dashes.')}
            {input('description', 'Description')}
            {input('sort_order', 'Sort order')}
          </fieldset>
          {kind === 'smart' && (
            <RuleEditor
              rules={rules}
              disjunctive={disjunctive}
              attributes={attributes}
              error={error}
              session={session}
              onChange={(next, any) => {
                setRules(next)
                setDisjunctive(any)
              }}
            />
          )}
        </form>
      ) : (
        collection && <ReadOnlyDetails collection={collection} />
      )}
      {collection && (
        <CollectionMembers
          key={`${collection.id}-${collection.version}`}
          collection={collection}
          session={session}
          onChanged={(data) => setCollection({ ...collection, productsCount: data.productsCount })}
        />
      )}
      {collection && (
        <ConfirmDialog
          id="delete-collection"
          open={confirming}
          title="Delete this collection?"
          confirmLabel="Delete collection"
          onConfirm={() => void remove()}
          onCancel={() => setConfirming(false)}
        >
          <p>“{collection.title}” will be deleted; its products stay. This cannot be undone.</p>
        </ConfirmDialog>
      )}
    </section>
  )
}
