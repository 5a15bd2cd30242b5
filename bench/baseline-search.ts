/**
 * The search bench's additions to the bare baseline (baseline-server.ts), which then runs on
 * the service's own migrated and loaded database (BASELINE_SCHEMA=service):
 *
 * - The search route (BASELINE_SEARCH, a JSON file the search bench wrote): `GET products`
 *   with `q` runs the statements the service ran for that query, captured as compiled SQL with
 *   their values, prepared once; q goes into the engine's match in place of the captured word
 *   (the bench sends one lowercase word). Page rows and facet rows are answered as the driver
 *   returns them: no cursor, no mapping, no sorting of the counts.
 * - The document write (BASELINE_DOCUMENTS=1): a create also inserts its product's
 *   `product_search` row (SQLite's FTS5 trigger, or PostgreSQL's generated tsvector and its
 *   GIN index, do the rest), a PATCH updates the name's words; words folded as plain
 *   lowercase split at anything but [a-z0-9] (the service folds with any-ascii first).
 *
 * Self-contained like baseline-server.ts: servers.ts transpiles both.
 */
import { readFileSync } from 'node:fs'

type Body = Record<string, unknown>

export interface CapturedSearch {
  /** Compiled SQL with `?` (SQLite) or `$n` (PostgreSQL) marks, and the values it ran with. */
  statements: { sql: string; parameters: unknown[] }[]
  /** The engine's match among the values (`"word"*`, `word:*`), and the word in it. */
  match: string
  word: string
}

export function readCapturedSearch(path: string): CapturedSearch {
  return JSON.parse(readFileSync(path, 'utf8')) as CapturedSearch
}

/** A captured statement's values for `q`: the match with q in place of the captured word. */
export function searchValues(
  search: CapturedSearch,
  statement: CapturedSearch['statements'][number],
  q: string,
): unknown[] {
  const match = search.match.replace(search.word, q)
  return statement.parameters.map((value) => (value === search.match ? match : value))
}

const words = (...texts: unknown[]) =>
  texts
    .filter((text): text is string => typeof text === 'string')
    .flatMap((text) => text.toLowerCase().split(/[^a-z0-9]+/))
    .filter((word) => word !== '')
    .join(' ')

const name = (body: Body) => (typeof body.name === 'string' ? body.name : null)

/**
 * The document's statement of a write, with `?` marks, and its values from the write's: on
 * SQLite a statement of the write's transaction, on PostgreSQL a further data-modifying CTE
 * of the write's one statement.
 */
export const DOCUMENT_WRITES: Partial<
  Record<string, { sql: string; values: (values: unknown[], body: Body) => unknown[] }>
> = {
  insertProduct: {
    sql: `insert into product_search (store_id, product_id, name_words, other_words, name_key, codes)
      values (?, ?, ?, ?, ?, ?)`,
    // The store and id are the insert's first values; the slug (the id) its fourth. No sku or
    // barcode in the bench's creates.
    values: (values, body) => [
      values[0],
      values[1],
      words(body.name),
      words(body.description, values[3]),
      (name(body) ?? '').toLowerCase(),
      '',
    ],
  },
  updateProduct: {
    sql: `update product_search set name_words = coalesce(?, name_words),
      name_key = coalesce(?, name_key) where store_id = ? and product_id = ?`,
    // The update's key is its last two values.
    values: (values, body) => [
      name(body) === null ? null : words(body.name),
      name(body)?.toLowerCase() ?? null,
      ...values.slice(-2),
    ],
  },
}
