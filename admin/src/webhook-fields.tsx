// What the two webhook screens share: the endpoint form's fields, and how an endpoint reads.
import type { ComponentChildren } from 'preact'
import { ApiError, EVENT_TYPES } from './api.js'
import { fieldMessages } from './ui.js'

/** Subscribes an endpoint to every event type, present and future. */
export const ALL_EVENTS = '*'

/** The fields of an endpoint that a form sends, by their request names. */
export const ENDPOINT_FIELDS = ['url', 'events', 'description', 'enabled'] as const

/** Events as the API takes them: `["*"]` alone, or the chosen types in the contract's order. */
export function normalEvents(chosen: readonly string[]): string[] {
  if (chosen.includes(ALL_EVENTS)) return [ALL_EVENTS]
  return EVENT_TYPES.filter((type) => chosen.includes(type))
}

export function eventsText(events: readonly string[]): string {
  return events.includes(ALL_EVENTS) ? 'All events' : events.join(', ')
}

export function EnabledBadge({ enabled }: { enabled: boolean }) {
  return enabled ? (
    <span class="badge badge-enabled">Enabled</span>
  ) : (
    <span class="badge badge-disabled">Disabled</span>
  )
}

/**
 * The sentence above a form's fields when the API refused it: its message alone when no field
 * is named (the endpoint limit, a network error), else a pointer to the fields.
 */
export function formError(error: unknown): string {
  if (!error) return ''
  if (!(error instanceof ApiError)) return String(error)
  const onFields = ENDPOINT_FIELDS.some((field) => fieldMessages(error, field).length > 0)
  return onFields ? `${error.message} See the fields below.` : error.message
}

/** The error paragraph of one field, if the API named it, and the ids that describe it. */
function problems(error: unknown, field: string, id: string) {
  const messages = fieldMessages(error, field)
  const errorId = `${id}-error`
  return {
    invalid: messages.length > 0 ? ('true' as const) : undefined,
    errorId: messages.length > 0 ? errorId : undefined,
    paragraph:
      messages.length > 0 ? (
        <p class="field-error" id={errorId}>
          {messages.join(' ')}
        </p>
      ) : null,
  }
}

const describedBy = (...ids: (string | undefined)[]) => ids.filter(Boolean).join(' ') || undefined

/** A text input with its label, help and the API's error for it. */
export function TextField(props: {
  /** The form's prefix of ids: `endpoint-new`, `endpoint`. */
  form: string
  field: 'url' | 'description'
  label: string
  value: string
  error: unknown
  help?: ComponentChildren
  onInput(value: string): void
}) {
  const id = `${props.form}-${props.field}`
  const { invalid, errorId, paragraph } = problems(props.error, props.field, id)
  return (
    <div class={`field field-${props.field}`}>
      <label for={id}>{props.label}</label>
      <input
        id={id}
        name={props.field}
        type="text"
        inputMode={props.field === 'url' ? 'url' : undefined}
        autocomplete="off"
        spellcheck={props.field !== 'url'}
        required={props.field === 'url'}
        value={props.value}
        aria-invalid={invalid}
        aria-describedby={describedBy(errorId, props.help ? `${id}-help` : undefined)}
        onInput={(event) => props.onInput(event.currentTarget.value)}
      />
      {props.help && (
        <p class="help" id={`${id}-help`}>
          {props.help}
        </p>
      )}
      {paragraph}
    </div>
  )
}

/**
 * The event types as a group of checkboxes: "All events" (`*`), which unchecks and disables
 * every type while it is checked, and each type.
 */
export function EventsField(props: {
  form: string
  chosen: readonly string[]
  error: unknown
  onChange(chosen: string[]): void
}) {
  const id = `${props.form}-events`
  const { invalid, errorId, paragraph } = problems(props.error, 'events', id)
  const all = props.chosen.includes(ALL_EVENTS)
  const toggle = (type: string, checked: boolean) => {
    if (type === ALL_EVENTS) return props.onChange(checked ? [ALL_EVENTS] : [])
    const rest = props.chosen.filter((chosen) => chosen !== type)
    props.onChange(normalEvents(checked ? [...rest, type] : rest))
  }
  const box = (type: string, label: ComponentChildren) => (
    <label class="check" key={type}>
      <input
        type="checkbox"
        name="events"
        value={type}
        checked={type === ALL_EVENTS ? all : !all && props.chosen.includes(type)}
        disabled={type !== ALL_EVENTS && all}
        aria-invalid={invalid}
        onChange={(event) => toggle(type, event.currentTarget.checked)}
      />
      {label}
    </label>
  )
  return (
    <fieldset
      class="field events-field"
      id={id}
      aria-describedby={describedBy(errorId, `${id}-help`)}
    >
      <legend>Events</legend>
      {box(ALL_EVENTS, 'All events')}
      <div class="event-types">
        {EVENT_TYPES.map((type) => box(type, <span class="mono">{type}</span>))}
      </div>
      <p class="help" id={`${id}-help`}>
        All events includes types added later.
      </p>
      {paragraph}
    </fieldset>
  )
}

/** What a key without `write` is told instead of the webhook screens (which it cannot read). */
export function NeedsWriteKey() {
  return (
    <p class="card">
      Webhooks need an API key that can write: sign out, and sign in with a key that has the{' '}
      <code>write</code> scope to see and change the store’s endpoints.
    </p>
  )
}
