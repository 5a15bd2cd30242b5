import {
  insertNewIndexRows,
  type NewIndexRow,
} from '../attributes/values/metafield-value.repository.js'
import type { MergedMetafields } from '../attributes/values/metafield-values.js'
import type { NewVariantRow } from '../db/schema.js'
import { nowIso } from '../db/values.js'
import { appendEvents, eventRow, pendingEvent, type NewEvent } from '../outbox/outbox.js'
import { beginProductWrite, productsWritten } from './product-write.js'
import { inTransaction } from '../db/transactions.js'
import {
  MAX_POSITION,
  type CreateProductInput,
  type CreateVariantInput,
} from './catalog.schemas.js'
import {
  insertProductsWithSlugsSetByHand,
  type CountedNewProduct,
} from './product-bulk.repository.js'
import { newProductRow } from './product-create-work.js'
import type { Work } from '../db/unit-of-work.js'
import { tagKeysJson, uniqueTags } from './record-fields.js'
import { insertNewVariantRows } from './variant-bulk.repository.js'
import { newVariantFields } from './variant.service.js'

/**
 * A new product of a bulk create (an import's run of new products): its fields, its slug (set
 * by hand), its variants in their order, and the metafield values of each, already checked
 * (checkMetafields) when it has any.
 */
export interface NewProductWithVariants {
  input: CreateProductInput
  slug: string
  metafields?: MergedMetafields | undefined
  variants: { input: CreateVariantInput; metafields?: MergedMetafields | undefined }[]
}

/**
 * Whether createProductsWork can create this product: what addVariantWork would refuse of it
 * (a position given, too many variants) and metafield values not checked leave it to
 * createProductWork and addVariantWork, one by one.
 */
export function creatableTogether(product: Omit<NewProductWithVariants, 'slug'>): boolean {
  const checked = (values: object | null | undefined, merged: object | undefined) =>
    !values || Object.keys(values).length === 0 || merged !== undefined
  return (
    checked(product.input.metafields, product.metafields) &&
    product.variants.every(({ input, metafields }) => checked(input.metafields, metafields)) &&
    product.variants.length <= MAX_POSITION &&
    product.variants.every(({ input }) => input.position === undefined)
  )
}

/**
 * The unit of work of a bulk create: new products with their variants, as createProductWork
 * then addVariantWork for each variant would leave them, written together in a few
 * statements whatever their number, but for the product's version: created whole, it is at 1
 * (the contract's "The records grow"), not 1 plus one per variant. The rows as they stand
 * after the last variant (positions 1, 2, 3..., a variant without a price at the product's),
 * and the events those units append, in their order, each row as it was at its change. The
 * products_slug_key and sku constraints refuse a slug or sku another product holds: the
 * caller rolls the whole create back. Answers the products' ids.
 */
export function createProductsWork(
  storeId: string,
  products: readonly NewProductWithVariants[],
): Work<string[]> {
  return (db) =>
    inTransaction(db, async (tx) => {
      const rules = await beginProductWrite(tx, storeId, { creates: true })
      const { rows, variants, indexed, events } = newRows(storeId, products)
      await insertProductsWithSlugsSetByHand(tx, storeId, rows)
      await insertNewVariantRows(tx, variants)
      await insertNewIndexRows(tx, storeId, indexed)
      await appendEvents(tx, events)
      const ids = rows.map(({ row }) => row.id)
      await productsWritten(tx, storeId, rules, {
        ids,
        created: true,
        // The variants went in with their products: the documents are read back whole.
        documents: { kind: 'written', ids, locked: true },
      })
      return ids
    })
}

/** The rows of a bulk create, its filter index rows and its events, in their order. */
function newRows(storeId: string, products: readonly NewProductWithVariants[]) {
  const now = nowIso()
  const rows: CountedNewProduct[] = []
  const variants: (NewVariantRow & { position: number; price_e4: number })[] = []
  const events: NewEvent[] = []
  // The filter index rows of the values of filterable definitions, as the creates write them.
  const indexed: NewIndexRow[] = []
  const indexRows = (merged: MergedMetafields, productId: string, recordId: string) =>
    merged.indexed.map((item) => ({ ...item, productId, recordId }))
  for (const { input, slug, metafields, variants: added } of products) {
    const tags = uniqueTags(input.tags ?? [])
    // Its event's object is this row as JSON, as createProductWork's is.
    const row = newProductRow(storeId, input, tags, now)
    if (metafields) {
      row.metafields = JSON.stringify(metafields.values)
      indexed.push(...indexRows(metafields, row.id, row.id))
    }
    const created = { ...row, slug, max_variant_position: 0, version: 1 }
    events.push(eventRow(storeId, pendingEvent('product.created', now), created))
    for (const [i, variant] of added.entries()) {
      // As addVariantWork leaves it: the product's price by default, the next position.
      const fields = newVariantFields(storeId, row.id, variant.input, now)
      if (variant.metafields) {
        fields.metafields = JSON.stringify(variant.metafields.values)
        indexed.push(...indexRows(variant.metafields, row.id, fields.id))
      }
      const stored = { ...fields, price_e4: fields.price_e4 ?? row.price_e4, position: i + 1 }
      variants.push(stored)
      events.push(
        eventRow(storeId, pendingEvent('variant.created', now), { ...stored, version: 1 }),
      )
    }
    const count = added.length
    rows.push({
      row: { ...row, slug, max_variant_position: count, version: 1 },
      tagKeys: JSON.parse(tagKeysJson(tags)) as string[],
    })
  }
  return { rows, variants, indexed, events }
}
