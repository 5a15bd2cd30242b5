import SqliteDatabase from '../src/db/sqlite-driver.js'
import { withClient } from './postgres.js'

export type CountedTable = 'products' | 'variants'

/** What a write scenario's writes add to: rows (creates) or the sum of `version` (updates). */
export type StoredFigure = 'rows' | 'versions'

/**
 * Rows of a table, or the sum of their versions, read straight from a server's database
 * while it runs: a 200 must mean a committed row (or a committed change, which moves its
 * row's version by 1), so a window's acknowledged writes must all be found there.
 */
export async function countStored(
  databaseUrl: string,
  { table, what }: { table: CountedTable; what: StoredFigure },
): Promise<number> {
  const figure = what === 'rows' ? 'count(*)' : 'coalesce(sum(version), 0)'
  if (databaseUrl.startsWith('sqlite:')) {
    const db = new SqliteDatabase(databaseUrl.slice('sqlite:'.length), { readonly: true })
    try {
      return db.prepare(`select ${figure} from ${table}`).pluck().get() as number
    } finally {
      db.close()
    }
  }
  return withClient(databaseUrl, async (client) => {
    const result = await client.query<{ n: string }>(`select ${figure} as n from ${table}`)
    return Number(result.rows[0]?.n ?? 0)
  })
}
