import type { Executor } from '../db/schema.js'
import type { EventRow } from '../events/event-queries.js'
import type { DeliveryOutcome } from './delivery-outcome.js'

/** A delivery's key: deliveries are per store, like everything else. */
export interface DeliveryKey {
  store_id: string
  id: string
}

/** A due delivery, as the claim first sees it. */
export interface DueDelivery extends DeliveryKey {
  endpoint_id: string
}

/** A claimed delivery with what its attempt needs: the endpoint and the event (null if pruned). */
export interface ClaimedDelivery extends DeliveryKey {
  endpoint_id: string
  event_id: string
  attempts: number
  url: string
  secret: string
  /** A manual retry of a finished delivery: its one attempt, after which it is finished again. */
  manualRetry: boolean
  event: EventRow | null
}

/** An outcome to record, with the delivery it is of. */
export interface RecordedOutcome {
  delivery: DeliveryKey
  outcome: DeliveryOutcome
}

/** A claimed delivery as its statement reads it, joined to its endpoint and event. */
export interface ClaimedRow {
  store_id: string
  id: string
  endpoint_id: string
  event_id: string
  attempts: number
  url: string
  secret: string
  manual_retry: boolean | number
  xid: string | null
  seq: number | null
  type: string | null
  object: string | Record<string, unknown> | null
  previous: string | Record<string, unknown> | null
  created_at: string | Date | null
}

/**
 * The dispatcher's statements that differ between the databases (delivery-claim.repository.ts
 * says what each does): one implementation per dialect.
 */
export interface ClaimQueries {
  findDueDeliveries(
    db: Executor,
    now: string,
    busy: string[],
    limit: number,
    perEndpoint: number,
  ): Promise<DueDelivery[]>
  claimDeliveries(
    db: Executor,
    keys: DeliveryKey[],
    now: string,
    leaseUntil: string,
  ): Promise<DeliveryKey[]>
  findAttemptRows(db: Executor, keys: DeliveryKey[]): Promise<ClaimedRow[]>
  recordOutcomes(db: Executor, recorded: RecordedOutcome[]): Promise<void>
}
