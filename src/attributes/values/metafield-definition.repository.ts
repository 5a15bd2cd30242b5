import { sql } from 'kysely'
import { dialectOf } from '../../db/dialect.js'
import { statement } from '../../db/statements.js'
import { newId } from '../../db/values.js'
import type { Executor, MetafieldDefinitionRow } from '../../db/schema.js'
import type { PagePosition } from '../../http/page-cursor.js'

export interface NewDefinition {
  storeId: string
  id: string
  owner: string
  namespace: string
  key: string
  type: string
  name: string
  description: string | null
  validations: string
  filterable: boolean
  searchable: boolean
  createdAt: string
}

export interface DefinitionChanges {
  name?: string
  description?: string | null
  validations?: string
  filterable?: boolean
  searchable?: boolean
}

/**
 * Counts one more definition of `owner` for the store unless it already has `max`: one
 * conditional upsert, so concurrent creates never pass the limit (as webhook endpoints').
 */
export async function claimDefinitionSlot(
  db: Executor,
  storeId: string,
  owner: string,
  max: number,
): Promise<boolean> {
  const row = await db
    .insertInto('metafield_definition_counts')
    .values({ store_id: storeId, owner, definitions: 1 })
    .onConflict((conflict) =>
      conflict
        .columns(['store_id', 'owner'])
        .doUpdateSet({
          definitions: sql<number>`metafield_definition_counts.definitions + 1`,
        })
        .where('metafield_definition_counts.definitions', '<', max),
    )
    .returning('definitions')
    .executeTakeFirst()
  return row !== undefined
}

export async function releaseDefinitionSlot(
  db: Executor,
  storeId: string,
  owner: string,
): Promise<void> {
  await db
    .updateTable('metafield_definition_counts')
    .set({ definitions: sql<number>`definitions - 1` })
    .where('store_id', '=', storeId)
    .where('owner', '=', owner)
    .execute()
}

const definitionStamp = statement((db: Executor, storeId: string) =>
  db.selectFrom('metafield_definition_stamps').select('token').where('store_id', '=', storeId),
)

/** The store's definition stamp: undefined while it never had a definition. */
export async function readDefinitionStamp(
  db: Executor,
  storeId: string,
): Promise<string | undefined> {
  const [row] = await definitionStamp(db, storeId)
  return row?.token
}

/** Renews the store's definition stamp: with every insert, update and delete of a definition. */
export async function renewDefinitionStamp(db: Executor, storeId: string): Promise<void> {
  await db
    .insertInto('metafield_definition_stamps')
    .values({ store_id: storeId, token: newId() })
    .onConflict((conflict) =>
      conflict.column('store_id').doUpdateSet((eb) => ({ token: eb.ref('excluded.token') })),
    )
    .execute()
}

export async function insertDefinition(
  db: Executor,
  row: NewDefinition,
): Promise<MetafieldDefinitionRow> {
  const dialect = dialectOf(db)
  return await db
    .insertInto('metafield_definitions')
    .values({
      store_id: row.storeId,
      id: row.id,
      owner: row.owner,
      namespace: row.namespace,
      key: row.key,
      type: row.type,
      name: row.name,
      description: row.description,
      validations: row.validations,
      filterable: dialect.boolean(row.filterable),
      searchable: dialect.boolean(row.searchable),
      created_at: row.createdAt,
      updated_at: row.createdAt,
    })
    .returningAll()
    .executeTakeFirstOrThrow()
}

export function findDefinition(
  db: Executor,
  storeId: string,
  id: string,
  lock = false,
): Promise<MetafieldDefinitionRow | undefined> {
  const query = db
    .selectFrom('metafield_definitions')
    .selectAll()
    .where('store_id', '=', storeId)
    .where('id', '=', id)
  return (lock ? dialectOf(db).forUpdate(query) : query).executeTakeFirst()
}

/** The store's definitions of one owner: what a write of that owner's values checks against. */
export function definitionsOfOwner(
  db: Executor,
  storeId: string,
  owner: string,
): Promise<MetafieldDefinitionRow[]> {
  return ownerDefinitions(db, storeId, owner)
}

const ownerDefinitions = statement((db: Executor, storeId: string, owner: string) =>
  db
    .selectFrom('metafield_definitions')
    .selectAll()
    .where('store_id', '=', storeId)
    .where('owner', '=', owner),
)

/** Every definition of the store, oldest first (an import's and an export's columns). */
export function definitionsOfStore(
  db: Executor,
  storeId: string,
): Promise<MetafieldDefinitionRow[]> {
  return db
    .selectFrom('metafield_definitions')
    .selectAll()
    .where('store_id', '=', storeId)
    .orderBy('created_at')
    .orderBy('id')
    .execute()
}

export function listDefinitionRows(
  db: Executor,
  query: {
    storeId: string
    owner: string | undefined
    namespace: string | undefined
    after: PagePosition | undefined
    limit: number
  },
): Promise<MetafieldDefinitionRow[]> {
  const { storeId, owner, namespace, after, limit } = query
  const dialect = dialectOf(db)
  return db
    .selectFrom('metafield_definitions')
    .selectAll()
    .where('store_id', '=', storeId)
    .$if(owner !== undefined, (q) => q.where('owner', '=', owner!))
    .$if(namespace !== undefined, (q) => q.where('namespace', '=', namespace!))
    .$if(after !== undefined, (q) =>
      q.where((eb) =>
        eb.or([
          eb('created_at', '<', dialect.cast<string>(after!.createdAt, 'timestamptz')),
          eb.and([
            eb('created_at', '=', dialect.cast<string>(after!.createdAt, 'timestamptz')),
            eb('id', '<', dialect.cast<string>(after!.id, 'uuid')),
          ]),
        ]),
      ),
    )
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute()
}

export async function updateDefinitionRow(
  db: Executor,
  storeId: string,
  id: string,
  changes: DefinitionChanges,
  updatedAt: string,
): Promise<MetafieldDefinitionRow> {
  const dialect = dialectOf(db)
  return await db
    .updateTable('metafield_definitions')
    .set((eb) => ({
      ...(changes.name !== undefined && { name: changes.name }),
      ...(changes.description !== undefined && { description: changes.description }),
      ...(changes.validations !== undefined && { validations: changes.validations }),
      ...(changes.filterable !== undefined && {
        filterable: dialect.boolean(changes.filterable),
      }),
      ...(changes.searchable !== undefined && {
        searchable: dialect.boolean(changes.searchable),
      }),
      version: eb('version', '+', 1),
      updated_at: dialect.movedOn('metafield_definitions.updated_at', updatedAt),
    }))
    .where('store_id', '=', storeId)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow()
}

export async function deleteDefinitionRow(
  db: Executor,
  storeId: string,
  id: string,
): Promise<void> {
  await db
    .deleteFrom('metafield_definitions')
    .where('store_id', '=', storeId)
    .where('id', '=', id)
    .execute()
}
