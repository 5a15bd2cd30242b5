import { CompiledQuery } from 'kysely'
import { dialectOf, type SqlDialect } from '../../db/dialect.js'
import { insertRows } from '../../db/multi-row-insert.js'
import { statement } from '../../db/statements.js'
import type { Executor } from '../../db/schema.js'
import { inList } from '../../db/values.js'

/** One row of the filter index: an item of a filterable definition's value on a record. */
export interface IndexedValue {
  definitionId: string
  value: string
}

/** The record whose filter index rows are written. */
interface IndexedRecord {
  storeId: string
  recordId: string
  productId: string
}

const RECORD_TABLES = { product: 'products', variant: 'variants' } as const
type Owner = keyof typeof RECORD_TABLES

/**
 * Replaces the filter index rows of one record (a product, or a variant, whose rows count for
 * its product) with `values`, whatever their number: rows that stay are left, the others
 * deleted, the new ones inserted, in one statement on PostgreSQL and in two on SQLite, where
 * a statement costs no round trip. Skipped when the record had none and has none.
 */
export async function replaceIndexedValues(
  db: Executor,
  record: IndexedRecord,
  values: readonly IndexedValue[],
  hadAny: boolean,
): Promise<void> {
  if (values.length === 0) {
    if (hadAny) await deleteIndexedValues(db, record.storeId, record.recordId)
    return
  }
  const items = JSON.stringify(values.map((item) => [item.definitionId, item.value]))
  await REPLACE[dialectOf(db).name](db, record, items, hadAny)
}

/**
 * The two statements of replaceIndexedValues: the rows whose value is gone are deleted, the
 * new ones inserted, and those that stay are left (their primary key ignores them).
 * `items` is the rows as a JSON array of [definition, value].
 */
const REPLACE: Record<
  SqlDialect['name'],
  (db: Executor, record: IndexedRecord, items: string, hadAny: boolean) => Promise<void>
> = {
  postgres: async (db, { storeId, productId, recordId }, items) => {
    await db.executeQuery(
      CompiledQuery.raw(REPLACE_POSTGRES, [storeId, productId, recordId, items]),
    )
  },
  sqlite: async (db, { storeId, productId, recordId }, items, hadAny) => {
    if (hadAny) {
      await db.executeQuery(CompiledQuery.raw(DELETE_GONE_SQLITE, [storeId, recordId, items]))
    }
    await db.executeQuery(CompiledQuery.raw(INSERT_SQLITE, [storeId, productId, recordId, items]))
  },
}

/** Parameters: store, product, record, items. */
const REPLACE_POSTGRES = `
  with items as (
    select (item->>0)::uuid as definition_id, item->>1 as value
    from jsonb_array_elements($4::jsonb) as item
  ), gone as (
    delete from metafield_values m
    where m.store_id = $1 and m.record_id = $3::uuid
      and not exists (select 1 from items
        where items.definition_id = m.definition_id and items.value = m.value)
  )
  insert into metafield_values (store_id, definition_id, value, product_id, record_id)
  select $1, definition_id, value, $2::uuid, $3::uuid from items
  on conflict do nothing`

/**
 * Parameters: store, record, items. Without its index named, SQLite's planner reads every row
 * of the store through the primary key (its store_id prefix covers the subquery's columns).
 */
const DELETE_GONE_SQLITE = `
  delete from metafield_values indexed by metafield_values_by_record
  where store_id = ? and record_id = ?
    and not exists (select 1 from json_each(?) as item
      where json_extract(item.value, '$[0]') = metafield_values.definition_id
        and json_extract(item.value, '$[1]') = metafield_values.value)`

/** Parameters: store, product, record, items. */
const INSERT_SQLITE = `
  insert into metafield_values (store_id, definition_id, value, product_id, record_id)
  select ?, json_extract(item.value, '$[0]'), json_extract(item.value, '$[1]'), ?, ?
  from json_each(?) as item
  where true
  on conflict do nothing`

/** A filter index row of a new record (a bulk create's products and variants). */
export interface NewIndexRow extends IndexedValue {
  productId: string
  recordId: string
}

/**
 * Inserts the filter index rows of new records (a bulk create's products and their
 * variants, inserted in the same transaction), several per statement (insertRows).
 */
export async function insertNewIndexRows(
  db: Executor,
  storeId: string,
  rows: readonly NewIndexRow[],
): Promise<void> {
  await insertRows(
    db,
    'metafield_values',
    ['store_id', 'definition_id', 'value', 'product_id', 'record_id'],
    rows.map((row) => [storeId, row.definitionId, row.value, row.productId, row.recordId]),
  )
}

export async function deleteIndexedValues(
  db: Executor,
  storeId: string,
  recordId: string,
): Promise<void> {
  await deleteRecordRows(db, storeId, recordId)
}

const deleteRecordRows = statement((db: Executor, storeId: string, recordId: string) =>
  db
    .deleteFrom('metafield_values')
    .where('store_id', '=', storeId)
    .where('record_id', '=', recordId),
)

/**
 * Deletes a product's rows of the filter index, those of its variants included: a probe of
 * `metafield_values_by_product` per definition of the store (at most 400).
 */
export const deleteProductIndexRows = statement(
  (db: Executor, storeId: string, productId: string) =>
    db
      .deleteFrom('metafield_values')
      .where('store_id', '=', storeId)
      .where('definition_id', 'in', (eb) =>
        eb.selectFrom('metafield_definitions').select('id').where('store_id', '=', storeId),
      )
      .where('product_id', '=', productId),
)

/**
 * Drops a definition's rows from the filter index: it is no longer filterable, or it is
 * deleted (no foreign key removes them, decision 0040).
 */
export async function deleteDefinitionIndex(
  db: Executor,
  storeId: string,
  definitionId: string,
): Promise<void> {
  await db
    .deleteFrom('metafield_values')
    .where('store_id', '=', storeId)
    .where('definition_id', '=', definitionId)
    .execute()
}

/** The records of `owner` that hold a value for `fullKey` (`<namespace>.<key>`). */
export async function recordsWithKey(
  db: Executor,
  storeId: string,
  owner: Owner,
  fullKey: string,
): Promise<{ id: string; productId: string; metafields: unknown }[]> {
  const dialect = dialectOf(db)
  if (owner === 'product') {
    const rows = await db
      .selectFrom('products')
      .select(['id', 'metafields'])
      .where('store_id', '=', storeId)
      .where(dialect.jsonObjectHasKey('metafields', fullKey))
      .execute()
    return rows.map((row) => ({ id: row.id, productId: row.id, metafields: row.metafields }))
  }
  const rows = await db
    .selectFrom('variants')
    .select(['id', 'product_id', 'metafields'])
    .where('store_id', '=', storeId)
    .where(dialect.jsonObjectHasKey('metafields', fullKey))
    .execute()
  return rows.map((row) => ({ id: row.id, productId: row.product_id, metafields: row.metafields }))
}

/**
 * Adds rows to the filter index (a definition made filterable), several per statement.
 * Rows already there are left.
 */
export async function insertIndexRows(
  db: Executor,
  rows: {
    storeId: string
    definitionId: string
    value: string
    productId: string
    recordId: string
  }[],
): Promise<void> {
  for (let start = 0; start < rows.length; start += 500) {
    await db
      .insertInto('metafield_values')
      .values(
        rows.slice(start, start + 500).map((row) => ({
          store_id: row.storeId,
          definition_id: row.definitionId,
          value: row.value,
          product_id: row.productId,
          record_id: row.recordId,
        })),
      )
      .onConflict((conflict) => conflict.doNothing())
      .execute()
  }
}

/**
 * Removes `fullKey`'s value from every record of `owner` in the store (its definition is
 * deleted): neither version nor updated_at moves, and no event is written.
 */
export async function removeKeyFromRecords(
  db: Executor,
  storeId: string,
  owner: Owner,
  fullKey: string,
): Promise<void> {
  const dialect = dialectOf(db)
  await db
    .updateTable(RECORD_TABLES[owner])
    .set({ metafields: dialect.jsonObjectWithoutKey('metafields', fullKey) })
    .where('store_id', '=', storeId)
    .where(dialect.jsonObjectHasKey('metafields', fullKey))
    .execute()
}

/** The stored values of the store's `productIds` and of their variants. */
export async function metafieldsOfProducts(
  db: Executor,
  storeId: string,
  productIds: readonly string[],
): Promise<{ productId: string; owner: Owner; metafields: unknown }[]> {
  const products = await db
    .selectFrom('products')
    .select(['id', 'metafields'])
    .where('store_id', '=', storeId)
    .where(inList(db, 'id', 'uuid', productIds))
    .execute()
  const variants = await db
    .selectFrom('variants')
    .select(['product_id', 'metafields'])
    .where('store_id', '=', storeId)
    .where(inList(db, 'product_id', 'uuid', productIds))
    .execute()
  return [
    ...products.map((row) => ({
      productId: row.id,
      owner: 'product' as const,
      metafields: row.metafields,
    })),
    ...variants.map((row) => ({
      productId: row.product_id,
      owner: 'variant' as const,
      metafields: row.metafields,
    })),
  ]
}
