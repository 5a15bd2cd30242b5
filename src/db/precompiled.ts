import { randomBytes } from 'node:crypto'
import type { Compilable, CompiledQuery } from 'kysely'
import { registerPreparedStatement } from './prepared-statements.js'
import type { Executor } from './schema.js'
import { readSynchronously } from './synchronous-reads.js'

/**
 * A hot query of fixed shape, built and compiled by Kysely once per dialect, then run with
 * new parameter values. On a point query, building and compiling costs more than SQLite
 * takes to answer it; the same SQL text each time also lets SQLite reuse its prepared
 * statement and PostgreSQL its named one (prepared-statements.ts). On SQLite a read runs at
 * once where it safely can (synchronous-reads.ts).
 *
 * `build` receives a stand-in for each parameter and must use each only as a value (never
 * branch on it): the stand-ins are found in the compiled parameters and replaced.
 */
export function precompiled<P extends unknown[], R>(
  build: (db: Executor, ...params: P) => Compilable<R>,
): Precompiled<P, R> {
  const compiledByAdapter = new Map<
    unknown,
    { query: CompiledQuery<R>; sources: number[]; read: boolean }
  >()
  const tag = randomBytes(8).toString('hex')
  const bind = (db: Executor, params: P) => {
    const adapter = db.getExecutor().adapter.constructor
    let compiled = compiledByAdapter.get(adapter)
    if (compiled === undefined) {
      const standIns = params.map((_, i) => `\u0000${tag}:${i}`)
      const query = build(db, ...(standIns as P)).compile()
      // Constants the builder wrote itself keep their value: their source is -1.
      const sources = query.parameters.map((value) => standIns.indexOf(value as string))
      compiled = { query, sources, read: query.query.kind === 'SelectQueryNode' }
      registerPreparedStatement(query.sql)
      compiledByAdapter.set(adapter, compiled)
    }
    const { query, sources, read } = compiled
    const parameters = sources.map((source, i) =>
      source < 0 ? query.parameters[i] : params[source],
    )
    return { query, parameters, read }
  }
  const run = async (db: Executor, ...params: P): Promise<R[]> => {
    const { query, parameters, read } = bind(db, params)
    const rows = read ? readSynchronously(db, query.sql, parameters) : undefined
    if (rows !== undefined) return rows as R[]
    const result = await db.executeQuery<R>({ ...query, parameters })
    return result.rows
  }
  return Object.assign(run, {
    now: (db: Executor, ...params: P): R[] | undefined => {
      const { query, parameters, read } = bind(db, params)
      return read ? (readSynchronously(db, query.sql, parameters) as R[] | undefined) : undefined
    },
  })
}

/** A precompiled query: run it, or, for a read, try to run it at once (see `now`). */
export interface Precompiled<P extends unknown[], R> {
  (db: Executor, ...params: P): Promise<R[]>
  /**
   * The rows of the read, run at once on SQLite's connection when that is safe; undefined
   * when it is not (PostgreSQL, an open transaction), or the query is not a read. Two reads
   * run this way one after the other see the same commit: nothing else runs between them.
   */
  now(db: Executor, ...params: P): R[] | undefined
}
