/**
 * A dry run: each product planned and checked as a real run would, and counted as it would
 * be written, with nothing written (what the file's earlier products hold is kept instead).
 */
import type { Executor } from '../db/schema.js'
import { failed, type Outcome } from './import-outcome.js'
import {
  planStoredProduct,
  type DryRunState,
  type ImportSkus,
  type ProductPlan,
} from './import-plan.js'
import type { MappedProduct } from './product-mapping.js'

/** A dry run's batch: the same checks, on reads only, with what the file holds kept here. */
export async function checkBatch(
  db: Executor,
  storeId: string,
  products: MappedProduct[],
  dry: DryRunState,
  skus: ImportSkus,
): Promise<Outcome[]> {
  const outcomes: Outcome[] = []
  for (const product of products) {
    const outcome =
      product.errors.length > 0
        ? failed(product.errors)
        : await checkProduct(db, storeId, product, dry, skus)
    skus.keep(product, outcome)
    outcomes.push(outcome)
  }
  return outcomes
}

/** One product of a dry run: planned, checked, and counted as a real run would write it. */
async function checkProduct(
  db: Executor,
  storeId: string,
  product: MappedProduct,
  dry: DryRunState,
  skus: ImportSkus,
): Promise<Outcome> {
  const plan = await planStoredProduct(db, storeId, product, dry, skus)
  return 'variants' in plan ? countPlan(product, plan, dry) : plan
}

/** A dry run's outcome of a plan: what a real run would count; the file's skus kept. */
function countPlan(product: MappedProduct, plan: ProductPlan, dry: DryRunState): Outcome {
  const outcome: Outcome = {
    created: !plan.current,
    updated: Object.keys(plan.patch).length > 0,
    variantsCreated: 0,
    variantsUpdated: 0,
    errors: [],
    warnings: plan.warnings,
  }
  for (const { target, patch, variant } of plan.variants) {
    if (!target) outcome.variantsCreated++
    else if (Object.keys(patch).length > 0) outcome.variantsUpdated++
    if (target?.sku && patch.sku !== undefined) dry.released.add(target.sku)
    if (variant.input.sku) dry.skus.add(variant.input.sku)
  }
  return outcome
}
