import { sql } from 'kysely'
import { dialectOf, POSTGRES } from '../db/dialect.js'
import { patchedColumns, sentPairs, setEntries } from '../db/merge-patch-sql.js'
import { statement } from '../db/statements.js'
import type { Executor, ProductRow } from '../db/schema.js'
import { eventInStatement, type PendingEvent } from '../events/outbox.js'

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
 */
export async function patchProductInOneStatement(
  db: Executor,
  patch: OneStatementPatch,
): Promise<ProductRow | undefined> {
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
  return row
}

/** The parameters before the columns' (sent, value) pairs, in patchProductInOneStatement's order. */
const FIXED_PARAMS = 9

const patchProduct = statement((db: Executor, ...params: unknown[]) => {
  const [storeId, id, anyVersion, versions, statusesBarred, updatedAt, type, eventId, eventAt] =
    params as [string, string, boolean, number[], string[], string, string, string, string]
  const columns = patchedColumns('products', ONE_STATEMENT_COLUMNS, params, FIXED_PARAMS)
  const statusSent = params[FIXED_PARAMS + 2 * Object.keys(ONE_STATEMENT_COLUMNS).indexOf('status')]
  return db
    .with('old', (db) =>
      db.selectFrom('products').selectAll().where('store_id', '=', storeId).where('id', '=', id),
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
    .selectAll()
})
