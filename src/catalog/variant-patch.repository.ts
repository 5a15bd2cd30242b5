import { sql } from 'kysely'
import { dialectOf, POSTGRES } from '../db/dialect.js'
import { patchedColumns, sentPairs, setEntries } from '../db/merge-patch-sql.js'
import { statement } from '../db/statements.js'
import { eventInStatement, type PendingEvent } from '../outbox/outbox.js'
import type { Executor } from '../db/schema.js'
import {
  rulesStateInStatement,
  rulesStateOf,
  type RulesState,
} from '../collections/membership/rules-state.repository.js'
import type { StoredProduct, StoredVariant } from '../search/documents/search-document.postgres.js'

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

/** What the one-statement PATCH of a variant answers when it wrote. */
export interface PatchedVariantInOneStatement {
  /** The variant after the change. */
  row: VariantFields
  /** The store's rules state, read under the store's rules lock, which the statement took. */
  rules: RulesState
  /** The variant's product as its search document needs it, read after its row lock. */
  document: StoredProduct
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
 *
 * As the product's PATCH (product-patch.repository.ts, decision 0034), the statement first
 * takes the store's rules lock (shared) with the rules state, which the product's row lock
 * waits for, and answers the product after its update with the store's definition stamp and
 * its variants (product_document_extras, read after the row lock). The patched variant among
 * them is replaced by the update's own row: the function's query does see the update on
 * PostgreSQL 15 (a volatile PL/pgSQL query takes a new command id), but what a statement's
 * parts see of one another's changes is not something PostgreSQL documents or promises.
 */
export async function patchVariantInOneStatement(
  db: Executor,
  patch: OneStatementVariantPatch,
): Promise<PatchedVariantInOneStatement | undefined> {
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
  if (row === undefined) return undefined
  const { rules_token, rules_collections, product, document_extras, ...variant } = row
  const extras = jsonOf(document_extras) as {
    variants: (StoredVariant & { id: string })[]
    definition_stamp: string | null
  }
  return {
    row: variant,
    rules: rulesStateOf({ token: rules_token, collections: rules_collections }),
    document: {
      ...(jsonOf(product) as Omit<StoredProduct, 'variants' | 'definition_stamp'>),
      variants: extras.variants.map((stale) => (stale.id === variant.id ? variant : stale)),
      definition_stamp: extras.definition_stamp,
    },
  }
}

function jsonOf(value: unknown): unknown {
  return typeof value === 'string' ? JSON.parse(value) : value
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
    .with('state', (db) => db.selectFrom(rulesStateInStatement(storeId).as('state')).selectAll())
    .with('product', (db) =>
      db
        .selectFrom('products')
        .select(['store_id', 'id'])
        .where('store_id', '=', storeId)
        .where('id', '=', productId)
        // The rules lock first: no row of products is locked before it is granted.
        .where(sql<boolean>`exists (select from state)`)
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
        .whereRef('products.id', '=', 'updated.product_id')
        .returningAll('products'),
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
    .selectFrom(['updated', 'touched'])
    .selectAll('updated')
    .select([
      sql<unknown>`to_json(touched)`.as('product'),
      sql<string | null>`(select token from state)`.as('rules_token'),
      sql<boolean>`(select collections from state)`.as('rules_collections'),
      sql<unknown>`product_document_extras(touched.store_id, touched.id)`.as('document_extras'),
    ])
})
