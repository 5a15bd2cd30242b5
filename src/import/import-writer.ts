/**
 * Every write an import makes to the catalogue, through the catalogue's units of work: a
 * product's plan one by one (writePlan), a run of new products together (insertNewProducts).
 */
import type { Transaction } from 'kysely'
import {
  createProductsWork,
  creatableTogether,
  type NewProductWithVariants,
} from '../catalog/product-bulk-create-work.js'
import { addVariantWork, updateVariantWork } from '../catalog/variant.service.js'
import type { DB, Executor } from '../db/schema.js'
import { refusal } from './import-errors.js'
import { failed, type Outcome } from './import-outcome.js'
import type { ProductPlan } from './import-plan.js'
import type { MappedProduct } from './product-mapping.js'
import { createProductWork } from '../catalog/product-create-work.js'
import { updateProductWork } from '../catalog/product-update-work.js'

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

/** A planned new product in the catalogue's terms (its bulk create's), but its slug. */
function newProductOf(plan: ProductPlan): Omit<NewProductWithVariants, 'slug'> {
  return {
    input: plan.createInput!,
    metafields: plan.metafields,
    variants: plan.variants.map(({ variant, metafields }) => ({
      input: variant.input,
      metafields,
    })),
  }
}

/**
 * Whether a new product can be written with others (creatableTogether). Metafields go with the
 * batch: the plan has checked them (checkPlanMetafields) and holds the values to write.
 */
export function insertable(plan: ProductPlan): boolean {
  return creatableTogether(newProductOf(plan))
}

/** New products with their variants, written together by the catalogue's bulk create. */
export async function insertNewProducts(
  tx: Transaction<DB>,
  storeId: string,
  run: { product: MappedProduct; plan: ProductPlan }[],
): Promise<void> {
  const products = run.map(({ product, plan }) => ({ ...newProductOf(plan), slug: product.slug }))
  await createProductsWork(storeId, products)(tx)
}
