/**
 * Every write an import makes to the catalogue, through the catalogue's units of work: a
 * product's plan one by one (writePlan), a run of new products together (insertNewProducts).
 */
import { CompiledQuery, type Transaction } from 'kysely'
import {
  createProductsWork,
  creatableTogether,
  type NewProductWithVariants,
} from '../catalog/product-bulk-create-work.js'
import { addVariantWork, updateVariantWork } from '../catalog/variant.service.js'
import type { DB, Executor } from '../db/schema.js'
import { recordImportHandle } from '../catalog/product-bulk.repository.js'
import { productSlugs } from '../slugs/slug-claims.js'
import { violatedUniqueConstraint } from '../db/driver-errors.js'
import { refusal } from './import-errors.js'
import { failed, type Outcome } from './import-outcome.js'
import { slugWarning, type ProductPlan } from './import-plan.js'
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
  const firstRow = product.rows[0]!
  const { current, createInput, patch } = plan
  let plans = plan.variants
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
      // A handle made into a slug gets the first free one of that base, as a name does
      // (`cafe`, `cafe-2`), and is recorded with its product: a second run finds it so.
      const slug = product.slugMade
        ? await productSlugs.claimFirstFree(db, storeId, product.slug)
        : product.slug
      const created = await createWhole(db, storeId, plan, slug)
      if (created !== undefined) {
        productId = created
        outcome.variantsCreated = plans.length
        plans = []
      } else {
        productId = (await createProductWork(storeId, createInput!, slug)(db)).id
      }
      product.givenSlug = slug
      if (product.slugMade) {
        await recordImportHandle(db, storeId, product.handle, productId)
        outcome.warnings = [slugWarning(product, slug), ...plan.warnings]
      }
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

const SAVEPOINT = CompiledQuery.raw('savepoint import_whole')
const RELEASE = CompiledQuery.raw('release import_whole')
const ROLLBACK = CompiledQuery.raw('rollback to import_whole')

/**
 * A new product written whole with its variants by the bulk create (so at version 1, as a
 * run of new products is), when it can be: its id. Undefined when it cannot (insertable), or
 * when the database refuses its slug or a sku (taken meanwhile): rolled back, and the caller
 * writes it by the units of work one by one, which report the refusal as the row's error.
 */
async function createWhole(
  db: Executor,
  storeId: string,
  plan: ProductPlan,
  slug: string,
): Promise<string | undefined> {
  if (!insertable(plan)) return undefined
  await db.executeQuery(SAVEPOINT)
  try {
    const [id] = await createProductsWork(storeId, [{ ...newProductOf(plan), slug }])(db)
    await db.executeQuery(RELEASE)
    return id
  } catch (error) {
    await db.executeQuery(ROLLBACK)
    await db.executeQuery(RELEASE)
    if (violatedUniqueConstraint(error) === undefined) throw error
    return undefined
  }
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
