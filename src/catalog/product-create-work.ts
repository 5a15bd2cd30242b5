import { indexMetafields, mergeMetafields } from '../attributes/values/metafield-values.js'
import { violatedUniqueConstraint } from '../db/driver-errors.js'
import type { Executor } from '../db/schema.js'
import { newId, nowIso } from '../db/values.js'
import { appendEvent, pendingEvent } from '../outbox/outbox.js'
import { beginProductWrite, productsWritten } from './product-write.js'
import { rowToProduct } from './catalog.mappers.js'
import { type CreateProductInput } from './catalog.schemas.js'
import { type Product } from './catalog-records.schemas.js'
import { toStoredAmount, toStoredAmountOrNull } from './money.js'
import type { Work } from '../db/unit-of-work.js'
import { duplicateSlug } from '../errors.js'
import { normalizeImages, tagKeysJson, uniqueTags } from './record-fields.js'
import { slugify } from '../slugs/slug.js'
import {
  insertProductWithSlugSetByHand,
  insertProductWithUniqueSlug,
} from './product-create.repository.js'
import { type MetafieldValues } from '../attributes/values/metafield-types.js'
import { inTransaction } from '../db/transactions.js'

/**
 * The unit of work of a product's create (POST /products, an import's new product). With
 * `slug` (an import's handle), the product gets that slug as if set by hand: 409
 * duplicate_slug when another product of the store has it.
 */
export function createProductWork(
  storeId: string,
  input: CreateProductInput,
  slug?: string,
): Work<Product> {
  return (db) =>
    inTransaction(db, async (tx) => {
      const rules = await beginProductWrite(tx, storeId, { creates: true })
      const product = await createProductIn(tx, storeId, input, slug)
      await productsWritten(tx, storeId, rules, {
        ids: [product.id],
        created: true,
        documents: { kind: 'created', product: { ...product, product_type: product.productType } },
      })
      return product
    })
}

/**
 * The row of a new product but its slug, as a create writes it, in the column order its
 * product.created event shows (an import's batch builds its rows with this too).
 */
export function newProductRow(
  storeId: string,
  input: CreateProductInput,
  tags: string[],
  now: string,
) {
  return {
    store_id: storeId,
    id: newId(),
    name: input.name,
    status: input.status ?? 'draft',
    description: input.description ?? null,
    price_e4: toStoredAmount(input.price ?? 0),
    compare_at_price_e4: toStoredAmountOrNull(input.compare_at_price),
    sku: input.sku ?? null,
    barcode: input.barcode ?? null,
    tax_rate: input.tax_rate ?? null,
    vendor: input.vendor ?? null,
    product_type: input.product_type ?? null,
    tags: JSON.stringify(tags),
    images: JSON.stringify(normalizeImages(input.images ?? [])),
    created_at: now,
    updated_at: now,
    metafields: '{}',
  }
}

/**
 * A create with `metafields` checks them against the store's product definitions and writes
 * their filter index with the product; one without is the plain create.
 */
async function createProductIn(
  tx: Executor,
  storeId: string,
  input: CreateProductInput,
  slugSetByHand?: string,
): Promise<Product> {
  const sent = input.metafields ?? {}
  if (Object.keys(sent).length === 0) return createProductRow(tx, storeId, input, slugSetByHand)
  const merged = await mergeMetafields(tx, storeId, 'product', {}, sent)
  const product = await createProductRow(tx, storeId, input, slugSetByHand, merged.values)
  await indexMetafields(tx, { storeId, recordId: product.id, productId: product.id }, merged)
  return product
}

async function createProductRow(
  db: Executor,
  storeId: string,
  input: CreateProductInput,
  slugSetByHand?: string,
  metafields?: MetafieldValues,
): Promise<Product> {
  const tags = uniqueTags(input.tags ?? [])
  const row = {
    ...newProductRow(storeId, input, tags, nowIso()),
    ...(metafields && { metafields: JSON.stringify(metafields) }),
  }
  const slug =
    slugSetByHand === undefined
      ? await insertProductWithUniqueSlug(
          db,
          { ...row, tag_keys: tagKeysJson(tags) },
          slugify(input.name),
          pendingEvent('product.created'),
        )
      : await insertWithSlugSetByHand(
          db,
          storeId,
          { ...row, tag_keys: tagKeysJson(tags) },
          slugSetByHand,
        )
  return rowToProduct({ ...row, slug, max_variant_position: 0, version: 1 })
}

/** The hand-set slug's insert (an import's handle) and its product.created event. */
async function insertWithSlugSetByHand(
  db: Executor,
  storeId: string,
  row: ReturnType<typeof newProductRow> & { tag_keys: string },
  slug: string,
): Promise<string> {
  try {
    await insertProductWithSlugSetByHand(db, row, slug)
  } catch (error) {
    if (violatedUniqueConstraint(error) !== 'products_slug_key') throw error
    throw duplicateSlug()
  }
  const { tag_keys: _, ...stored } = row
  const object = { ...stored, slug, max_variant_position: 0, version: 1 }
  await appendEvent(db, storeId, { type: 'product.created', object })
  return slug
}
