import {
  definitionTypes,
  LIST_SEPARATOR,
  parseMetafieldColumn,
  typeForColumnValues,
  valueFromCell,
} from '../attributes/metafield-columns.js'
import { createDefinitionWork } from '../attributes/metafield-definition.service.js'
import type { Database } from '../db/database.js'
import type { Executor } from '../db/schema.js'
import { readCsvRecords } from './csv-records.js'
import type { CsvRecord } from './csv-records.js'
import type { Header } from './shopify-columns.js'

/**
 * Keeps the header's metafield columns that have a definition of their owner, namespace and
 * key in the store (with its type), and counts the others among the columns not stored.
 */
export async function resolveMetafieldColumns(
  db: Executor,
  storeId: string,
  header: Header,
): Promise<void> {
  if (header.metafields.length === 0) return
  const types = await definitionTypes(db, storeId)
  const stored = []
  for (const column of header.metafields) {
    const type = types.get(`${column.owner}.${column.namespace}.${column.key}`)
    if (type === undefined) header.notStored.push(column.name)
    else stored.push({ ...column, type })
  }
  header.metafields = stored
}

/**
 * The metafields of one record's row for `owner`: each stored column's non-empty cell, read
 * as its type; with the column each came from, by field, for its errors.
 */
export function metafieldsOfRecord(
  header: Header,
  record: CsvRecord,
  owner: 'product' | 'variant',
): { values: Record<string, unknown>; columns: Record<string, string> } | undefined {
  let values: Record<string, unknown> | undefined
  const columns: Record<string, string> = {}
  for (const column of header.metafields) {
    if (column.owner !== owner || column.type === undefined) continue
    const text = record.fields[column.index] ?? ''
    if (text.trim() === '') continue
    const key = `${column.namespace}.${column.key}`
    values ??= {}
    values[key] = valueFromCell(column.type, text)
    columns[`metafields.${key}`] = column.name
  }
  return values && { values, columns }
}

/**
 * `catalog import --create-definitions`: reads the file once for its metafield columns and
 * creates the definitions the store lacks, named by the column's label. Answers the
 * definitions created, as `<owner>.<namespace>.<key>`.
 */
export async function createMissingDefinitions(
  database: Database,
  storeId: string,
  input: AsyncIterable<Buffer | string>,
): Promise<string[]> {
  let columns: ReturnType<typeof parseMetafieldColumn>[] = []
  const seen: { list: boolean; multiLine: boolean }[] = []
  let first = true
  for await (const item of readCsvRecords(input)) {
    if (item.kind !== 'record') break
    if (first) {
      first = false
      columns = item.fields.map((name, i) => parseMetafieldColumn(name, i))
      continue
    }
    columns.forEach((column, i) => {
      if (!column) return
      const text = item.fields[i] ?? ''
      const state = (seen[i] ??= { list: false, multiLine: false })
      if (text.includes(LIST_SEPARATOR)) state.list = true
      if (/[\r\n]/.test(text) || [...text].length > 5_000) state.multiLine = true
    })
  }
  const types = await definitionTypes(database.kysely, storeId)
  const created: string[] = []
  for (const [i, column] of columns.entries()) {
    if (!column) continue
    const fullName = `${column.owner}.${column.namespace}.${column.key}`
    if (types.has(fullName)) continue
    const type = typeForColumnValues(seen[i] ?? { list: false, multiLine: false })
    await database.write(
      createDefinitionWork(storeId, {
        owner: column.owner,
        namespace: column.namespace,
        key: column.key,
        type,
        name: column.label.slice(0, 255),
      }),
    )
    types.set(fullName, type)
    created.push(fullName)
  }
  return created
}
