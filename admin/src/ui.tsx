import type { ComponentChildren } from 'preact'
import { useEffect, useRef } from 'preact/hooks'
import { ApiError, type FieldProblem, type Status } from './api.js'

/** What the screens share: whether the key may write, and what to do when it stops working. */
export interface Session {
  writable: boolean
  /** Called with any error of the API: a 401 signs out with its message. */
  onError(error: unknown): void
}

let flash = ''

/** Leaves a message for the next screen (after a create, or a delete). */
export function setFlash(message: string): void {
  flash = message
}

/** The message left by the previous screen, once. */
export function takeFlash(): string {
  const message = flash
  flash = ''
  return message
}

export function navigate(hash: string): void {
  if (location.hash !== hash) location.hash = hash
}

/**
 * A price as the API keeps it (up to 4 decimals), with at least 2: 69.90. The one way the page
 * writes a price, in lists, read-only views and inputs alike.
 */
export function formatPrice(value: number | null): string {
  if (value === null) return ''
  const decimals = (String(value).split('.')[1] ?? '').length
  return value.toFixed(Math.max(2, Math.min(decimals, 4)))
}

export function formatDate(iso: string): string {
  return new Date(iso).toLocaleString('en-GB', { dateStyle: 'medium', timeStyle: 'short' })
}

export const STATUS_LABEL: Record<Status, string> = {
  draft: 'Draft',
  active: 'Active',
  archived: 'Archived',
}

export function StatusBadge({ status }: { status: Status }) {
  return <span class={`badge badge-${status}`}>{STATUS_LABEL[status]}</span>
}

/** The problems of one request field, from an error's `details` (`tags.0` belongs to `tags`). */
export function problemsOf(error: unknown, field: string): FieldProblem[] {
  if (!(error instanceof ApiError)) return []
  return error.details.filter(
    (problem) => problem.field === field || problem.field.startsWith(`${field}.`),
  )
}

/** The field a conflict is about, for the errors that carry no `details`. */
export const CONFLICT_FIELD: Record<string, string> = {
  duplicate_slug: 'slug',
  duplicate_sku: 'sku',
  duplicate_options: 'options',
  invalid_transition: 'status',
}

/** An error's problems for one field, conflicts included, as one sentence each. */
export function fieldMessages(error: unknown, field: string): string[] {
  const messages = problemsOf(error, field).map((problem) =>
    problem.field === field ? problem.message : `${problem.field}: ${problem.message}`,
  )
  if (error instanceof ApiError && CONFLICT_FIELD[error.code] === field) {
    messages.push(error.message)
  }
  return messages
}

/** A modal confirmation (the browser's own dialog element: focus kept inside, Esc cancels). */
export function ConfirmDialog(props: {
  /** Unique in the page: names the dialog's title. */
  id: string
  open: boolean
  title: string
  children: ComponentChildren
  confirmLabel: string
  onConfirm(): void
  onCancel(): void
}) {
  const dialog = useRef<HTMLDialogElement>(null)
  useEffect(() => {
    const element = dialog.current
    if (!element) return
    if (props.open && !element.open) element.showModal()
    if (!props.open && element.open) element.close()
  }, [props.open])
  return (
    <dialog
      ref={dialog}
      class="dialog"
      aria-labelledby={`${props.id}-title`}
      onCancel={(event) => {
        event.preventDefault()
        props.onCancel()
      }}
    >
      <h2 id={`${props.id}-title`}>{props.title}</h2>
      <div class="dialog-body">{props.children}</div>
      <div class="actions">
        <button type="button" class="ghost" onClick={props.onCancel}>
          Cancel
        </button>
        <button type="button" class="danger" onClick={props.onConfirm}>
          {props.confirmLabel}
        </button>
      </div>
    </dialog>
  )
}

/** A message above a screen's content: errors are announced at once, notices politely. */
export function Notice(props: {
  kind: 'error' | 'success' | 'warning'
  children: ComponentChildren
}) {
  return (
    <div class={`notice notice-${props.kind}`} role={props.kind === 'success' ? 'status' : 'alert'}>
      {props.children}
    </div>
  )
}

/** Moves focus to a screen's heading when it opens, so screen readers announce the screen. */
export function useFocusHeading() {
  const heading = useRef<HTMLHeadingElement>(null)
  useEffect(() => heading.current?.focus(), [])
  return heading
}

/**
 * "Previous", the page's number and "Next" under a list read by cursor: `cursors` holds the
 * cursor of each page walked through ('' for the first), `nextCursor` the list's answer.
 */
export function Pager(props: {
  label: string
  cursors: string[]
  nextCursor: string | null
  onChange(cursors: string[]): void
}) {
  const { cursors, nextCursor, onChange } = props
  return (
    <nav class="pager" aria-label={props.label}>
      <button
        type="button"
        disabled={cursors.length === 1}
        onClick={() => onChange(cursors.slice(0, -1))}
      >
        Previous
      </button>
      <span class="muted">Page {cursors.length}</span>
      <button
        type="button"
        disabled={nextCursor === null}
        onClick={() => nextCursor !== null && onChange([...cursors, nextCursor])}
      >
        Next
      </button>
    </nav>
  )
}
