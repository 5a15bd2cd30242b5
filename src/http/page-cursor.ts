import { isUuid, toIso } from '../db/values.js'
import { validationFailed } from '../errors.js'

/** Where a page of products ends: the sort key of its last product. */
export interface PagePosition {
  createdAt: string
  id: string
}

/** A creation time as the service writes it: years 1970 to 9999, milliseconds, UTC. */
const TIMESTAMP = /^(19[7-9]\d|[2-9]\d{3})-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/

/** The opaque `nextCursor` handed to clients: base64url of the sort key. */
export function encodeCursor(position: PagePosition): string {
  return Buffer.from(JSON.stringify([position.createdAt, position.id])).toString('base64url')
}

/**
 * A page of a list read newest first by (created_at, id): `rows` as read with a limit one
 * above `limit`, so that a row beyond the page says whether another page exists.
 */
export function pageOf<R extends { created_at: string | Date; id: string }, T>(
  rows: R[],
  limit: number,
  toItem: (row: R) => T,
): { data: T[]; nextCursor: string | null } {
  const page = rows.slice(0, limit)
  const last = page.at(-1)
  return {
    data: page.map(toItem),
    nextCursor:
      rows.length > limit && last
        ? encodeCursor({ createdAt: toIso(last.created_at), id: last.id })
        : null,
  }
}

export function decodeCursor(cursor: string): PagePosition {
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'))
    if (Array.isArray(value) && value.length === 2) {
      const [createdAt, id] = value as unknown[]
      if (
        typeof createdAt === 'string' &&
        typeof id === 'string' &&
        isUuid(id) &&
        TIMESTAMP.test(createdAt) &&
        new Date(createdAt).toISOString() === createdAt &&
        encodeCursor({ createdAt, id }) === cursor
      ) {
        return { createdAt, id: id.toLowerCase() }
      }
    }
  } catch {
    // fall through: not a cursor this service made
  }
  throw validationFailed([
    { field: 'cursor', message: 'must be a nextCursor from a previous page' },
  ])
}
