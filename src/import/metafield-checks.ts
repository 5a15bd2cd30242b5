import type { Executor } from '../db/schema.js'
import { checkMetafields, type MergedMetafields } from '../attributes/values/metafield-values.js'
import { productErrors, variantErrors } from './import-errors.js'
import type { ImportError, MappedProduct, MappedVariant } from './product-mapping.js'
import { type MetafieldValues } from '../attributes/values/metafield-types.js'

/** What checkPlanMetafields reads of a product's plan (import-plan.ts), and fills in. */
export interface PlanWithMetafields {
  current: { metafields: MetafieldValues } | undefined
  createInput: { metafields?: MetafieldValues | null } | undefined
  patch: { metafields?: MetafieldValues | null }
  metafields?: MergedMetafields
  variants: {
    variant: MappedVariant
    target: { metafields: MetafieldValues } | undefined
    patch: { metafields?: MetafieldValues | null }
    metafields?: MergedMetafields
  }[]
}

/**
 * Checks the values a product's plan writes against the store's definitions, as the
 * catalogue's create or PATCH checks them (a create: every value; an update: those that
 * change), in a dry run as in a real one: each problem is an error on its row and column. A
 * create's checked values (normalized, with their filter index rows) are kept on the plan,
 * for the batch that inserts new products together.
 */
export async function checkPlanMetafields(
  db: Executor,
  storeId: string,
  product: MappedProduct,
  plan: PlanWithMetafields,
): Promise<ImportError[]> {
  const errors: ImportError[] = []
  const productValues = plan.current ? plan.patch.metafields : plan.createInput?.metafields
  if (productValues && Object.keys(productValues).length > 0) {
    const stored = plan.current?.metafields ?? {}
    const checked = await checkMetafields(db, storeId, 'product', stored, productValues)
    if ('problems' in checked) errors.push(...productErrors(product, checked.problems))
    else if (!plan.current) plan.metafields = checked
  }
  for (const variantPlan of plan.variants) {
    const { target, variant } = variantPlan
    const values = target ? variantPlan.patch.metafields : variant.input.metafields
    if (!values || Object.keys(values).length === 0) continue
    const checked = await checkMetafields(db, storeId, 'variant', target?.metafields ?? {}, values)
    if ('problems' in checked) errors.push(...variantErrors(product, variant, checked.problems))
    else if (!target) variantPlan.metafields = checked
  }
  return errors
}
