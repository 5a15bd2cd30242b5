import { decodeCursor, pageOf } from '../http/page-cursor.js'
import { violatedUniqueConstraint } from '../db/driver-errors.js'
import type { Executor, MetafieldDefinitionRow } from '../db/schema.js'
import { isUuid, newId, nowIso, toIso } from '../db/values.js'
import { AppError, type FieldProblem, preconditionFailed, validationFailed } from '../errors.js'
import { ifMatchAllows } from '../http/conditional.js'
import { refreshSearchDocuments } from '../search/documents/search-document.repository.js'
import { findSmartCollections } from '../collections/membership/rules-state.repository.js'
import {
  applyRules,
  lockForRulesChange,
  smartRulesOfRow,
  type SmartRules,
} from '../collections/membership/membership.js'
import {
  type CreateDefinitionInput,
  type ListDefinitionsQuery,
  type MetafieldDefinition,
  type UpdateDefinitionInput,
} from './metafield-definition.schemas.js'
import { MAX_DEFINITIONS_PER_OWNER } from './values/metafield-value.schemas.js'
import {
  claimDefinitionSlot,
  deleteDefinitionRow,
  findDefinition,
  insertDefinition,
  listDefinitionRows,
  releaseDefinitionSlot,
  updateDefinitionRow,
  type DefinitionChanges,
} from './values/metafield-definition.repository.js'
import {
  deleteDefinitionIndex,
  insertIndexRows,
  recordsWithKey,
  removeKeyFromRecords,
} from './values/metafield-value.repository.js'
import { definitionsChanged } from './values/definition-cache.js'
import {
  indexedItems,
  validationsProblems,
  type MetafieldOwner,
  type MetafieldType,
  type Validations,
  storedMetafields,
} from './values/metafield-types.js'
import type { Deleted, Work } from '../db/unit-of-work.js'

export function definitionNotFound(): AppError {
  return new AppError('not_found', 'No metafield definition with this id exists in your store.')
}

function duplicateDefinition(): AppError {
  return new AppError(
    'duplicate_definition',
    'Your store already has a metafield definition with this owner, namespace and key.',
  )
}

export function createDefinitionWork(
  storeId: string,
  input: CreateDefinitionInput,
): Work<MetafieldDefinition> {
  const validations = (input.validations ?? {}) as Validations
  const problems = validationsProblems(input.type, validations)
  if (problems.length > 0) throw validationFailed(problems)
  return async (db) => {
    if (!(await claimDefinitionSlot(db, storeId, input.owner, MAX_DEFINITIONS_PER_OWNER))) {
      throw validationFailed([
        {
          field: 'owner',
          message: `the store already has ${MAX_DEFINITIONS_PER_OWNER} ${input.owner} definitions, the most it may have`,
        },
      ])
    }
    try {
      const row = await insertDefinition(db, {
        storeId,
        id: newId(),
        owner: input.owner,
        namespace: input.namespace,
        key: input.key,
        type: input.type,
        name: input.name,
        description: emptyToNull(input.description),
        validations: JSON.stringify(validations),
        filterable: input.filterable ?? false,
        searchable: input.searchable ?? false,
        createdAt: nowIso(),
      })
      await definitionsChanged(db, storeId)
      return rowToDefinition(row)
    } catch (error) {
      if (violatedUniqueConstraint(error) !== 'metafield_definitions_key') throw error
      throw duplicateDefinition()
    }
  }
}

/** The identity of a definition, which a PATCH may send only as it is. */
const FIXED_FIELDS = ['owner', 'namespace', 'key', 'type'] as const

/**
 * A merge patch of a definition. Values already stored stay as they are, even those new
 * validations would refuse; a definition made filterable gets its values indexed, one no
 * longer filterable loses them.
 */
export function updateDefinitionWork(
  storeId: string,
  id: string,
  patch: UpdateDefinitionInput,
  ifMatch: string | undefined,
): Work<MetafieldDefinition> {
  return async (db) => {
    const row = await lockDefinition(db, storeId, id, ifMatch)
    const current = rowToDefinition(row)
    const problems: FieldProblem[] = FIXED_FIELDS.filter(
      (field) => patch[field] !== undefined && patch[field] !== current[field],
    ).map((field) => ({ field, message: `cannot be changed (it is ${current[field]})` }))
    const validations =
      patch.validations === undefined ? undefined : ((patch.validations ?? {}) as Validations)
    if (validations !== undefined) problems.push(...validationsProblems(current.type, validations))
    if (problems.length > 0) throw validationFailed(problems)
    const changes: DefinitionChanges = {}
    if (patch.name !== undefined && patch.name !== current.name) changes.name = patch.name
    if (patch.description !== undefined) {
      const description = emptyToNull(patch.description)
      if (description !== current.description) changes.description = description
    }
    if (
      validations !== undefined &&
      JSON.stringify(validations) !== JSON.stringify(current.validations)
    ) {
      changes.validations = JSON.stringify(validations)
    }
    if (patch.filterable !== undefined && patch.filterable !== current.filterable) {
      changes.filterable = patch.filterable
    }
    if (patch.searchable !== undefined && patch.searchable !== current.searchable) {
      changes.searchable = patch.searchable
    }
    if (Object.keys(changes).length === 0) return current
    if (changes.filterable === false) await refuseIfRulesUse(db, storeId, current)
    const updated = await updateDefinitionRow(db, storeId, row.id, changes, nowIso())
    await definitionsChanged(db, storeId)
    if (changes.filterable === false) await deleteDefinitionIndex(db, storeId, row.id)
    if (changes.filterable === true) await indexDefinition(db, storeId, current)
    if (changes.searchable !== undefined) await refreshHolders(db, storeId, row)
    return rowToDefinition(updated)
  }
}

/**
 * A product attribute a smart collection's rule names stays filterable (decision 0045): the
 * switch is 400 on `filterable`, naming the collections, until their rules change.
 */
async function refuseIfRulesUse(
  db: Executor,
  storeId: string,
  definition: MetafieldDefinition,
): Promise<void> {
  const using = await collectionsNaming(db, storeId, definition)
  if (using.length === 0) return
  const field = `metafield.${definition.namespace}.${definition.key}`
  throw validationFailed([
    {
      field: 'filterable',
      message:
        `cannot be turned off while a smart collection has a rule on ${field} ` +
        `(${using.map((c) => c.id).join(', ')}): change its rules first`,
    },
  ])
}

/**
 * The smart collections whose rules name a product definition, read under the store's rules
 * lock, exclusive, as a change of rules takes it (after the definition's row lock), so that
 * no rule naming it is added meanwhile by a rules change.
 */
async function collectionsNaming(
  db: Executor,
  storeId: string,
  definition: { owner: string; namespace: string; key: string },
): Promise<SmartRules[]> {
  if (definition.owner !== 'product') return []
  await lockForRulesChange(db, storeId)
  const field = `metafield.${definition.namespace}.${definition.key}`
  return (await findSmartCollections(db, storeId))
    .map(smartRulesOfRow)
    .filter((smart) => smart.rules.some((rule) => rule.field === field))
}

/** Indexes every stored value of a definition just made filterable. */
async function indexDefinition(db: Executor, storeId: string, definition: MetafieldDefinition) {
  const fullKey = `${definition.namespace}.${definition.key}`
  const records = await recordsWithKey(db, storeId, definition.owner, fullKey)
  const rows = records.flatMap((record) =>
    indexedItems(storedMetafields(record.metafields)[fullKey]).map((value) => ({
      storeId,
      definitionId: definition.id,
      value,
      productId: record.productId,
      recordId: record.id,
    })),
  )
  await insertIndexRows(db, rows)
}

/**
 * Deletes a definition and its value from every record of its owner, without an event per
 * record and without moving their version or updatedAt, and its rows of the filter index.
 */
export function deleteDefinitionWork(
  storeId: string,
  id: string,
  ifMatch: string | undefined,
): Work<Deleted> {
  return async (db) => {
    const row = await lockDefinition(db, storeId, id, ifMatch)
    const holders = asBoolean(row.searchable) ? await holdersOf(db, storeId, row) : []
    // Rules naming it match nothing once it is gone: their members are made exact at commit.
    const collections = await collectionsNaming(db, storeId, row)
    await removeKeyFromRecords(
      db,
      storeId,
      row.owner as MetafieldOwner,
      `${row.namespace}.${row.key}`,
    )
    await deleteDefinitionIndex(db, storeId, row.id)
    await deleteDefinitionRow(db, storeId, row.id)
    await definitionsChanged(db, storeId)
    await releaseDefinitionSlot(db, storeId, row.owner)
    await refreshInPieces(db, storeId, holders)
    for (const collection of collections) await applyRules(db, storeId, collection)
    return { id: row.id, deleted: true }
  }
}

const asBoolean = (value: boolean | number) => value === true || value === 1

/** The products holding a value of the definition (themselves or by a variant). */
async function holdersOf(db: Executor, storeId: string, row: MetafieldDefinitionRow) {
  const records = await recordsWithKey(
    db,
    storeId,
    row.owner as MetafieldOwner,
    `${row.namespace}.${row.key}`,
  )
  return [...new Set(records.map((record) => record.productId))]
}

/**
 * Rebuilds the search documents of the products holding the definition's values, in the
 * change's transaction (its `searchable` flag changed): a pass over them, as an index switch.
 */
async function refreshHolders(db: Executor, storeId: string, row: MetafieldDefinitionRow) {
  await refreshInPieces(db, storeId, await holdersOf(db, storeId, row))
}

async function refreshInPieces(db: Executor, storeId: string, productIds: string[]) {
  for (let i = 0; i < productIds.length; i += 500) {
    await refreshSearchDocuments(db, storeId, productIds.slice(i, i + 500))
  }
}

async function lockDefinition(
  db: Executor,
  storeId: string,
  id: string,
  ifMatch: string | undefined,
): Promise<MetafieldDefinitionRow> {
  if (!isUuid(id)) throw definitionNotFound()
  const row = await findDefinition(db, storeId, id.toLowerCase(), true)
  if (row === undefined) throw definitionNotFound()
  if (!ifMatchAllows(ifMatch, row.version)) throw preconditionFailed()
  return row
}

export async function getDefinition(
  db: Executor,
  storeId: string,
  id: string,
): Promise<MetafieldDefinition> {
  if (!isUuid(id)) throw definitionNotFound()
  const row = await findDefinition(db, storeId, id.toLowerCase())
  if (row === undefined) throw definitionNotFound()
  return rowToDefinition(row)
}

export async function listDefinitions(
  db: Executor,
  storeId: string,
  query: ListDefinitionsQuery,
): Promise<{ data: MetafieldDefinition[]; nextCursor: string | null }> {
  const limit = query.limit ?? 50
  const rows = await listDefinitionRows(db, {
    storeId,
    owner: query.owner,
    namespace: query.namespace,
    after: query.cursor === undefined ? undefined : decodeCursor(query.cursor),
    limit: limit + 1,
  })
  return pageOf(rows, limit, rowToDefinition)
}

export function rowToDefinition(row: MetafieldDefinitionRow): MetafieldDefinition {
  return {
    id: row.id,
    owner: row.owner as MetafieldOwner,
    namespace: row.namespace,
    key: row.key,
    type: row.type as MetafieldType,
    name: row.name,
    description: row.description,
    validations: (typeof row.validations === 'string'
      ? JSON.parse(row.validations)
      : row.validations) as Validations,
    filterable: row.filterable === true || row.filterable === 1,
    searchable: row.searchable === true || row.searchable === 1,
    version: row.version,
    createdAt: toIso(row.created_at),
    updatedAt: toIso(row.updated_at),
  }
}

function emptyToNull(value: string | null | undefined): string | null {
  return value === undefined || value === null || value === '' ? null : value
}
