import type { RawBuilder } from 'kysely'
import pg from 'pg'
import { uuidv7 } from 'uuidv7'
import { dialectOf } from './dialect.js'
import type { Executor } from './schema.js'

/** A new row id: a UUIDv7, lowercase, time-ordered so that new rows land together in indexes. */
export function newId(): string {
  return uuidv7()
}

const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

export function isUuid(value: string): boolean {
  return UUID_PATTERN.test(value)
}

export function nowIso(): string {
  return new Date().toISOString()
}

/** A timestamp column as ISO 8601 UTC with milliseconds, whichever dialect read it. */
export function toIso(value: Date | string): string {
  if (typeof value !== 'string') return value.toISOString()
  // SQLite's columns hold the ISO strings that were written.
  return value.length === 24 && value.endsWith('Z') ? value : isoFromPostgres(value)
}

const PG_TIMESTAMPTZ = 1184
const parsePostgresTimestamp = pg.types.getTypeParser(PG_TIMESTAMPTZ) as (text: string) => Date

/** PostgreSQL's text of a UTC timestamptz, as a row ("2026-11-22 05:18:27.67+00") or JSON has it. */
const POSTGRES_UTC = /^(\d{4}-\d\d-\d\d)[ T](\d\d:\d\d:\d\d)(?:\.(\d{1,6}))?\+00(?::00)?$/

/**
 * A timestamptz as PostgreSQL writes it, in a column or in JSON, as ISO 8601 UTC with
 * milliseconds, truncated like Date would. A session in UTC (the usual) takes the fast way,
 * without a Date; any other time zone goes through pg's own parser.
 */
export function isoFromPostgres(text: string): string {
  const utc = POSTGRES_UTC.exec(text)
  if (utc === null) return parsePostgresTimestamp(text.replace('T', ' ')).toISOString()
  const [, date, time, fraction = ''] = utc
  return `${date}T${time}.${(fraction + '000').slice(0, 3)}Z`
}

/**
 * Rows cut into pieces for multi-row inserts: as many pieces of the largest size as fit,
 * then the rest by powers of two (100 rows: 64, 32, 4). A statement is compiled (and, on
 * SQLite, prepared and cached) per number of rows, so these few sizes keep the statements
 * few whatever the batches' lengths. The largest size keeps a statement under 30,000
 * parameters (SQLite takes 32,766 at most, PostgreSQL 65,535) and 256 rows.
 */
export function inPieces<T>(rows: readonly T[], columns: number): T[][] {
  let size = 256
  while (size > 1 && size * columns > 30_000) size /= 2
  const pieces: T[][] = []
  let start = 0
  while (start < rows.length) {
    while (size > 1 && rows.length - start < size) size /= 2
    pieces.push(rows.slice(start, start + size))
    start += size
  }
  return pieces
}

/** SqlDialect.inList on `db`'s dialect: `column in (values)` with the values as one parameter. */
export function inList(
  db: Executor,
  column: string,
  type: 'text' | 'uuid',
  values: readonly string[],
): RawBuilder<boolean> {
  return dialectOf(db).inList(column, type, values)
}
