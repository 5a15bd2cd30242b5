import { nextAttemptAt } from './retry-schedule.js'

/**
 * What a receiver's status means: 2xx succeeds; anything else fails, a redirect as one not
 * followed. The sender answers its AttemptResult with it; decideOutcome reads the same rule.
 */
export function statusOutcome(statusCode: number): {
  ok: boolean
  statusCode: number
  error?: string
} {
  if (isSuccess(statusCode)) return { ok: true, statusCode }
  if (statusCode >= 300 && statusCode < 400) {
    return { ok: false, statusCode, error: `redirect ${statusCode} not followed` }
  }
  return { ok: false, statusCode, error: `status ${statusCode}` }
}

function isSuccess(statusCode: number | undefined): boolean {
  return statusCode !== undefined && statusCode >= 200 && statusCode < 300
}

/** The error recorded for a delivery whose event was pruned before its attempt: none is made. */
export const EVENT_DELETED = 'the event is past its retention and was deleted'

/** How one attempt went, as the sender reported it and the dispatcher timed it. */
export interface AttemptReport {
  /** The receiver's status, when one came within the timeout. */
  statusCode?: number | undefined
  /** Why it failed (a timeout, a refused connection, the status...), when it did. */
  error?: string | undefined
  /** When the attempt started, by the dispatcher's clock: recorded as lastAttemptAt. */
  startedAt: Date
  /** When its outcome came: the next attempt's delay counts from here. */
  endedAt: Date
}

/** The delivery as it was when claimed for this attempt. */
export interface DeliveryState {
  /** Attempts made before this one. */
  attempts: number
  /** A manual retry of a finished delivery: this attempt alone, failed again if it fails. */
  manualRetry: boolean
  /** The event was pruned: no attempt was made, and none will be. */
  eventDeleted: boolean
}

/** What becomes of the delivery: delivered, tried again at `at`, or failed for good. */
export type Decision =
  { verdict: 'delivered' } | { verdict: 'retry'; at: Date } | { verdict: 'failed' }

/** How an attempt ended, as the delivery records it. */
export interface DeliveryOutcome {
  status: 'pending' | 'succeeded' | 'failed'
  attempts: number
  lastAttemptAt: string
  lastStatusCode: number | null
  lastError: string | null
  nextAttemptAt: string | null
}

/**
 * The contract's delivery rule, as one pure function (no I/O, no clock read): an answer 2xx
 * within the timeout succeeds; anything else (another status, 410 and 429 alike, a redirect,
 * a timeout, a refused connection) is retried at the schedule's next delay (with up to 10 %
 * jitter: `jitter` in [0, 1), the part of it taken), counted from the attempt's end; after the
 * schedule's last retry, the delivery is failed. A manual retry of a finished delivery is its
 * one attempt, and a delivery whose event was pruned cannot be sent: both fail for good if
 * they do not succeed. Retry-After is not read: the schedule alone says when.
 */
export function decideOutcome(
  attempt: AttemptReport,
  delivery: DeliveryState,
  schedule: readonly number[],
  jitter: number,
): { decision: Decision; outcome: DeliveryOutcome } {
  const attempts = delivery.attempts + 1
  const delivered = !delivery.eventDeleted && isSuccess(attempt.statusCode)
  const decision = ((): Decision => {
    if (delivered) return { verdict: 'delivered' }
    if (delivery.eventDeleted || delivery.manualRetry) return { verdict: 'failed' }
    const at = nextAttemptAt(schedule, attempts, attempt.endedAt, () => jitter)
    return at === 'failed' ? { verdict: 'failed' } : { verdict: 'retry', at }
  })()
  const outcome: DeliveryOutcome = {
    status:
      decision.verdict === 'delivered'
        ? 'succeeded'
        : decision.verdict === 'retry'
          ? 'pending'
          : 'failed',
    attempts,
    // When it was made; the next one is due counting from its end.
    lastAttemptAt: attempt.startedAt.toISOString(),
    lastStatusCode: delivery.eventDeleted ? null : (attempt.statusCode ?? null),
    lastError: delivered ? null : delivery.eventDeleted ? EVENT_DELETED : (attempt.error ?? null),
    nextAttemptAt: decision.verdict === 'retry' ? decision.at.toISOString() : null,
  }
  return { decision, outcome }
}
