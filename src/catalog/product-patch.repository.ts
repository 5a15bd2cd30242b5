import { sql } from 'kysely'
import { dialectOf, POSTGRES } from '../db/dialect.js'
import { patchedColumns, sentPairs, setEntries } from '../db/merge-patch-sql.js'
import { statement } from '../db/statements.js'
import type { Executor, ProductRow } from '../db/schema.js'
import { eventInStatement, type PendingEvent } from '../outbox/outbox.js'
import {
  rulesStateInStatement,
  rulesStateOf,
  type RulesState,
} from '../collections/membership/rules-state.repository.js'
import type { StoredProduct, StoredVariant } from '../search/documents/search-document.postgres.js'

/**
 * The product columns a PATCH can change in one statement, with their PostgreSQL types. A
 * PATCH of the slug or the tags has more to write (slug counters, product_tags) and takes the
 * transaction path.
 */
const ONE_STATEMENT_COLUMNS = {
  name: 'text',
  description: 'text',
  status: 'text',
  price_e4: 'bigint',
  compare_at_price_e4: 'bigint',
  sku: 'text',
  barcode: 'text',
  tax_rate: 'double precision',
  vendor: 'text',
  product_type: 'text',
  images: 'json',
} as const

/** The values a PATCH sends for those columns; a column left out is not sent. */
export type OneStatementChanges = Partial<
  Record<keyof typeof ONE_STATEMENT_COLUMNS, string | number | null>
>

export interface OneStatementPatch {
  storeId: string
  id: string
  changes: OneStatementChanges
  /** The versions If-Match allows, or 'any'. */
  versions: 'any' | number[]
  /** The statuses a product may not leave for the status sent (the transition rule). */
  statusesBarred: string[]
  updatedAt: string
  /** The event the service decided, appended by the same statement. */
  event: PendingEvent
}

/** What the one-statement PATCH answers when it wrote. */
export interface PatchedInOneStatement {
  /** The product after the change. */
  row: ProductRow
  /** The store's rules state, read under the store's rules lock, which the statement took. */
  rules: RulesState
  /** The product as its search document needs it, its variants read after its row lock. */
  document: StoredProduct
}

/**
 * A product's PATCH as one statement on PostgreSQL, as a create is: the columns sent are set,
 * the version raised, and only if the version is one If-Match allows, the status may change
 * to the one sent, and a value sent differs from the stored one. The same statement appends
 * the product.updated event, with the row before (read by the statement's snapshot) and the
 * row after; the update applies only to the version that snapshot read, so when another
 * write commits in between, this one writes nothing rather than report stale old values.
 * The row it answers is the product after the change; undefined when nothing was written (no
 * such product, another version, a barred transition, no change, a write in between, or
 * SQLite, where the group commit runs the transaction path at no round-trip cost): the
 * caller then takes the transaction path, which finds out which and answers it.
 *
 * What follows a product write (productsWritten, product-write.ts) is read by the same statement
 * (decision 0034): first of all the store's rules lock, shared, with the rules state
 * (product_write_state, migration 2026-11-30T11), which the read of the product's row waits
 * for, so the lock comes before the row lock as every product write takes it; and, once the
 * row is updated (its lock held), its variants and the definition stamp for its search
 * document (product_document_extras: a snapshot of its own, taken after the row lock). A
 * PATCH changes no variant. When it answers undefined the lock may or may not have been taken.
 */
export async function patchProductInOneStatement(
  db: Executor,
  patch: OneStatementPatch,
): Promise<PatchedInOneStatement | undefined> {
  if (!dialectOf(db).oneStatementWrites) return undefined
  const { storeId, id, changes, versions, statusesBarred, updatedAt, event } = patch
  const sent = sentPairs(ONE_STATEMENT_COLUMNS, changes)
  const [row] = await patchProduct(
    db,
    storeId,
    id,
    versions === 'any',
    versions === 'any' ? [] : versions,
    statusesBarred,
    updatedAt,
    event.type,
    event.id,
    event.createdAt,
    ...sent,
  )
  if (row === undefined) return undefined
  const { rules_token, rules_collections, document_extras, ...product } = row
  const extras = (
    typeof document_extras === 'string' ? JSON.parse(document_extras) : document_extras
  ) as { variants: StoredVariant[]; definition_stamp: string | null }
  return {
    row: product as ProductRow,
    rules: rulesStateOf({ token: rules_token, collections: rules_collections }),
    document: { ...product, variants: extras.variants, definition_stamp: extras.definition_stamp },
  }
}

/** The parameters before the columns' (sent, value) pairs, in patchProductInOneStatement's order. */
const FIXED_PARAMS = 9

const patchProduct = statement((db: Executor, ...params: unknown[]) => {
  const [storeId, id, anyVersion, versions, statusesBarred, updatedAt, type, eventId, eventAt] =
    params as [string, string, boolean, number[], string[], string, string, string, string]
  const columns = patchedColumns('products', ONE_STATEMENT_COLUMNS, params, FIXED_PARAMS)
  const statusSent = params[FIXED_PARAMS + 2 * Object.keys(ONE_STATEMENT_COLUMNS).indexOf('status')]
  return db
    .with('state', (db) => db.selectFrom(rulesStateInStatement(storeId).as('state')).selectAll())
    .with('old', (db) =>
      db
        .selectFrom('products')
        .selectAll()
        .where('store_id', '=', storeId)
        .where('id', '=', id)
        // The rules lock first: no row of products is locked before it is granted.
        .where(sql<boolean>`exists (select from state)`),
    )
    .with('updated', (db) =>
      db
        .updateTable('products')
        .from('old')
        .set((eb) => ({
          ...setEntries(columns),
          version: eb('products.version', '+', 1),
          updated_at: POSTGRES.movedOn('products.updated_at', updatedAt),
        }))
        .whereRef('products.store_id', '=', 'old.store_id')
        .whereRef('products.id', '=', 'old.id')
        .whereRef('products.version', '=', 'old.version')
        .where(
          sql<boolean>`(${anyVersion}::boolean or products.version = any(${versions}::integer[]))`,
        )
        .where(
          sql<boolean>`not (${statusSent}::boolean and products.status = any(${statusesBarred}::text[]))`,
        )
        .where(
          sql<boolean>`(${sql.join(
            columns.map((c) => c.changed),
            sql` or `,
          )})`,
        )
        .returningAll('products'),
    )
    .with('event', () =>
      eventInStatement(
        'updated, old',
        storeId,
        { type, id: eventId, createdAt: eventAt },
        sql`to_json(updated)`,
        sql`to_json(old)`,
      ),
    )
    .selectFrom('updated')
    .selectAll('updated')
    .select([
      sql<string | null>`(select token from state)`.as('rules_token'),
      sql<boolean>`(select collections from state)`.as('rules_collections'),
      sql<unknown>`product_document_extras(updated.store_id, updated.id)`.as('document_extras'),
    ])
})
