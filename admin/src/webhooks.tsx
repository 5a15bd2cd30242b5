import { type Session, useFocusHeading } from './ui.js'

/** The store's webhook endpoints (`#/webhooks`). */
export function WebhookEndpoints(_props: { session: Session }) {
  const heading = useFocusHeading()
  return (
    <h1 tabIndex={-1} ref={heading}>
      Webhooks
    </h1>
  )
}

/** One endpoint (`#/webhooks/<id>`): its settings and its deliveries. */
export function WebhookEndpointPage(_props: { id: string; session: Session }) {
  const heading = useFocusHeading()
  return (
    <h1 tabIndex={-1} ref={heading}>
      Webhook endpoint
    </h1>
  )
}
