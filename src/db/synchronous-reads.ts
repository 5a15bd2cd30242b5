import type { Executor } from './schema.js'

/** Runs a read on the connection now, or answers undefined when that is not safe. */
export type SynchronousReader = (
  sql: string,
  parameters: readonly unknown[],
) => unknown[] | undefined

/**
 * SQLite answers a point read in a few microseconds, less than Kysely's asynchronous path
 * around it (the connection's lock, a chain of promises): under load a product read ran at
 * about 0.9x the CPU with reads made at once (docs/decisions/0017-hot-path-statements.md). The embedded database
 * registers its reader here; precompiled reads on that instance use it.
 */
const readers = new WeakMap<Executor, SynchronousReader>()

export function registerSynchronousReader(db: Executor, reader: SynchronousReader): void {
  readers.set(db, reader)
}

/**
 * The rows of a read run at once on `db`'s connection, or undefined when `db` has no such
 * reader (PostgreSQL, a transaction) or it declined.
 */
export function readSynchronously(
  db: Executor,
  sql: string,
  parameters: readonly unknown[],
): unknown[] | undefined {
  return readers.get(db)?.(sql, parameters)
}
