import pg from 'pg'
import { uuidv7 } from 'uuidv7'

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
 * Rows cut into pieces whose parameters fit one statement: SQLite takes 32,766 at most,
 * PostgreSQL 65,535; a multi-row insert of `columns` values a row stays under 30,000.
 */
export function inPieces<T>(rows: readonly T[], columns: number): T[][] {
  const size = Math.max(1, Math.floor(30_000 / columns))
  const pieces: T[][] = []
  for (let start = 0; start < rows.length; start += size)
    pieces.push(rows.slice(start, start + size))
  return pieces
}
