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
      if (fields.length === 1 && fields[0] === '') return null
      ready.push({
        kind: 'record',
        row: context.records,
        fields,
        invalidUtf8: utf8.anyBetween(start, context.bytes),
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
 * Where a byte stream breaks UTF-8: byte offsets (of the whole stream) of the first bytes
 * that are not part of a valid sequence, so a record can be told it holds one. csv-parse
 * decodes as Node does, replacing such bytes with U+FFFD, which a valid file may also hold.
 */
class Utf8Check {
  private offset = 0
  /** Bytes still needed to finish the sequence started in an earlier chunk. */
  private pending = 0
  private readonly bad: number[] = []

  push(chunk: Buffer): void {
    const base = this.offset
    if (this.pending === 0 && isUtf8(chunk)) {
      this.offset += chunk.length
      return
    }
    let need = this.pending
    for (let i = 0; i < chunk.length; i++) {
      const byte = chunk[i]!
      if (need > 0) {
        if ((byte & 0xc0) === 0x80) {
          need--
          continue
        }
        this.mark(base + i)
        need = 0
      }
      if (byte < 0x80) continue
      if (byte >= 0xc2 && byte <= 0xdf) need = 1
      else if (byte >= 0xe0 && byte <= 0xef) need = 2
      else if (byte >= 0xf0 && byte <= 0xf4) need = 3
      else this.mark(base + i)
    }
    this.pending = need
    this.offset += chunk.length
  }

  private mark(at: number): void {
    if (this.bad.length < 100_000) this.bad.push(at)
  }

  /** Whether a bad byte lies in [start, end); forgets the ones before `end`. */
  anyBetween(start: number, end: number): boolean {
    let found = false
    while (this.bad.length > 0 && this.bad[0]! < end) {
      if (this.bad.shift()! >= start) found = true
    }
    return found
  }
}
