import { useEffect, useState } from 'preact/hooks'
import { call, type WebhookEndpoint } from './api.js'
import {
  ConfirmDialog,
  formatDate,
  navigate,
  Notice,
  type Session,
  setFlash,
  useFocusHeading,
} from './ui.js'
import { Deliveries } from './webhook-deliveries.js'
import {
  EnabledBadge,
  EventsField,
  formError,
  NeedsWriteKey,
  normalEvents,
  TextField,
} from './webhook-fields.js'

interface Edits {
  url?: string
  events?: string[]
  description?: string
  enabled?: boolean
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b)

/** The fields changed from the endpoint as loaded: all that the merge patch sends. */
function changes(endpoint: WebhookEndpoint, edits: Edits): Record<string, unknown> {
  const patch: Record<string, unknown> = {}
  if (edits.url !== undefined && edits.url.trim() !== endpoint.url) patch.url = edits.url
  if (edits.events !== undefined) {
    const events = normalEvents(edits.events)
    if (!same(events, normalEvents(endpoint.events))) patch.events = events
  }
  if (edits.description !== undefined) {
    // An emptied description clears it (null); the API trims what is sent.
    const description = edits.description.trim() === '' ? null : edits.description
    if (description?.trim() !== endpoint.description?.trim()) patch.description = description
  }
  if (edits.enabled !== undefined && edits.enabled !== endpoint.enabled) {
    patch.enabled = edits.enabled
  }
  return patch
}

/** One endpoint (`#/webhooks/<id>`): its settings and its deliveries. */
export function WebhookEndpointPage({ id, session }: { id: string; session: Session }) {
  const heading = useFocusHeading()
  const [endpoint, setEndpoint] = useState<WebhookEndpoint | null>(null)
  const [loadError, setLoadError] = useState('')
  const [edits, setEdits] = useState<Edits>({})
  const [error, setError] = useState<unknown>(null)
  const [notice, setNotice] = useState('')
  const [busy, setBusy] = useState(false)
  const [confirming, setConfirming] = useState(false)
  const path = `/webhook-endpoints/${encodeURIComponent(id)}`

  useEffect(() => {
    // A key without `write` is refused every webhook route: ask nothing.
    if (!session.writable) return
    call<{ data: WebhookEndpoint }>('GET', path).then(
      ({ data }) => setEndpoint(data),
      (caught: unknown) => {
        session.onError(caught)
        setLoadError(caught instanceof Error ? caught.message : String(caught))
      },
    )
  }, [id])

  const back = (
    <a class="back" href="#/webhooks">
      ← Webhooks
    </a>
  )
  if (!session.writable || loadError) {
    return (
      <section>
        {back}
        <h1 ref={heading} tabIndex={-1}>
          Webhook endpoint
        </h1>
        {loadError ? <Notice kind="error">{loadError}</Notice> : <NeedsWriteKey />}
      </section>
    )
  }
  if (endpoint === null) return <p class="loading">Loading…</p>

  const save = async (event: Event) => {
    event.preventDefault()
    setError(null)
    setNotice('')
    const patch = changes(endpoint, edits)
    if (Object.keys(patch).length === 0) {
      setNotice('Nothing changed.')
      return
    }
    setBusy(true)
    try {
      const { data } = await call<{ data: WebhookEndpoint }>('PATCH', path, { body: patch })
      setEndpoint(data)
      setEdits({})
      setNotice('Saved.')
    } catch (caught) {
      session.onError(caught)
      setError(caught)
    } finally {
      setBusy(false)
    }
  }

  const remove = async () => {
    setConfirming(false)
    setBusy(true)
    setError(null)
    try {
      await call('DELETE', path)
      setFlash(`Deleted the endpoint ${endpoint.url}.`)
      navigate('#/webhooks')
    } catch (caught) {
      session.onError(caught)
      setError(caught)
      setBusy(false)
    }
  }

  const general = formError(error)
  const enabled = edits.enabled ?? endpoint.enabled
  return (
    <section>
      <div class="page-head">
        <div class="endpoint-title">
          {back}
          <h1 ref={heading} tabIndex={-1}>
            {endpoint.url || 'Webhook endpoint'}
          </h1>
          <p class="muted meta">
            <EnabledBadge enabled={endpoint.enabled} /> added{' '}
            <time dateTime={endpoint.createdAt}>{formatDate(endpoint.createdAt)}</time> · updated{' '}
            <time dateTime={endpoint.updatedAt}>{formatDate(endpoint.updatedAt)}</time>
          </p>
        </div>
        <div class="actions">
          <button type="button" class="danger" disabled={busy} onClick={() => setConfirming(true)}>
            Delete endpoint
          </button>
          <button type="submit" form="endpoint-form" class="primary" disabled={busy}>
            Save
          </button>
        </div>
      </div>
      {general && <Notice kind="error">{general}</Notice>}
      {notice && <Notice kind="success">{notice}</Notice>}
      <form id="endpoint-form" class="card endpoint-form" onSubmit={save} noValidate>
        <h2>Settings</h2>
        <TextField
          form="endpoint"
          field="url"
          label="URL"
          value={edits.url ?? endpoint.url}
          error={error}
          onInput={(url) => setEdits({ ...edits, url })}
        />
        <EventsField
          form="endpoint"
          chosen={edits.events ?? endpoint.events}
          error={error}
          onChange={(events) => setEdits({ ...edits, events })}
        />
        <TextField
          form="endpoint"
          field="description"
          label="Description"
          value={edits.description ?? endpoint.description ?? ''}
          error={error}
          onInput={(description) => setEdits({ ...edits, description })}
        />
        <div class="field">
          <label class="check">
            <input
              type="checkbox"
              name="enabled"
              checked={enabled}
              aria-describedby="endpoint-enabled-help"
              onChange={(event) => setEdits({ ...edits, enabled: event.currentTarget.checked })}
            />
            Enabled
          </label>
          <p class="help" id="endpoint-enabled-help">
            A disabled endpoint is sent nothing: events meanwhile are not sent to it later, and
            deliveries already pending wait until it is enabled again.
          </p>
        </div>
      </form>
      <Deliveries path={path} enabled={endpoint.enabled} session={session} />
      <ConfirmDialog
        id="delete-endpoint"
        open={confirming}
        title="Delete this endpoint?"
        confirmLabel="Delete endpoint"
        onConfirm={() => void remove()}
        onCancel={() => setConfirming(false)}
      >
        <p>
          <span class="mono">{endpoint.url}</span> will be sent no more events, not even those still
          pending, and the history of its deliveries is deleted with it. This cannot be undone.
        </p>
      </ConfirmDialog>
    </section>
  )
}
