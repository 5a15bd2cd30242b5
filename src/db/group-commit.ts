import { CompiledQuery, type Kysely, type Transaction } from 'kysely'

type Work<DB, T> = (tx: Transaction<DB>) => Promise<T>

interface Pending<DB> {
  work: Work<DB, unknown>
  resolve: (value: unknown) => void
  reject: (error: unknown) => void
  alone: boolean
}

export interface UnitOptions {
  /**
   * A long unit (an import's batch of products) is committed in a transaction of its own:
   * the units queued with it commit before it starts, instead of waiting for it.
   */
  alone?: boolean
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
 */
export function createGroupCommit<DB>(
  kysely: Kysely<DB>,
  options: { maxBatch?: number; onBatch?: (size: number) => void } = {},
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
        await runBatch(kysely, batch)
      }
    } finally {
      running = false
      if (queue.length > 0) schedule()
    }
  }

  return <T>(work: Work<DB, T>, options: UnitOptions = {}) =>
    new Promise<T>((resolve, reject) => {
      const alone = options.alone ?? false
      queue.push({ work, resolve: resolve as (value: unknown) => void, reject, alone })
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

async function runBatch<DB>(kysely: Kysely<DB>, batch: Pending<DB>[]): Promise<void> {
  let outcomes: Outcome[]
  try {
    outcomes = await kysely.transaction().execute(async (tx) => {
      if (batch.length === 1) return [await runAlone(tx, batch[0]!)]
      const results: Outcome[] = []
      for (const pending of batch) results.push(await runInSavepoint(tx, pending))
      return results
    })
  } catch (error) {
    // The transaction could not begin or commit: nothing of the batch is durable.
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
