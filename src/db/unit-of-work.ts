import type { Executor } from './schema.js'

/**
 * A write of the catalogue: one unit of work, run by `database.write` (or by the
 * idempotency writer, in the same transaction as its record). Whatever a change must also
 * record (an event, say) is one more step inside it.
 */
export type Work<T> = (db: Executor) => Promise<T>

/** What a delete answers: the id of the record that is gone. */
export interface Deleted {
  id: string
  deleted: true
}
