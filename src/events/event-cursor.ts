import { validationFailed, type AppError } from '../errors.js'
import type { EventPosition } from './event-queries.js'

/**
 * The opaque cursor of the event feed: base64url of `e1.<xid>.<seq>`, the position of the
 * last event of a page. Decoding accepts only what encoding makes, byte for byte.
 */
export function encodeEventCursor(position: EventPosition): string {
  return Buffer.from(`e1.${position.xid}.${position.seq}`).toString('base64url')
}

const CURSOR_TEXT = /^e1\.(0|[1-9]\d{0,19})\.(0|[1-9]\d{0,15})$/

/** A position from a cursor; 400 validation_failed for anything this service did not make. */
export function decodeEventCursor(cursor: string): EventPosition {
  const match = CURSOR_TEXT.exec(Buffer.from(cursor, 'base64url').toString('latin1'))
  if (match) {
    const xid = match[1]!
    const seq = Number(match[2])
    const position = { xid, seq }
    if (
      BigInt(xid) < 2n ** 64n &&
      Number.isSafeInteger(seq) &&
      encodeEventCursor(position) === cursor
    ) {
      return position
    }
  }
  throw cursorNotMade()
}

/**
 * 400 for a cursor that decodes but names no place the store's feed has handed out: every
 * nextCursor is the start, the position of one of the store's events, or its pruning mark.
 */
export function cursorNotMade(): AppError {
  return validationFailed([
    { field: 'after', message: "must be a nextCursor from this store's event feed" },
  ])
}

/** Whether two positions are the same place in the feed. */
export function isSamePosition(a: EventPosition, b: EventPosition | undefined): boolean {
  return b !== undefined && a.seq === b.seq && BigInt(a.xid) === BigInt(b.xid)
}

/** Whether position a comes before position b in the feed. */
export function isBefore(a: EventPosition, b: EventPosition): boolean {
  const ax = BigInt(a.xid)
  const bx = BigInt(b.xid)
  return ax < bx || (ax === bx && a.seq < b.seq)
}
