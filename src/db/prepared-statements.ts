import type pg from 'pg'

/**
 * Names for the SQL texts of the hot queries (see precompiled.ts), so that PostgreSQL parses
 * and plans each once per connection instead of on every request: a query sent with a name
 * is prepared the first time a connection sees it, then only bound and executed.
 *
 * Only registered texts are named. The set is small and fixed (a few dozen shapes), so the
 * statements each connection keeps cannot grow without bound.
 */
const names = new Map<string, string>()

export function registerPreparedStatement(text: string): void {
  if (!names.has(text)) names.set(text, `catalog_${names.size + 1}`)
}

export function preparedStatementName(text: string): string | undefined {
  return names.get(text)
}

/** The subset of pg.Pool that Kysely's PostgreSQL driver uses. */
interface KyselyPool {
  connect(): Promise<KyselyPoolClient>
  end(): Promise<void>
}

interface KyselyPoolClient {
  query: pg.PoolClient['query']
  release(error?: Error | boolean): void
}

/**
 * The pool as Kysely sees it: each client it checks out sends registered texts as named
 * statements, and everything else (streams, other texts) as before.
 */
export function withPreparedStatements(pool: pg.Pool): KyselyPool {
  const clients = new WeakMap<pg.PoolClient, KyselyPoolClient>()
  const wrap = (client: pg.PoolClient): KyselyPoolClient => {
    const query = ((config: unknown, values?: unknown, callback?: unknown) => {
      const name = typeof config === 'string' ? names.get(config) : undefined
      if (name === undefined || typeof values === 'function') {
        return (client.query as (...args: unknown[]) => unknown)(config, values, callback)
      }
      return client.query({ name, text: config as string, values: values as unknown[] })
    }) as pg.PoolClient['query']
    return { query, release: (error) => client.release(error) }
  }
  return {
    connect: async () => {
      const client = await pool.connect()
      let wrapped = clients.get(client)
      if (wrapped === undefined) {
        wrapped = wrap(client)
        clients.set(client, wrapped)
      }
      return wrapped
    },
    end: () => pool.end(),
  }
}
