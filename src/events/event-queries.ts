import type { Executor } from '../db/schema.js'

/**
 * Where an event sits in its store's feed. PostgreSQL: the id of the transaction that wrote
 * it (xid8, as decimal text) and its sequence number. SQLite: xid is always '0', and seq,
 * taken under its single writer, is the order of commits.
 */
export interface EventPosition {
  xid: string
  seq: number
}

/** The position before every event: where the feed of an empty store starts. */
export const START: EventPosition = { xid: '0', seq: 0 }

/** An event as stored; object and previous are rows as JSON (text on SQLite). */
export interface EventRow extends EventPosition {
  id: string
  type: string
  object: string | Record<string, unknown>
  previous: string | Record<string, unknown> | null
  created_at: string | Date
}

export interface EventPageQuery {
  storeId: string
  /** The page starts just after this position. */
  after: EventPosition
  type: string | undefined
  limit: number
}

/**
 * The statements of the feed that differ between the databases (positions are (xid, seq) on
 * PostgreSQL, seq alone on SQLite): one implementation per dialect, picked by the executor's.
 */
export interface EventQueries {
  /**
   * Where the feed is read up to now (PostgreSQL: the oldest transaction of the database
   * still running, see event-queries.postgres.ts); undefined on SQLite, which holds nothing
   * back. Passed to both reads of a page, so that they agree on what was held back.
   */
  findHorizon(db: Executor): Promise<string | undefined>
  /** The store's events after a position, in position order, below the horizon only. */
  findEventRows(
    db: Executor,
    query: EventPageQuery,
    horizon: string | undefined,
  ): Promise<EventRow[]>
  /**
   * Whether the store has a committed event after `after` (of `type`, if given) that
   * findEventRows held back at `horizon`, because a transaction older than its own was still
   * running. Such an event is read once the horizon has moved past it.
   */
  hasHeldBackEvent(
    db: Executor,
    query: Omit<EventPageQuery, 'limit'>,
    horizon: string | undefined,
  ): Promise<boolean>
  /** Whether the store has an event at exactly this position (one probe of its primary key). */
  hasEventAt(db: Executor, storeId: string, position: EventPosition): Promise<boolean>
  /** The position of the last event of the store deleted by retention; undefined when none was. */
  findPrunedThrough(db: Executor, storeId: string): Promise<EventPosition | undefined>
  /**
   * The store's oldest events, at most `limit`, with their times: what retention may delete
   * next (of finished transactions only, as the feed reads them).
   */
  findOldestEvents(
    db: Executor,
    storeId: string,
    limit: number,
  ): Promise<(EventPosition & { created_at: string | Date })[]>
  /**
   * Deletes the store's events up to `through` (included) and records it as how far the store
   * was pruned: a cursor before it is expired. Run in one transaction.
   */
  deleteEventsThrough(db: Executor, storeId: string, through: EventPosition): Promise<number>
}
