import { CompiledQuery, type Kysely, type Transaction } from 'kysely'

type Work<DB, T> = (tx: Transaction<DB>) => Promise<T>

interface Pending<DB> {
  work: Work<DB, unknown>
  resolve: (value: unknown) => void
  reject: (error: unknown) => void
  alone: boolean
  durable: boolean
}

export interface UnitOptions {
  /**
   * A long unit (an import's batch of products) is committed in a transaction of its own:
   * the units queued with it commit before it starts, instead of waiting for it.
   */
  alone?: boolean
  /**
   * false: a crash of the machine (not of the process) may lose this unit's commit, which is
   * not synced to the disk unless a durable unit shares it; true by default. Only for writes
   * whose loss repeats work and answers nobody: the webhook dispatcher's claims and outcomes
   * (a lost one means an attempt made again, which at-least-once delivery allows). The next
   * durable commit's sync makes it durable too. PostgreSQL commits every write durably: its
   * concurrent commits already share WAL flushes, and an asynchronous commit there would be
   * lost to a crash of the server too, sending every attempt of its last moments again.
   */
  durable?: boolean
}

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown }

/**
 * Group commit for SQLite. With `synchronous=FULL` every commit waits for an fsync, which
 * costs as much as dozens of inserts: committing each request on its own caps writes at a
 * few thousand a second. Instead, the units of work that arrive together run in one
 * transaction, each inside its own savepoint, and share its one commit:
 *
 * - a unit that fails is rolled back to its savepoint and rejected alone; the others stand;
 * - no unit resolves before the commit that holds it has returned, so an answer sent on
 *   its result is durable;
 * - if the commit itself fails, every unit of the batch is rejected.
 *
 * A batch starts on the event loop's next check phase (setImmediate), after the requests
 * that were ready to read have queued their work; more arrive while it runs (better-sqlite3
 * holds the loop during the fsync) and form the next batch. An idle service commits a lone
 * request at once: there is no timer to wait for.
 *
 * A batch made only of units that need not be durable (`durable: false`) commits without the
 * fsync: the webhook dispatcher's writes, which found no request's batch to join, would
 * otherwise hold the loop for a sync of their own several hundred times a second.
 */
export function createGroupCommit<DB>(
  kysely: Kysely<DB>,
  options: {
    maxBatch?: number
    onBatch?: (size: number) => void
    /**
     * Called with true before a batch whose units are all `durable: false`, and with false
     * after it: the connection's commit then need not wait for the disk (SQLite's
     * synchronous=NORMAL), and must again after.
     */
    relaxSync?: (relaxed: boolean) => void
  } = {},
): <T>(work: Work<DB, T>, options?: UnitOptions) => Promise<T> {
  const maxBatch = options.maxBatch ?? 256
  let queue: Pending<DB>[] = []
  let scheduled = false
  let running = false

  const schedule = () => {
    if (scheduled || running) return
    scheduled = true
    setImmediate(drain)
  }

  const drain = async () => {
    scheduled = false
    running = true
    try {
      while (queue.length > 0) {
        const batch = queue.slice(0, batchLength(queue, maxBatch))
        queue = queue.slice(batch.length)
        options.onBatch?.(batch.length)
        const relax = batch.every((unit) => !unit.durable) ? options.relaxSync : undefined
        await runBatch(kysely, batch, relax)
      }
    } finally {
      running = false
      if (queue.length > 0) schedule()
    }
  }

  return <T>(work: Work<DB, T>, options: UnitOptions = {}) =>
    new Promise<T>((resolve, reject) => {
      const { alone = false, durable = true } = options
      queue.push({ work, resolve: resolve as (value: unknown) => void, reject, alone, durable })
      schedule()
    })
}

/** How many units of the queue the next batch takes: a unit alone, or those before one. */
function batchLength<DB>(queue: Pending<DB>[], maxBatch: number): number {
  if (queue[0]!.alone) return 1
  let length = 1
  while (length < queue.length && length < maxBatch && !queue[length]!.alone) length++
  return length
}

/** Runs `batch` in one transaction; `relaxSync`, when given, around it (see createGroupCommit). */
async function runBatch<DB>(
  kysely: Kysely<DB>,
  batch: Pending<DB>[],
  relaxSync?: (relaxed: boolean) => void,
): Promise<void> {
  let outcomes: Outcome[]
  try {
    relaxSync?.(true)
    try {
      outcomes = await kysely.transaction().execute(async (tx) => {
        if (batch.length === 1) return [await runAlone(tx, batch[0]!)]
        const results: Outcome[] = []
        for (const pending of batch) results.push(await runInSavepoint(tx, pending))
        return results
      })
    } finally {
      relaxSync?.(false)
    }
  } catch (error) {
    // The transaction could not begin or commit (or the connection's setting be changed:
    // it is closed): nothing of the batch is durable.
    for (const pending of batch) pending.reject(error)
    return
  }
  batch.forEach((pending, i) => {
    const outcome = outcomes[i]!
    if (outcome.ok) pending.resolve(outcome.value)
    else pending.reject(outcome.error)
  })
}

/** A batch of one needs no savepoint: its failure rolls back the whole transaction. */
async function runAlone<DB>(tx: Transaction<DB>, pending: Pending<DB>): Promise<Outcome> {
  const value = await pending.work(tx)
  return { ok: true, value }
}

const SAVEPOINT = CompiledQuery.raw('savepoint unit')
const RELEASE = CompiledQuery.raw('release unit')
const ROLLBACK = CompiledQuery.raw('rollback to unit')

async function runInSavepoint<DB>(tx: Transaction<DB>, pending: Pending<DB>): Promise<Outcome> {
  await tx.executeQuery(SAVEPOINT)
  try {
    const value = await pending.work(tx)
    await tx.executeQuery(RELEASE)
    return { ok: true, value }
  } catch (error) {
    await tx.executeQuery(ROLLBACK)
    await tx.executeQuery(RELEASE)
    return { ok: false, error }
  }
}
