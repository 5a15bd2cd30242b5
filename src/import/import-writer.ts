/**
 * Every write an import makes to the catalogue: a product's plan through the services' units
 * of work (writePlan), and a run of new products whose rows and events are written by hand
 * (insertNewProducts). When the catalogue has bulk creates of its own, they replace the
 * latter here, and nothing outside this file changes.
 */
import type { Transaction } from 'kysely'
import { insertNewIndexRows, type NewIndexRow } from '../attributes/metafield-value.repository.js'
import type { MergedMetafields } from '../attributes/metafield-values.js'
import { MAX_POSITION } from '../catalog/catalog.schemas.js'
import { insertProductsSetByHand, type ImportedProduct } from '../catalog/product.repository.js'
import { createProductWork, newProductRow, updateProductWork } from '../catalog/product.service.js'
import { tagKeysJson, uniqueTags } from '../catalog/record-fields.js'
import { insertVariantRows } from '../catalog/variant.repository.js'
import { addVariantWork, newVariantFields, updateVariantWork } from '../catalog/variant.service.js'
import { lockRulesForProductWrites, refreshMemberships } from '../collections/membership.js'
import type { DB, Executor, NewVariantRow } from '../db/schema.js'
import { newId, nowIso } from '../db/values.js'
import { appendEvents as insertEvents, type NewEvent } from '../events/outbox.js'
import { refreshSearchDocuments } from '../search/search-document.repository.js'
import { refusal } from './import-errors.js'
import { failed, type Outcome } from './import-outcome.js'
import type { ProductPlan } from './import-plan.js'
import type { MappedProduct } from './product-mapping.js'

/**
 * The writes of a plan: the services' units of work, in the caller's transaction. A refusal
 * of the database (a sku another product took meanwhile, say) becomes the row's error; the
 * caller rolls the product back. Anything else (the database gone) is thrown.
 */
export async function writePlan(
  db: Executor,
  storeId: string,
  product: MappedProduct,
  plan: ProductPlan,
): Promise<Outcome> {
  const { slug } = product
  const firstRow = product.rows[0]!
  const { current, createInput, patch } = plan
  const plans = plan.variants
  const outcome: Outcome = {
    created: !current,
    updated: false,
    variantsCreated: 0,
    variantsUpdated: 0,
    errors: [],
    warnings: plan.warnings,
  }

  let productId: string
  try {
    if (!current) {
      productId = (await createProductWork(storeId, createInput!, slug)(db)).id
    } else {
      productId = current.id
      if (Object.keys(patch).length > 0) {
        const after = await updateProductWork(storeId, current.id, patch, undefined)(db)
        outcome.updated = after.version !== current.version
      }
    }
  } catch (error) {
    return failed([refusal(error, firstRow, product, product.columns.handle!)])
  }
  for (const plan of plans) {
    try {
      if (!plan.target) {
        await addVariantWork(storeId, productId, plan.variant.input)(db)
        outcome.variantsCreated++
      } else if (Object.keys(plan.patch).length > 0) {
        const after = await updateVariantWork(
          storeId,
          productId,
          plan.target.id,
          plan.patch,
          undefined,
        )(db)
        if (after.version !== plan.target.version) outcome.variantsUpdated++
      }
    } catch (error) {
      return failed([refusal(error, plan.variant.row, product, null)])
    }
  }
  return outcome
}

/**
 * Whether a new product can be written with others: what addVariantWork would refuse of it
 * (a position) leaves it to it. Metafields go with the batch: the plan has checked them
 * (checkPlanMetafields) and holds the values to write.
 */
export function insertable(plan: ProductPlan): boolean {
  const checked = (values: object | null | undefined, merged: object | undefined) =>
    !values || Object.keys(values).length === 0 || merged !== undefined
  return (
    checked(plan.createInput?.metafields, plan.metafields) &&
    plan.variants.every(({ variant, metafields }) =>
      checked(variant.input.metafields, metafields),
    ) &&
    plan.variants.length <= MAX_POSITION &&
    plan.variants.every(({ variant }) => variant.input.position === undefined)
  )
}

/**
 * New products with their variants, as createProductWork then addVariantWork for each variant
 * would leave them, written together: the rows as they stand after the last variant (version
 * 1 plus one per variant, positions 1, 2, 3..., a variant without a price at the product's),
 * and the events those units append, in their order, each row as it was at its change.
 */
export async function insertNewProducts(
  tx: Transaction<DB>,
  storeId: string,
  run: { product: MappedProduct; plan: ProductPlan }[],
): Promise<void> {
  const now = nowIso()
  const products: ImportedProduct[] = []
  const variants: (NewVariantRow & { position: number; price_e4: number })[] = []
  const events: NewEvent[] = []
  // The filter index rows of the values of filterable definitions, as the creates write them.
  const indexed: NewIndexRow[] = []
  const indexRows = (merged: MergedMetafields, productId: string, recordId: string) =>
    merged.indexed.map((item) => ({ ...item, productId, recordId }))
  const event = (type: string, object: Record<string, unknown>): NewEvent => ({
    storeId,
    id: newId(),
    type,
    createdAt: now,
    object: JSON.stringify(object),
    previous: null,
  })
  for (const { product, plan } of run) {
    const input = plan.createInput!
    const tags = uniqueTags(input.tags ?? [])
    // Its event's object is this row as JSON, as createProductWork's is.
    const row = newProductRow(storeId, input, tags, now)
    if (plan.metafields) {
      row.metafields = JSON.stringify(plan.metafields.values)
      indexed.push(...indexRows(plan.metafields, row.id, row.id))
    }
    events.push(
      event('product.created', { ...row, slug: product.slug, max_variant_position: 0, version: 1 }),
    )
    for (const [i, { variant, metafields }] of plan.variants.entries()) {
      // As addVariantWork leaves it: the product's price by default, the next position.
      const added = newVariantFields(storeId, row.id, variant.input, now)
      if (metafields) {
        added.metafields = JSON.stringify(metafields.values)
        indexed.push(...indexRows(metafields, row.id, added.id))
      }
      const fields = { ...added, price_e4: added.price_e4 ?? row.price_e4, position: i + 1 }
      variants.push(fields)
      events.push(event('variant.created', { ...fields, version: 1 }))
    }
    const count = plan.variants.length
    products.push({
      row: { ...row, slug: product.slug, max_variant_position: count, version: 1 + count },
      tagKeys: JSON.parse(tagKeysJson(tags)) as string[],
    })
  }
  const rulesState = await lockRulesForProductWrites(tx, storeId)
  await insertProductsSetByHand(tx, storeId, products)
  await insertVariantRows(tx, variants)
  await insertNewIndexRows(tx, storeId, indexed)
  await insertEvents(tx, events)
  const ids = products.map(({ row }) => row.id)
  await refreshSearchDocuments(tx, storeId, ids)
  await refreshMemberships(tx, storeId, ids, rulesState)
}
