import type { ControlledTransaction, Transaction } from 'kysely'
import type { DB, Executor } from './schema.js'

/**
 * A read of many queries that sees one state of the database (Database.readSnapshot): run
 * them on `db`, and release it when done, also on error.
 */
export interface Snapshot {
  readonly db: Executor
  release(): Promise<void>
}

/** A snapshot read in a transaction: released by rolling it back (it wrote nothing). */
export function transactionSnapshot(
  transaction: ControlledTransaction<DB>,
  afterwards: () => Promise<void> = async () => {},
): Snapshot {
  return {
    db: transaction,
    release: async () => {
      try {
        await transaction.rollback().execute()
      } finally {
        await afterwards()
      }
    },
  }
}

/**
 * Runs `work` in a transaction: `db`'s own when it is one, else a new one. For a unit of work
 * run by `writeAtomic`, which tries a single statement first and needs a transaction only
 * when that did not settle it.
 */
export function inTransaction<T>(db: Executor, work: (tx: Transaction<DB>) => Promise<T>) {
  return db.isTransaction ? work(db as Transaction<DB>) : db.transaction().execute(work)
}
