import { isUtf8 } from 'node:buffer'
import { parse, type CsvError } from 'csv-parse'

/** One record of the file, numbered as a spreadsheet shows it (the header is row 1). */
export interface CsvRecord {
  kind: 'record'
  row: number
  fields: string[]
  /** Whether some byte of the record is not UTF-8 (the parser read it as U+FFFD). */
  invalidUtf8: boolean
  /** Bytes of the file read up to the end of this record. */
  bytes: number
}

/** The file cannot be read as CSV from this row on. */
export interface CsvFailure {
  kind: 'failure'
  row: number
  message: string
  /** The fields of the unreadable record that were read before it failed (maybe none). */
  fields: string[]
}

/**
 * Largest record (all its fields) read: a field may be large (a 1 MiB description is read,
 * then refused by the field rules), but an unterminated quote must not hold the rest of a
 * 64 MiB file in memory.
 */
export const MAX_RECORD_BYTES = 4 * 1024 * 1024

/**
 * The records of a CSV byte stream (RFC 4180: quotes, escaped quotes, line breaks in quoted
 * fields, CRLF or LF, a BOM), parsed by csv-parse, pulled one chunk at a time: the input is
 * read only as fast as the records are consumed, so memory holds one chunk's records.
 *
 * Records are taken from csv-parse's on_record hook rather than its readable side: a parse
 * error destroys the stream, and the records of the last chunk before it would be lost with
 * its buffer. A record of one empty field (an empty line) is skipped, but counted as a row.
 */
export async function* readCsvRecords(
  input: AsyncIterable<Buffer | string>,
): AsyncGenerator<CsvRecord | CsvFailure> {
  let ready: CsvRecord[] = []
  let failure: CsvError | Error | undefined
  let recordsSeen = 0
  let previousBytes = 0
  const utf8 = new Utf8Check()
  const parser = parse({
    bom: true,
    relax_column_count: true,
    skip_empty_lines: false,
    max_record_size: MAX_RECORD_BYTES,
    on_record: (fields: string[], context) => {
      recordsSeen = context.records
      const start = previousBytes
      previousBytes = context.bytes
      const invalidUtf8 = !utf8.isUtf8Between(start, context.bytes)
      if (fields.length === 1 && fields[0] === '') return null
      ready.push({
        kind: 'record',
        row: context.records,
        fields,
        invalidUtf8,
        bytes: context.bytes,
      })
      return null
    },
  })
  parser.on('error', (error) => {
    failure ??= error
  })
  parser.resume()
  const write = (chunk: Buffer) =>
    new Promise<void>((resolve) => parser.write(chunk, () => resolve()))
  const failed = (): CsvFailure => ({
    kind: 'failure',
    row: recordsSeen + 1,
    message: describeCsvError(failure!),
    // csv-parse keeps the record it is reading in its state (the stream's `state`).
    fields: ((parser as unknown as { state?: { record?: unknown[] } }).state?.record ?? []).map(
      String,
    ),
  })

  for await (const piece of input) {
    const chunk = typeof piece === 'string' ? Buffer.from(piece) : piece
    utf8.push(chunk)
    await write(chunk)
    const records = ready
    ready = []
    yield* records
    if (failure) {
      yield failed()
      parser.destroy()
      return
    }
  }
  await new Promise<void>((resolve) => {
    parser.once('close', resolve)
    parser.once('error', () => resolve())
    parser.end()
  })
  yield* ready
  if (failure) yield failed()
}

function describeCsvError(error: Error): string {
  switch ((error as CsvError).code) {
    case 'CSV_QUOTE_NOT_CLOSED':
      return 'a quoted field is not closed before the end of the file'
    case 'CSV_MAX_RECORD_SIZE':
      return `a record is larger than ${MAX_RECORD_BYTES} bytes (is a quote left open?)`
    case 'CSV_INVALID_CLOSING_QUOTE':
      return 'a quoted field is followed by characters other than a delimiter or a line break'
    default:
      return `the file cannot be read as CSV: ${error.message.split(':')[0]}`
  }
}

/**
 * Whether each record's bytes are UTF-8, checked on the raw bytes by Node's own validator
 * (`isUtf8`: a stray continuation byte, an overlong form, a surrogate, a code point past
 * U+10FFFF, a sequence cut short). csv-parse decodes as Node does, replacing such bytes with
 * U+FFFD, which a valid file may also hold. Each chunk is checked whole (joined to the start of
 * a sequence the previous one cut); only when that fails are its records checked one by one.
 * It keeps the bytes of the record being read, which the parser holds too (up to 4 MiB).
 */
class Utf8Check {
  /** The stream's bytes from `piecesStart` on, as they came. */
  private pieces: Buffer[] = []
  private piecesStart = 0
  private end = 0
  /** The bytes before this are checked (or forgotten); it is where a character ends. */
  private validUpTo = 0

  push(chunk: Buffer): void {
    this.pieces.push(chunk)
    this.end += chunk.length
    const unchecked = this.bytes(this.validUpTo, this.end)
    const whole = unchecked.length - cutSequenceLength(unchecked)
    if (isUtf8(unchecked.subarray(0, whole))) this.validUpTo += whole
  }

  /**
   * Whether the bytes [start, end) of the stream, all pushed, are UTF-8 (`end` where a record
   * ends: after a line break, or at the end of the stream). Forgets the bytes before `end`.
   */
  isUtf8Between(start: number, end: number): boolean {
    const valid = end <= this.validUpTo || isUtf8(this.bytes(start, end))
    while (this.pieces.length > 0 && this.piecesStart + this.pieces[0]!.length <= end) {
      this.piecesStart += this.pieces.shift()!.length
    }
    this.validUpTo = Math.max(this.validUpTo, end)
    return valid
  }

  private bytes(from: number, to: number): Buffer {
    const parts: Buffer[] = []
    let offset = this.piecesStart
    for (const piece of this.pieces) {
      if (offset + piece.length > from && offset < to) {
        parts.push(piece.subarray(Math.max(0, from - offset), Math.min(piece.length, to - offset)))
      }
      offset += piece.length
    }
    return parts.length === 1 ? parts[0]! : Buffer.concat(parts)
  }
}

/**
 * How many bytes at the end of `bytes` start a sequence that needs more bytes than follow it
 * (the next chunk may finish it): 0 to 3.
 */
function cutSequenceLength(bytes: Buffer): number {
  for (let back = 1; back <= Math.min(3, bytes.length); back++) {
    const byte = bytes[bytes.length - back]!
    if ((byte & 0xc0) === 0x80) continue
    const length = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1
    return length > back ? back : 0
  }
  return 0
}
