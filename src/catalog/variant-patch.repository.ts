import { sql } from 'kysely'
import { dialectOf, POSTGRES } from '../db/dialect.js'
import { patchedColumns, sentPairs, setEntries } from '../db/merge-patch-sql.js'
import { statement } from '../db/statements.js'
import { eventInStatement, type PendingEvent } from '../events/outbox.js'
import type { Executor } from '../db/schema.js'

import { VARIANT_READ_COLUMNS, type VariantFields } from './variant.columns.js'

/**
 * The variant columns a PATCH can change in one statement, with their PostgreSQL types. A
 * PATCH of the position takes the transaction path: the product's highest position is taken
 * again from its variants after the change, which one statement's snapshot cannot see.
 */
const ONE_STATEMENT_COLUMNS = {
  name: 'text',
  sku: 'text',
  barcode: 'text',
  price_e4: 'bigint',
  compare_at_price_e4: 'bigint',
  weight_grams: 'integer',
} as const

export interface OneStatementVariantPatch {
  storeId: string
  productId: string
  variantId: string
  changes: Partial<Record<keyof typeof ONE_STATEMENT_COLUMNS, string | number | null>>
  /** Options sent, as JSON text with their key (see optionsKey); undefined when not sent. */
  options: { text: string; key: string | null } | undefined
  /** The versions If-Match allows, or 'any'. */
  versions: 'any' | number[]
  updatedAt: string
  /** The event the service decided, appended by the same statement. */
  event: PendingEvent
}

/**
 * A variant's PATCH as one statement on PostgreSQL: the product's row is locked first (as on
 * the transaction path), the variant's columns sent are set and its version raised only if
 * its version is one If-Match allows and a value sent differs from the stored one (options as
 * a set: the same set in another key order is no change), and then the product's version
 * and updatedAt move, and the variant.updated event is appended with the variant's row before
 * (read by the statement's snapshot) and after. The update applies only to the version that
 * snapshot read: when another write of the variant committed in between, nothing is written
 * (rather than stale old values reported). Undefined when nothing was written, or on SQLite:
 * the caller takes the transaction path. A sku or options another variant holds fails as the
 * unique index says.
 */
export async function patchVariantInOneStatement(
  db: Executor,
  patch: OneStatementVariantPatch,
): Promise<VariantFields | undefined> {
  if (!dialectOf(db).oneStatementWrites) return undefined
  const { storeId, productId, variantId, changes, options, versions, updatedAt, event } = patch
  const sent = sentPairs(ONE_STATEMENT_COLUMNS, changes)
  const [row] = await patchVariant(
    db,
    storeId,
    productId,
    variantId,
    versions === 'any',
    versions === 'any' ? [] : versions,
    updatedAt,
    options !== undefined,
    options?.text ?? null,
    options?.key ?? null,
    event.type,
    event.id,
    event.createdAt,
    ...sent,
  )
  return row
}

/** The parameters before the columns' (sent, value) pairs, in patchVariantInOneStatement's order. */
const FIXED_PARAMS = 12

const patchVariant = statement((db: Executor, ...params: unknown[]) => {
  const [storeId, productId, variantId, anyVersion, versions, updatedAt] = params as [
    string,
    string,
    string,
    boolean,
    number[],
    string,
  ]
  const [optionsSent, optionsText, optionsKeySent, eventType, eventId, eventAt] = params.slice(
    6,
    FIXED_PARAMS,
  )
  const columns = patchedColumns('variants', ONE_STATEMENT_COLUMNS, params, FIXED_PARAMS)
  const optionsDiffer = sql`${optionsSent}::boolean and ${optionsKeySent}::text is distinct from variants.options_key`
  return db
    .with('product', (db) =>
      db
        .selectFrom('products')
        .select(['store_id', 'id'])
        .where('store_id', '=', storeId)
        .where('id', '=', productId)
        .forNoKeyUpdate(),
    )
    .with('old', (db) =>
      db
        .selectFrom('variants as v')
        .select(VARIANT_READ_COLUMNS)
        .where('store_id', '=', storeId)
        .where('id', '=', variantId)
        .where('product_id', '=', productId),
    )
    .with('updated', (db) =>
      db
        .updateTable('variants')
        .from(['product', 'old'])
        .set((eb) => ({
          ...setEntries(columns),
          options: sql`case when ${optionsDiffer} then ${optionsText}::json else variants.options end`,
          options_key: sql`case when ${optionsSent}::boolean then ${optionsKeySent}::text else variants.options_key end`,
          version: eb('variants.version', '+', 1),
          updated_at: POSTGRES.movedOn('variants.updated_at', updatedAt),
        }))
        .whereRef('variants.store_id', '=', 'product.store_id')
        .whereRef('variants.product_id', '=', 'product.id')
        .whereRef('variants.id', '=', 'old.id')
        .whereRef('variants.version', '=', 'old.version')
        .where(
          sql<boolean>`(${anyVersion}::boolean or variants.version = any(${versions}::integer[]))`,
        )
        .where(
          sql<boolean>`((${optionsDiffer}) or ${sql.join(
            columns.map((c) => c.changed),
            sql` or `,
          )})`,
        )
        .returning(VARIANT_READ_COLUMNS.map((column) => `variants.${column}` as const)),
    )
    .with('touched', (db) =>
      db
        .updateTable('products')
        .from('updated')
        .set((eb) => ({
          version: eb('products.version', '+', 1),
          updated_at: POSTGRES.movedOn('products.updated_at', updatedAt),
        }))
        // The product's key as a value, not only as the join's: joined alone, the planner
        // scanned the store's whole range of the primary key for it (every product).
        .where('products.store_id', '=', storeId)
        .where('products.id', '=', productId)
        .whereRef('products.id', '=', 'updated.product_id'),
    )
    .with('event', () =>
      eventInStatement(
        'updated, old',
        storeId,
        { type: eventType, id: eventId, createdAt: eventAt },
        sql`to_json(updated)`,
        sql`to_json(old)`,
      ),
    )
    .selectFrom('updated')
    .selectAll()
})
