import { CompiledQuery } from 'kysely'
import { isPostgres } from './dialect.js'
import type { Executor } from './schema.js'
import { inPieces } from './values.js'

/** The statement texts made so far: a few per table (one per piece size of inPieces). */
const texts = new Map<string, string>()

/**
 * Inserts rows (each the values of `columns`, in order) with multi-row statements, in pieces
 * of inPieces' sizes, `conflict` (an `on conflict ...` clause) after each. The SQL text is
 * written once per table, columns, clause and number of rows, and the values passed as they
 * are: Kysely's builder makes and freezes a node per value and compiles the statement anew
 * each time, which for 256 rows of 14 values cost more than running it (an import's
 * batches). Table, columns and clause are the caller's constants, never input.
 */
export async function insertRows(
  db: Executor,
  table: string,
  columns: readonly string[],
  rows: readonly (readonly unknown[])[],
  conflict = '',
): Promise<void> {
  const postgres = isPostgres(db)
  for (const piece of inPieces(rows, columns.length)) {
    const key = `${postgres ? 'pg' : 'sqlite'}|${table}|${columns.join(',')}|${conflict}|${piece.length}`
    let text = texts.get(key)
    if (text === undefined) {
      let n = 0
      const row = () => `(${columns.map(() => (postgres ? `$${++n}` : '?')).join(', ')})`
      const values = Array.from({ length: piece.length }, row).join(', ')
      text = `insert into ${table} (${columns.join(', ')}) values ${values} ${conflict}`.trim()
      texts.set(key, text)
    }
    await db.executeQuery(CompiledQuery.raw(text, piece.flat()))
  }
}
