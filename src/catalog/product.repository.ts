import { sql } from 'kysely'
import { dialectOf } from '../db/dialect.js'
import { statement } from '../db/statements.js'
import type { Executor, ProductRow } from '../db/schema.js'
import { appendEvent, eventInStatement, type PendingEvent } from '../outbox/outbox.js'
import type { FieldValues } from './product.columns.js'
import { productSlugs } from '../slugs/slug-claims.js'

// A product's row: locked, updated, touched by its variants' changes, deleted. The create, the
// tags, the list queries, the one-statement PATCH and the bulk insert live in their own files.

/**
 * The product, its row locked until the transaction ends on PostgreSQL (SQLite's writes
 * are serialized by its group commit). Undefined when the store has no such product.
 */
export async function findProductForUpdate(
  db: Executor,
  storeId: string,
  id: string,
): Promise<ProductRow | undefined> {
  const [row] = await productForUpdate(db, storeId, id)
  return row
}

const productForUpdate = statement((db: Executor, storeId: string, id: string) => {
  const query = db
    .selectFrom('products')
    .selectAll()
    .where('store_id', '=', storeId)
    .where('id', '=', id)
  return dialectOf(db).forUpdate(query)
})

/** The columns a PATCH may change, in the order updateProductRow takes them. */
export type ProductChanges = [
  name: string,
  slug: string,
  status: string,
  ...FieldValues,
  updatedAt: string,
  metafields: string,
]

/** Writes a product's new values and raises its version; returns the row as it now is. */
export async function updateProductRow(
  db: Executor,
  storeId: string,
  id: string,
  changes: ProductChanges,
): Promise<ProductRow> {
  const [row] = await updateProduct(db, storeId, id, ...changes)
  if (row === undefined) throw new Error('the product to update is gone')
  return row
}

/**
 * updateProductRow with the product.updated `event` appended (the row before and after): on
 * PostgreSQL in the same statement, as the one-statement PATCH appends it (the product is
 * locked, so the statement's `old` is the row the caller read); on SQLite two statements.
 */
export async function updateProductRowWithEvent(
  db: Executor,
  storeId: string,
  previous: ProductRow,
  changes: ProductChanges,
  event: PendingEvent,
): Promise<ProductRow> {
  if (!dialectOf(db).oneStatementWrites) {
    const updated = await updateProductRow(db, storeId, previous.id, changes)
    await appendEvent(db, storeId, { type: event.type, object: updated, previous }, event)
    return updated
  }
  const [row] = await updateProductAndEvent(
    db,
    storeId,
    previous.id,
    event.type,
    event.id,
    event.createdAt,
    ...changes,
  )
  if (row === undefined) throw new Error('the product to update is gone')
  return row
}

const updateProduct = statement(
  (db: Executor, storeId: string, id: string, ...changes: ProductChanges) =>
    db
      .updateTable('products')
      .set((eb) => ({
        ...changedColumns(db, changes),
        version: eb('version', '+', 1),
      }))
      .where('store_id', '=', storeId)
      .where('id', '=', id)
      .returningAll(),
)

const updateProductAndEvent = statement(
  (
    db: Executor,
    storeId: string,
    id: string,
    eventType: string,
    eventId: string,
    eventAt: string,
    ...changes: ProductChanges
  ) =>
    db
      .with('old', (creator) =>
        creator
          .selectFrom('products')
          .selectAll()
          .where('store_id', '=', storeId)
          .where('id', '=', id),
      )
      .with('updated', (creator) =>
        creator
          .updateTable('products')
          .set((eb) => ({
            ...changedColumns(db, changes),
            version: eb('products.version', '+', 1),
          }))
          .where('store_id', '=', storeId)
          .where('id', '=', id)
          .returningAll(),
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
      .selectAll(),
)

/** The columns a PATCH sets, from its changes (updateProductRow's order). */
function changedColumns(db: Executor, changes: ProductChanges) {
  const [name, slug, status, description, priceE4, compareAtPriceE4, sku, barcode] = changes
  const [, , , , , , , , taxRate, vendor, productType, tags, images, updatedAt, metafields] =
    changes
  return {
    name,
    slug,
    status,
    description,
    price_e4: priceE4,
    compare_at_price_e4: compareAtPriceE4,
    sku,
    barcode,
    tax_rate: taxRate,
    vendor,
    product_type: productType,
    tags,
    images,
    metafields,
    updated_at: dialectOf(db).movedOn('products.updated_at', updatedAt),
  }
}

/**
 * Records a slug set by hand as handed out, so that generation never gives it again
 * (slug-claims.ts).
 */
export async function claimSlugSetByHand(
  db: Executor,
  storeId: string,
  slug: string,
): Promise<void> {
  await productSlugs.claimSetByHand(db, storeId, slug)
}

/** Deletes a product; its variants and tags go with it (foreign keys, on delete cascade). */
export async function deleteProductRow(db: Executor, storeId: string, id: string): Promise<void> {
  await deleteProduct(db, storeId, id)
}

const deleteProduct = statement((db: Executor, storeId: string, id: string) =>
  db.deleteFrom('products').where('store_id', '=', storeId).where('id', '=', id),
)

/**
 * Marks a product changed by a change of one of its variants: its version and updatedAt
 * move, and its highest variant position is taken again from the variants (a variant's
 * position may have moved, or the highest one been deleted). The product's row must be
 * locked already (findProductForUpdate).
 */
export async function touchProductForVariants(
  db: Executor,
  storeId: string,
  id: string,
  updatedAt: string,
): Promise<void> {
  await touchProduct(db, storeId, id, updatedAt)
}

const touchProduct = statement((db: Executor, storeId: string, id: string, updatedAt: string) =>
  db
    .updateTable('products')
    .set((eb) => ({
      version: eb('version', '+', 1),
      updated_at: dialectOf(db).movedOn('products.updated_at', updatedAt),
      max_variant_position: eb.fn.coalesce(
        eb
          .selectFrom('variants')
          .select((eb) => eb.fn.max('position').as('position'))
          .where('variants.store_id', '=', storeId)
          .where('variants.product_id', '=', id),
        eb.lit(0),
      ),
    }))
    .where('store_id', '=', storeId)
    .where('id', '=', id),
)
