import { useEffect, useState } from 'preact/hooks'
import { call, type WebhookDelivery } from './api.js'
import { Notice, Pager, type Session } from './ui.js'

const PAGE_SIZE = 20
/** After a Retry, the page is read again every second this many times, until an outcome. */
const FOLLOW_POLLS = 15

type Status = WebhookDelivery['status']
type Page = { data: WebhookDelivery[]; nextCursor: string | null }

const STATUS_LABEL: Record<Status, string> = {
  pending: 'Pending',
  succeeded: 'Succeeded',
  failed: 'Failed',
}

/** A time to the second: attempts are retried after seconds. */
function formatTime(iso: string): string {
  return new Date(iso).toLocaleString('en-GB', { dateStyle: 'medium', timeStyle: 'medium' })
}

function Time({ iso }: { iso: string | null }) {
  return iso === null ? <>—</> : <time dateTime={iso}>{formatTime(iso)}</time>
}

/** The receiver's status of the last attempt: none before an attempt, "No answer" for a timeout. */
function lastStatus(delivery: WebhookDelivery): string {
  if (delivery.lastStatusCode !== null) return String(delivery.lastStatusCode)
  return delivery.attempts === 0 ? '—' : 'No answer'
}

/** Failed for good, or pending after a failed attempt: worth an attempt now. */
function retriable(delivery: WebhookDelivery): boolean {
  return delivery.status === 'failed' || (delivery.status === 'pending' && delivery.attempts > 0)
}

/** The product or variant a delivery was about, in words: `“Linen Shirt” (LIN-SHIRT)`. */
function subjectText(delivery: WebhookDelivery): string {
  const subject = delivery.subject
  if (!subject) return `event ${delivery.eventId}`
  return subject.sku ? `“${subject.name}” (${subject.sku})` : `“${subject.name}”`
}

function outcome(delivery: WebhookDelivery): string {
  const what = `The delivery about ${subjectText(delivery)}`
  if (delivery.status === 'succeeded') return `${what} succeeded.`
  if (delivery.status === 'failed') return `${what} failed again (${lastStatus(delivery)}).`
  return `${what} is still pending (${lastStatus(delivery)}).`
}

/**
 * An endpoint's deliveries, newest first, 20 a page, with Refresh and Retry (not while the
 * endpoint is disabled: the dispatcher sends nothing to it, so a retry would wait with it).
 */
export function Deliveries(props: { path: string; enabled: boolean; session: Session }) {
  const { path, session } = props
  const [cursors, setCursors] = useState([''])
  const [page, setPage] = useState<Page | null>(null)
  const [reads, setReads] = useState(0)
  const [loading, setLoading] = useState(true)
  const [error, setError] = useState('')
  const [retrying, setRetrying] = useState<string | null>(null)
  const [following, setFollowing] = useState<{ id: string; polls: number } | null>(null)
  const [announcement, setAnnouncement] = useState('')

  const fail = (caught: unknown) => {
    session.onError(caught)
    setError(caught instanceof Error ? caught.message : String(caught))
  }

  useEffect(() => {
    let current = true
    const params = new URLSearchParams({ limit: String(PAGE_SIZE) })
    const cursor = cursors[cursors.length - 1]!
    if (cursor) params.set('cursor', cursor)
    setLoading(true)
    call<Page>('GET', `${path}/deliveries?${params}`).then(
      (answer) => {
        if (!current) return
        setPage(answer)
        setError('')
        setLoading(false)
      },
      (caught: unknown) => {
        if (!current) return
        fail(caught)
        setLoading(false)
      },
    )
    return () => {
      current = false
    }
  }, [cursors, reads])

  // A retried delivery is followed until the dispatcher's attempt has an outcome.
  useEffect(() => {
    if (following === null || page === null) return
    const delivery = page.data.find((row) => row.id === following.id)
    if (delivery?.status === 'pending' && following.polls < FOLLOW_POLLS) {
      const timer = setTimeout(() => {
        setFollowing({ id: following.id, polls: following.polls + 1 })
        setReads((count) => count + 1)
      }, 1000)
      return () => clearTimeout(timer)
    }
    if (delivery) setAnnouncement(outcome(delivery))
    setFollowing(null)
    return undefined
  }, [page])

  const retry = async (delivery: WebhookDelivery) => {
    setRetrying(delivery.id)
    setError('')
    try {
      const { data } = await call<{ data: WebhookDelivery }>(
        'POST',
        `${path}/deliveries/${encodeURIComponent(delivery.id)}/retry`,
      )
      setAnnouncement(`Retrying the delivery about ${subjectText(delivery)}…`)
      setFollowing({ id: data.id, polls: 0 })
      // The retry's answer has no subject: the row keeps the one the list gave.
      setPage(
        (current) =>
          current && {
            ...current,
            data: current.data.map((row) => (row.id === data.id ? { ...row, ...data } : row)),
          },
      )
    } catch (caught) {
      fail(caught)
    } finally {
      setRetrying(null)
    }
  }

  return (
    <section class="deliveries" aria-labelledby="deliveries-heading">
      <div class="section-head">
        <h2 id="deliveries-heading">Deliveries</h2>
        <button type="button" disabled={loading} onClick={() => setReads((count) => count + 1)}>
          Refresh
        </button>
      </div>
      <p class="help">
        One for each event sent (or to be sent) to this endpoint, newest first. A failed attempt is
        retried on a schedule; Retry attempts it once more now.
      </p>
      {!props.enabled && (
        <Notice kind="warning">
          This endpoint is disabled: nothing is sent to it, retries included, until it is enabled
          again.
        </Notice>
      )}
      {error && <Notice kind="error">{error}</Notice>}
      <p class="help follow" role="status">
        {announcement}
      </p>
      <div class="card table-card">
        <table class="table deliveries-table">
          <caption class="visually-hidden">Deliveries, newest first</caption>
          <thead>
            <tr>
              <th scope="col">About</th>
              <th scope="col">Event</th>
              <th scope="col">Status</th>
              <th scope="col" class="number">
                Attempts
              </th>
              <th scope="col">Last attempt</th>
              <th scope="col">Last status</th>
              <th scope="col">Next attempt</th>
              <th scope="col">
                <span class="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody aria-busy={loading ? 'true' : 'false'}>
            {page?.data.map((delivery) => (
              <tr key={delivery.id}>
                <td class="subject">
                  {delivery.subject ? (
                    <>
                      <span class="subject-name">{delivery.subject.name}</span>
                      {delivery.subject.sku && (
                        <span class="mono muted"> {delivery.subject.sku}</span>
                      )}
                    </>
                  ) : (
                    <span class="muted">Event no longer kept</span>
                  )}
                </td>
                <td>
                  <span class="mono">{delivery.eventType}</span>
                  <br />
                  <span class="mono muted event-id">{delivery.eventId}</span>
                </td>
                <td>
                  <span class={`badge badge-${delivery.status}`}>
                    {STATUS_LABEL[delivery.status]}
                  </span>
                </td>
                <td class="number">{delivery.attempts}</td>
                <td>
                  <Time iso={delivery.lastAttemptAt} />
                </td>
                <td class="mono">{lastStatus(delivery)}</td>
                <td>
                  <Time iso={delivery.nextAttemptAt} />
                </td>
                <td class="row-actions">
                  {props.enabled && retriable(delivery) && (
                    <button
                      type="button"
                      disabled={retrying !== null || following?.id === delivery.id}
                      onClick={() => void retry(delivery)}
                    >
                      Retry
                      <span class="visually-hidden">
                        {' '}
                        the delivery about {subjectText(delivery)}
                      </span>
                    </button>
                  )}
                </td>
              </tr>
            ))}
            {page && page.data.length === 0 && (
              <tr>
                <td colSpan={8} class="empty">
                  No deliveries yet.
                </td>
              </tr>
            )}
          </tbody>
        </table>
      </div>
      <Pager
        label="Pages of deliveries"
        cursors={cursors}
        nextCursor={page?.nextCursor ?? null}
        onChange={setCursors}
      />
    </section>
  )
}
