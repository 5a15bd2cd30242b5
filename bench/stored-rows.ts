import SqliteDatabase from 'better-sqlite3'
import { withClient } from './postgres.js'

export type CountedTable = 'products' | 'variants'

/**
 * Rows of a table, read straight from a server's database while it runs: a 200 must mean
 * a committed row, so a window's acknowledged creates must all be found there.
 */
export async function countRows(databaseUrl: string, table: CountedTable): Promise<number> {
  if (databaseUrl.startsWith('sqlite:')) {
    const db = new SqliteDatabase(databaseUrl.slice('sqlite:'.length), { readonly: true })
    try {
      return db.prepare(`select count(*) from ${table}`).pluck().get() as number
    } finally {
      db.close()
    }
  }
  return withClient(databaseUrl, async (client) => {
    const result = await client.query<{ count: string }>(`select count(*) as count from ${table}`)
    return Number(result.rows[0]?.count ?? 0)
  })
}
