import type { Executor, MetafieldDefinitionRow } from '../../db/schema.js'
import { validationFailed, type FieldProblem } from '../../errors.js'
import { storeDefinitions, type StoreDefinitions } from './definition-cache.js'
import {
  deleteIndexedValues,
  deleteProductIndexRows,
  replaceIndexedValues,
  type IndexedValue,
} from './metafield-value.repository.js'
import {
  checkValue,
  indexedItems,
  textsOf,
  valueRules,
  type MetafieldOwner,
  type MetafieldValues,
  type MetafieldType,
  type ValueRules,
  type Validations,
} from './metafield-types.js'

// Kept while src/search/documents/search-document.repository.ts imports the type from here.
export { type MetafieldValues } from './metafield-types.js'

/** A definition as the values of a write are checked and indexed with. */
interface LoadedDefinition {
  id: string
  rules: ValueRules
  filterable: boolean
  searchable: boolean
}

/**
 * Compiled rules by definition id and version: when the store's definitions change, only the
 * changed ones' patterns are compiled again.
 */
const compiledRules = new Map<string, ValueRules>()
const MAX_COMPILED = 10_000

function rulesOf(row: MetafieldDefinitionRow): ValueRules {
  const cacheKey = `${row.id}:${row.version}`
  let rules = compiledRules.get(cacheKey)
  if (rules === undefined) {
    const validations = (
      typeof row.validations === 'string' ? JSON.parse(row.validations) : row.validations
    ) as Validations
    rules = valueRules(row.type as MetafieldType, validations)
    if (compiledRules.size >= MAX_COMPILED) compiledRules.clear()
    compiledRules.set(cacheKey, rules)
  }
  return rules
}

const asBoolean = (value: boolean | number) => value === true || value === 1

/** Each owner's loaded definitions of a store's definitions, made once per stamp. */
const loadedOf = new WeakMap<StoreDefinitions, Map<MetafieldOwner, Map<string, LoadedDefinition>>>()

/**
 * The store's definitions of `owner`, by `<namespace>.<key>`, as they stand for the write on
 * `db` (definition-cache.ts: one stamp read per transaction).
 */
export async function loadDefinitions(
  db: Executor,
  storeId: string,
  owner: MetafieldOwner,
): Promise<Map<string, LoadedDefinition>> {
  const definitions = await storeDefinitions(db, storeId)
  let owners = loadedOf.get(definitions)
  if (owners === undefined) loadedOf.set(definitions, (owners = new Map()))
  let loaded = owners.get(owner)
  if (loaded === undefined) {
    loaded = new Map(
      definitions.rows
        .filter((row) => row.owner === owner)
        .map((row) => [
          `${row.namespace}.${row.key}`,
          {
            id: row.id,
            rules: rulesOf(row),
            filterable: asBoolean(row.filterable),
            searchable: asBoolean(row.searchable),
          },
        ]),
    )
    owners.set(owner, loaded)
  }
  return loaded
}

/** The outcome of a write's `metafields`: the record's values after it and their index. */
export interface MergedMetafields {
  values: MetafieldValues
  /** Whether any value differs from the stored ones. */
  changed: boolean
  /** The filter index rows of the record after the write. */
  indexed: IndexedValue[]
  /** The record's filter index rows before the write (replaced when they differ). */
  indexedBefore: IndexedValue[]
}

/**
 * Merges a create's or a PATCH's `metafields` into the stored values (merge patch per key:
 * a value sets, null removes, a key left out stays) and checks every key sent against the
 * store's definitions of `owner`: 400 `validation_failed` naming `metafields.<ns>.<key>`
 * for a key without a definition or a value its type or validations refuse.
 */
export async function mergeMetafields(
  db: Executor,
  storeId: string,
  owner: MetafieldOwner,
  current: MetafieldValues,
  sent: MetafieldValues,
): Promise<MergedMetafields> {
  const checked = await checkMetafields(db, storeId, owner, current, sent)
  if ('problems' in checked) throw validationFailed(checked.problems)
  return checked
}

/**
 * mergeMetafields without the throw: every problem of the keys sent (each named
 * `metafields.<ns>.<key>`), or the merged values. An import checks its rows with it, the
 * dry run as the real one, before it writes anything.
 */
export async function checkMetafields(
  db: Executor,
  storeId: string,
  owner: MetafieldOwner,
  current: MetafieldValues,
  sent: MetafieldValues,
): Promise<MergedMetafields | { problems: FieldProblem[] }> {
  const definitions = await loadDefinitions(db, storeId, owner)
  const values: MetafieldValues = { ...current }
  const problems: FieldProblem[] = []
  let changed = false
  for (const [key, value] of Object.entries(sent)) {
    const field = `metafields.${key}`
    const definition = definitions.get(key)
    if (definition === undefined) {
      problems.push({
        field,
        message: `no ${owner} metafield definition has this namespace and key`,
      })
      continue
    }
    if (value === null) {
      if (key in values) {
        delete values[key]
        changed = true
      }
      continue
    }
    const checked = checkValue(definition.rules, value)
    if ('problem' in checked) {
      problems.push({ field, message: checked.problem })
      continue
    }
    if (JSON.stringify(values[key]) !== JSON.stringify(checked.value)) changed = true
    values[key] = checked.value
  }
  if (problems.length > 0) return { problems }
  return {
    values,
    changed,
    indexed: indexRows(definitions, values),
    indexedBefore: indexRows(definitions, current),
  }
}

function indexRows(
  definitions: Map<string, LoadedDefinition>,
  values: MetafieldValues,
): IndexedValue[] {
  const rows: IndexedValue[] = []
  for (const [key, value] of Object.entries(values)) {
    const definition = definitions.get(key)
    if (!definition?.filterable) continue
    for (const item of indexedItems(value)) rows.push({ definitionId: definition.id, value: item })
  }
  return rows
}

/** Writes a record's filter index rows after a write of its values. */
export async function indexMetafields(
  db: Executor,
  record: { storeId: string; recordId: string; productId: string },
  merged: MergedMetafields,
): Promise<void> {
  const key = (rows: IndexedValue[]) =>
    rows
      .map((row) => `${row.definitionId} ${row.value}`)
      .sort()
      .join('\n')
  if (key(merged.indexed) === key(merged.indexedBefore)) return
  await replaceIndexedValues(db, record, merged.indexed, merged.indexedBefore.length > 0)
}

/**
 * Drops a deleted product's filter index rows, its variants' included (they carry its id),
 * in its delete's transaction: no foreign key removes them (decision 0040).
 */
export async function unindexProduct(
  db: Executor,
  storeId: string,
  productId: string,
): Promise<void> {
  await deleteProductIndexRows(db, storeId, productId)
}

/** Drops a deleted variant's filter index rows. */
export async function unindexRecord(
  db: Executor,
  storeId: string,
  recordId: string,
  values: MetafieldValues,
): Promise<void> {
  if (Object.keys(values).length > 0) await deleteIndexedValues(db, storeId, recordId)
}

/**
 * The text that `q` finds in a record's values: the text values of its searchable
 * definitions, one per line. For the search document.
 */
export async function searchableTextOf(
  db: Executor,
  storeId: string,
  owner: MetafieldOwner,
  values: MetafieldValues,
): Promise<string> {
  if (Object.keys(values).length === 0) return ''
  const definitions = await loadDefinitions(db, storeId, owner)
  const texts: string[] = []
  for (const [key, value] of Object.entries(values)) {
    if (definitions.get(key)?.searchable) texts.push(...textsOf(value))
  }
  return texts.join('\n')
}
