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
  return typeof value === 'string' ? value : value.toISOString()
}
