import { CompiledQuery } from 'kysely'
import { dialectOf, type SqlDialect } from './dialect.js'
import type { Executor } from './schema.js'
import { keepStatementText, statementText } from './statements.js'
import { inPieces } from './values.js'

/**
 * Inserts rows (each the values of `columns`, in order) with multi-row statements, in pieces
 * of inPieces' sizes, `conflict` (an `on conflict ...` clause) after each. The SQL text is
 * written once per dialect, table, columns, clause and number of rows (statementText), and
 * the values passed as they are: Kysely's builder makes and freezes a node per value and
 * compiles the statement anew each time, which for 256 rows of 14 values cost more than
 * running it (an import's batches). Table, columns and clause are the caller's constants,
 * never input.
 */
export async function insertRows(
  db: Executor,
  table: string,
  columns: readonly string[],
  rows: readonly (readonly unknown[])[],
  conflict = '',
): Promise<void> {
  const dialect = dialectOf(db)
  for (const piece of inPieces(rows, columns.length)) {
    const key = `${dialect.name}|${table}|${columns.join(',')}|${conflict}|${piece.length}`
    const text =
      statementText(key) ??
      keepStatementText(key, insertText(dialect, table, columns, conflict, piece.length))
    await db.executeQuery(CompiledQuery.raw(text, piece.flat()))
  }
}

function insertText(
  dialect: SqlDialect,
  table: string,
  columns: readonly string[],
  conflict: string,
  rows: number,
): string {
  let n = 0
  const row = () => `(${columns.map(() => dialect.placeholder(++n)).join(', ')})`
  const values = Array.from({ length: rows }, row).join(', ')
  return `insert into ${table} (${columns.join(', ')}) values ${values} ${conflict}`.trim()
}
