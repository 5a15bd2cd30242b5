import { useEffect, useRef, useState } from 'preact/hooks'
import { call, type WebhookEndpoint } from './api.js'
import { Notice, type Session, takeFlash, useFocusHeading } from './ui.js'
import {
  EnabledBadge,
  EventsField,
  eventsText,
  formError,
  NeedsWriteKey,
  TextField,
} from './webhook-fields.js'

export { WebhookEndpointPage } from './webhook-endpoint.js'

/** The store's webhook endpoints (`#/webhooks`): the list, and a form to add one. */
export function WebhookEndpoints({ session }: { session: Session }) {
  const heading = useFocusHeading()
  return (
    <section aria-labelledby="webhooks-heading">
      <div class="page-head">
        <h1 id="webhooks-heading" ref={heading} tabIndex={-1}>
          Webhooks
        </h1>
      </div>
      <p class="lead">
        Each change to the catalogue is sent as a <code>POST</code> to every enabled endpoint
        subscribed to its type, signed the{' '}
        <a href="https://www.standardwebhooks.com/" rel="noreferrer" target="_blank">
          Standard Webhooks
        </a>{' '}
        way. A delivery that fails is retried for about a day.
      </p>
      {session.writable ? <Endpoints session={session} /> : <NeedsWriteKey />}
    </section>
  )
}

type Created = WebhookEndpoint & { secret: string }

function Endpoints({ session }: { session: Session }) {
  const [endpoints, setEndpoints] = useState<WebhookEndpoint[] | null>(null)
  const [loadError, setLoadError] = useState('')
  const [notice] = useState(takeFlash)
  const [created, setCreated] = useState<Created | null>(null)

  const load = async () => {
    try {
      const { data } = await call<{ data: WebhookEndpoint[] }>('GET', '/webhook-endpoints')
      setEndpoints(data)
      setLoadError('')
    } catch (caught) {
      session.onError(caught)
      setLoadError(caught instanceof Error ? caught.message : String(caught))
    }
  }
  useEffect(() => {
    void load()
  }, [])

  return (
    <>
      {notice && <Notice kind="success">{notice}</Notice>}
      {created && (
        <SecretPanel
          endpoint={created}
          onDismiss={() => {
            setCreated(null)
            // The panel had focus: give it back to the screen rather than to the page's body.
            document.getElementById('webhooks-heading')?.focus()
          }}
        />
      )}
      {loadError && <Notice kind="error">{loadError}</Notice>}
      <div class="card table-card">
        <table class="table endpoints">
          <caption class="visually-hidden">Webhook endpoints, oldest first</caption>
          <thead>
            <tr>
              <th scope="col">URL</th>
              <th scope="col">Events</th>
              <th scope="col">Status</th>
              <th scope="col">Description</th>
            </tr>
          </thead>
          <tbody aria-busy={endpoints === null ? 'true' : 'false'}>
            {endpoints?.map((endpoint) => (
              <tr key={endpoint.id}>
                <td class="url">
                  <a href={`#/webhooks/${encodeURIComponent(endpoint.id)}`}>{endpoint.url}</a>
                </td>
                <td>{eventsText(endpoint.events)}</td>
                <td>
                  <EnabledBadge enabled={endpoint.enabled} />
                </td>
                <td class="description">{endpoint.description ?? ''}</td>
              </tr>
            ))}
            {endpoints && endpoints.length === 0 && (
              <tr>
                <td colSpan={4} class="empty">
                  No endpoints yet.
                </td>
              </tr>
            )}
          </tbody>
        </table>
      </div>
      <NewEndpoint
        session={session}
        onCreated={(endpoint) => {
          setCreated(endpoint)
          void load()
        }}
      />
    </>
  )
}

function NewEndpoint(props: { session: Session; onCreated(endpoint: Created): void }) {
  const [url, setUrl] = useState('')
  const [events, setEvents] = useState<string[]>([])
  const [description, setDescription] = useState('')
  const [error, setError] = useState<unknown>(null)
  const [busy, setBusy] = useState(false)

  const submit = async (event: Event) => {
    event.preventDefault()
    setBusy(true)
    setError(null)
    try {
      const body: Record<string, unknown> = { url, events }
      if (description.trim() !== '') body.description = description
      const { data } = await call<{ data: Created }>('POST', '/webhook-endpoints', { body })
      setUrl('')
      setEvents([])
      setDescription('')
      props.onCreated(data)
    } catch (caught) {
      props.session.onError(caught)
      setError(caught)
    } finally {
      setBusy(false)
    }
  }

  const general = formError(error)
  return (
    <form class="card endpoint-form" onSubmit={submit} noValidate aria-labelledby="new-endpoint">
      <h2 id="new-endpoint">New endpoint</h2>
      {general && <Notice kind="error">{general}</Notice>}
      <TextField
        form="endpoint-new"
        field="url"
        label="URL"
        value={url}
        error={error}
        help="Where the events are POSTed: an https:// address of your receiver."
        onInput={setUrl}
      />
      <EventsField form="endpoint-new" chosen={events} error={error} onChange={setEvents} />
      <TextField
        form="endpoint-new"
        field="description"
        label="Description"
        value={description}
        error={error}
        help="Optional: what receives them, for your colleagues."
        onInput={setDescription}
      />
      <button type="submit" class="primary" disabled={busy}>
        Add endpoint
      </button>
    </form>
  )
}

/** The new endpoint's signing secret, which no other answer of the API shows. */
function SecretPanel({ endpoint, onDismiss }: { endpoint: Created; onDismiss(): void }) {
  const title = useRef<HTMLHeadingElement>(null)
  const field = useRef<HTMLInputElement>(null)
  const [copied, setCopied] = useState('')
  useEffect(() => title.current?.focus(), [endpoint.id])

  const copy = async () => {
    try {
      if (!navigator.clipboard) throw new Error('no clipboard here')
      await navigator.clipboard.writeText(endpoint.secret)
      setCopied('Copied.')
    } catch {
      // Without the Clipboard API (or its permission), the text is selected for the keyboard.
      field.current?.select()
      setCopied('Selected: press Ctrl+C (⌘C on a Mac) to copy it.')
    }
  }

  return (
    <section class="card secret-panel" aria-labelledby="secret-title">
      <h2 id="secret-title" ref={title} tabIndex={-1}>
        Endpoint added: copy its signing secret now
      </h2>
      <p id="secret-help">
        It is shown only now, and cannot be shown again. The receiver at{' '}
        <span class="mono">{endpoint.url}</span> needs it to verify the signature of each webhook it
        gets.
      </p>
      <label for="signing-secret">Signing secret</label>
      <div class="secret-row">
        <input
          id="signing-secret"
          ref={field}
          class="mono"
          type="text"
          readOnly
          spellcheck={false}
          autocomplete="off"
          value={endpoint.secret}
          aria-describedby="secret-help"
          onFocus={(event) => event.currentTarget.select()}
        />
        <button type="button" onClick={() => void copy()}>
          Copy
        </button>
      </div>
      <p class="help" role="status">
        {copied}
      </p>
      <div class="actions">
        <button type="button" class="ghost" onClick={onDismiss}>
          Dismiss
        </button>
      </div>
    </section>
  )
}
