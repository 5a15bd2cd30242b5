/**
 * What a product of the file asks of the store, decided on reads only: checked by the API's
 * own schemas, matched to the stored product and its variants, reduced to the fields that
 * would change. It writes nothing; in a dry run it also finds what only a write would.
 */
import type { MergedMetafields } from '../attributes/values/metafield-values.js'
import { rowToProduct, rowToVariant } from '../catalog/catalog.mappers.js'
import {
  CreateProductBody,
  CreateVariantBody,
  MAX_SET_SLUG_LENGTH,
  TRIMMED_FIELDS,
  UpdateProductBody,
  type CreateProductInput,
  type UpdateProductInput,
  type UpdateVariantInput,
} from '../catalog/catalog.schemas.js'
import { type Product, type Variant } from '../catalog/catalog-records.schemas.js'
import { statusesBarredFrom } from '../catalog/transitions.js'
import type { Executor, ProductRow } from '../db/schema.js'
import type { FieldProblem } from '../errors.js'
import { toFieldProblems } from '../http/field-problems.js'
import { createValidatorCompiler } from '../http/validation.js'
import {
  conflict,
  productErrors,
  statusRefused,
  uniqueErrors,
  variantErrors,
} from './import-errors.js'
import { productChanges, variantChanges } from './import-changes.js'
import { failed, type ImportWarning, type Outcome } from './import-outcome.js'
import { checkPlanMetafields } from './metafield-checks.js'
import {
  clip,
  type ImportError,
  type MappedProduct,
  type MappedVariant,
} from './product-mapping.js'
import { findProductsOfHandles } from '../catalog/product-bulk.repository.js'
import { findProductWithVariants } from '../catalog/variant-read.repository.js'
import { type VariantFields } from '../catalog/variant.columns.js'
import { DUPLICATE_OPTIONS_MESSAGE } from '../catalog/variant-conflicts.js'
import { optionsKey } from '../catalog/variant-merge.js'

/** A product as stored: its row and its variants in order. */
export interface StoredProduct {
  product: ProductRow
  variants: VariantFields[]
}

/** What a product's rows ask of the store: a create or a patch, and each variant's. */
export interface ProductPlan {
  current: Product | undefined
  createInput: CreateProductInput | undefined
  patch: UpdateProductInput
  variants: VariantPlan[]
  /** The rows imported without their sku (--duplicate-skus=clear). */
  warnings: ImportWarning[]
  /** A create's metafields as checked (checkPlanMetafields): the values a batch writes. */
  metafields?: MergedMetafields
}

export interface VariantPlan {
  variant: MappedVariant
  target: Variant | undefined
  patch: UpdateVariantInput
  /** A new variant's metafields as checked, as the product's. */
  metafields?: MergedMetafields
}

/** What an import does with a variant whose sku is taken: refuse its product, or drop the sku. */
export type DuplicateSkus = 'fail' | 'clear'

export const DUPLICATE_SKUS: readonly DuplicateSkus[] = ['fail', 'clear']

/** Who keeps a sku: its product's handle, and the row of the file when it came from the file. */
interface SkuHolder {
  handle: string
  row?: number
}

/**
 * The skus of an import: what it does with a taken one, and the skus the file's imported
 * products keep, each with its product and row, to name them in the message about a later
 * row that asks for one. It grows with the file, by one entry per sku (as the slugs do).
 */
export class ImportSkus {
  readonly kept = new Map<string, { handle: string; slug: string; row: number }>()
  constructor(readonly mode: DuplicateSkus = 'fail') {}

  /** Keeps the skus of a product the import wrote (or, dry, would write). */
  keep(product: MappedProduct, outcome: Outcome): void {
    if (outcome.errors.length > 0) return
    const cleared = new Set(
      outcome.warnings.filter((warning) => warning.field === 'sku').map((warning) => warning.row),
    )
    const slug = product.givenSlug ?? product.slug
    for (const variant of product.variants) {
      const { sku } = variant.input
      if (!sku || cleared.has(variant.row) || this.kept.has(sku)) continue
      this.kept.set(sku, { handle: product.handle, slug, row: variant.row })
    }
  }
}

/** The message of duplicate_sku (and of its warning), naming the product that keeps it. */
export function skuTakenMessage(sku: string, holder: SkuHolder): string {
  const row = holder.row === undefined ? '' : ` (row ${holder.row})`
  return `SKU "${clip(sku)}" is already used by product "${holder.handle}"${row}`
}

/** The slug of the store's product whose variant has this sku, if any. */
async function storedSkuHolder(
  db: Executor,
  storeId: string,
  sku: string,
): Promise<string | undefined> {
  const row = await db
    .selectFrom('variants as v')
    .innerJoin('products as p', (join) =>
      join.onRef('p.store_id', '=', 'v.store_id').onRef('p.id', '=', 'v.product_id'),
    )
    .select('p.slug')
    .where('v.store_id', '=', storeId)
    .where('v.sku', '=', sku)
    .executeTakeFirst()
  return row?.slug
}

/**
 * What the file's earlier products hold, for a dry run, which writes nothing that later
 * products' checks could meet: their skus, and the stored skus they give up (a real run
 * frees those for later products). It grows with the file; a real run keeps none (the
 * database holds what was written). Their slugs are kept by importCatalog, for both.
 */
export class DryRunState {
  readonly skus = new Set<string>()
  readonly released = new Set<string>()
}

/**
 * Plans (and, with `dry`, checks) one product, reading what the store holds of it first: the
 * way of a product that a batch cannot take with others (see writeChunk), and of a dry run.
 */
export async function planStoredProduct(
  db: Executor,
  storeId: string,
  product: MappedProduct,
  dry: DryRunState | undefined,
  skus: ImportSkus,
): Promise<ProductPlan | Outcome> {
  const found = await findProductsOfHandles(db, storeId, product.slugMade ? [product.handle] : [], [
    product.slug,
  ])
  const existingRow = storedMatch(product, found)
  const existing = existingRow
    ? await findProductWithVariants(db, storeId, existingRow.id)
    : undefined
  return planProduct(db, storeId, product, existing, dry, skus, true)
}

/** The stores' products a chunk's handles may name (findProductsOfHandles). */
export type FoundProducts = Awaited<ReturnType<typeof findProductsOfHandles>>

/**
 * The stored product a product of the file is (decision 0059): the one recorded with its
 * handle (a handle made into another slug, on an earlier import), else the one with its slug,
 * unless an earlier product of the file has that slug (matchBySlug false) or, for a handle
 * made into a slug, another handle is recorded with it; else none, and it is created.
 */
export function storedMatch(product: MappedProduct, found: FoundProducts): ProductRow | undefined {
  const recorded = product.slugMade ? found.byHandle.get(product.handle) : undefined
  if (recorded) return recorded
  if (!product.matchBySlug) return undefined
  const bySlug = found.bySlug.get(product.slug)
  if (!bySlug) return undefined
  // A valid handle is the slug (an export writes slugs as handles): its product, whichever
  // handle created it. A handle made into a slug is not the product of another handle's.
  const { importHandle } = bySlug
  return !product.slugMade || importHandle === null || importHandle === product.handle
    ? bySlug.product
    : undefined
}

/**
 * The warning of a handle made into another slug (too long, accents, emoji): the slug its
 * product has, which the product's URLs use.
 */
export function slugWarning(product: MappedProduct, slug: string): ImportWarning {
  return {
    row: product.rows[0]!,
    handle: product.handle,
    field: 'slug',
    message:
      `the handle is not a valid slug (lowercase a-z, 0-9 and single - between them, 1 to ` +
      `${MAX_SET_SLUG_LENGTH} characters): the product's slug is "${slug}"`,
  }
}

/** The compiled validators of the API's own schemas: one rule, one place. */
const compile = createValidatorCompiler()
const validators = {
  createProduct: compile({ schema: CreateProductBody, httpPart: 'body', method: 'POST', url: '' }),
  updateProduct: compile({ schema: UpdateProductBody, httpPart: 'body', method: 'PATCH', url: '' }),
  createVariant: compile({ schema: CreateVariantBody, httpPart: 'body', method: 'POST', url: '' }),
}

type Validator = (typeof validators)[keyof typeof validators]

/** Problems of `body` by the schema, after the trimming the API does before validation. */
function check(validator: Validator, body: Record<string, unknown>): FieldProblem[] {
  for (const field of TRIMMED_FIELDS) {
    const value = body[field]
    if (typeof value === 'string') body[field] = value.trim()
  }
  if (validator(body) === true) return []
  return toFieldProblems(
    (validator as unknown as { errors: Parameters<typeof toFieldProblems>[0] }).errors ?? [],
  )
}

/**
 * Plans (and, with `dry`, checks) one product: found by its slug, created or updated field
 * by field, its variants matched by sku, then by options, created or updated. A refusal of
 * the database (a sku another product took meanwhile, say) becomes the row's error; the
 * caller rolls the product back. Anything else (the database gone) is thrown.
 *
 * A sku another product holds is looked up when `lookUp` (a caller that knows no product
 * does passes false): refused as duplicate_sku naming the holder, or, with `skus.mode`
 * clear, dropped from the variant with a warning. The database's unique index still refuses
 * a sku taken meanwhile.
 */
export async function planProduct(
  db: Executor,
  storeId: string,
  product: MappedProduct,
  existing: StoredProduct | undefined,
  dry: DryRunState | undefined,
  skus: ImportSkus,
  lookUp: boolean,
): Promise<ProductPlan | Outcome> {
  const { handle } = product
  const firstRow = product.rows[0]!
  const errors: ImportError[] = []
  const warnings: ImportWarning[] = []

  // The product's own fields, by the rules of a create or of a PATCH.
  let createInput: CreateProductInput | undefined
  let patch: UpdateProductInput = {}
  const current = existing && rowToProduct(existing.product)
  if (!current) {
    const body = { ...product.fields } as Record<string, unknown>
    errors.push(...productErrors(product, check(validators.createProduct, body)))
    createInput = body as CreateProductInput
  } else {
    const body = { ...product.fields } as Record<string, unknown>
    errors.push(...productErrors(product, check(validators.updateProduct, body)))
    patch = productChanges(current, body as UpdateProductInput)
    if (patch.status && statusesBarredFrom(patch.status).includes(current.status)) {
      errors.push(statusRefused(firstRow, handle, product, current.status, patch.status))
    }
  }

  // The variants: checked, matched to stored ones, each a create, an update or nothing.
  const stored = (existing?.variants ?? []).map(rowToVariant)
  const matched = new Set<string>()
  const skusInProduct = new Map<string, number>()
  const optionsInProduct = new Map<string, number>()
  const plans: VariantPlan[] = []
  // Who keeps a sku this product's variant asks for: an earlier row of the product, another
  // product of the file or of the store; undefined when it is free or this product's own.
  const holderOf = async (sku: string): Promise<SkuHolder | undefined> => {
    const earlier = skusInProduct.get(sku)
    if (earlier !== undefined) return { handle, row: earlier }
    if (!lookUp || stored.some((v) => v.sku === sku)) return undefined
    const kept = skus.kept.get(sku)
    if (dry) {
      if (dry.skus.has(sku)) return kept ?? { handle: '' }
      if (dry.released.has(sku)) return undefined
    }
    const slug = await storedSkuHolder(db, storeId, sku)
    if (slug === undefined) return undefined
    return kept?.slug === slug ? kept : { handle: slug }
  }
  for (let variant of product.variants) {
    const problems = check(validators.createVariant, variant.input as Record<string, unknown>)
    if (problems.length > 0) {
      errors.push(...variantErrors(product, variant, problems))
      continue
    }
    const key = optionsKey(variant.input.options ?? {})
    if (variant.input.sku) {
      const sku = variant.input.sku
      const holder = await holderOf(sku)
      if (holder && skus.mode === 'fail') {
        errors.push(
          conflict(
            variant.row,
            handle,
            product.variantColumns.sku!,
            'duplicate_sku',
            skuTakenMessage(sku, holder),
          ),
        )
        continue
      }
      if (holder) {
        warnings.push({
          row: variant.row,
          handle,
          field: 'sku',
          message: `${skuTakenMessage(sku, holder)}; the variant was imported without a sku`,
        })
        // Created without a sku; a stored variant (matched by its options) keeps its own.
        const sets = new Set(variant.sets)
        sets.delete('sku')
        variant = { ...variant, input: { ...variant.input, sku: null }, sets }
      } else {
        skusInProduct.set(sku, variant.row)
      }
    }
    const { sku } = variant.input
    if (key !== null) {
      const earlier = optionsInProduct.get(key)
      if (earlier !== undefined) {
        errors.push(
          conflict(
            variant.row,
            handle,
            product.variantColumns.options!,
            'duplicate_options',
            `the same options as row ${earlier}`,
          ),
        )
        continue
      }
      optionsInProduct.set(key, variant.row)
    }
    const target = sku ? stored.find((v) => v.sku === sku) : undefined
    if (target) matched.add(target.id)
    plans.push({ variant, target, patch: {} })
  }
  // Then by options, among the stored variants no row's sku names: a variant a later row
  // finds by its sku is that row's, not an earlier row's whose options it has.
  for (const plan of plans) {
    const key = optionsKey(plan.variant.input.options ?? {})
    plan.target ??= stored.find((v) => !matched.has(v.id) && optionsKey(v.options) === key)
    if (plan.target) {
      matched.add(plan.target.id)
      plan.patch = variantChanges(plan.target, plan.variant)
    }
  }
  // The product's price is its first variant's, unless the export's Product Price column gives
  // it.
  const price = product.fields.price === undefined ? firstVariantPrice(stored, plans) : undefined
  if (price !== undefined) {
    if (createInput) createInput.price = price
    else if (current && price !== current.price) patch.price = price
  }
  // A handle made into a slug: the stored product's, or (a dry run's new product) the base
  // the write would claim; a real run's new product is warned of by writePlan, which claims.
  product.givenSlug = current?.slug ?? product.slug
  if (product.slugMade && (current || dry)) {
    warnings.unshift(slugWarning(product, current?.slug ?? product.slug))
  }
  const plan: ProductPlan = { current, createInput, patch, variants: plans, warnings }
  // Values of custom attributes, by the store's definitions: a dry run finds what a real one does.
  errors.push(...(await checkPlanMetafields(db, storeId, product, plan)))
  if (errors.length > 0) return failed(uniqueErrors(errors))
  // Options the product's stored variants hold: a real run's database refuses the first
  // write that would repeat them (no check-then-write); a dry run looks, and says the same.
  const clash = dry && firstOptionsClash(stored, plans)
  if (clash) {
    return failed([
      conflict(
        clash.variant.row,
        handle,
        product.variantColumns.options!,
        'duplicate_options',
        DUPLICATE_OPTIONS_MESSAGE,
      ),
    ])
  }
  return plan
}

/**
 * The first of `plans` whose write the database would refuse as duplicate_options, the
 * variants written in order as writePlan writes them: a create, or an update that changes the
 * options, to options another variant of the product holds at that point.
 */
function firstOptionsClash(stored: Variant[], plans: VariantPlan[]): VariantPlan | undefined {
  const holders = new Map<string, Variant | VariantPlan>()
  for (const variant of stored) {
    const key = optionsKey(variant.options)
    if (key !== null) holders.set(key, variant)
  }
  for (const plan of plans) {
    const { target } = plan
    if (target && plan.patch.options === undefined) continue
    const holder = target ?? plan
    const key = optionsKey((target ? plan.patch.options : plan.variant.input.options) ?? {})
    if (key !== null && (holders.get(key) ?? holder) !== holder) return plan
    if (target) {
      const before = optionsKey(target.options)
      if (before !== null && holders.get(before) === target) holders.delete(before)
    }
    if (key !== null) holders.set(key, holder)
  }
  return undefined
}

/**
 * The price of the product's first variant (the lowest position) after the import, when the
 * file gives it: its stored first variant's row of the file, or, for a product without
 * variants yet, the file's first. Undefined when the file does not price that variant, which
 * leaves the product's price as it is (or the default of a create).
 */
function firstVariantPrice(stored: Variant[], plans: VariantPlan[]): number | undefined {
  const first = stored[0]
  const plan = first ? plans.find((p) => p.target?.id === first.id) : plans[0]
  if (!plan?.variant.sets.has('price')) return undefined
  return plan.variant.input.price ?? undefined
}

/** Whether a plan of a stored product changes nothing: then nothing is written. */
export function writesNothing(plan: ProductPlan): boolean {
  return (
    Object.keys(plan.patch).length === 0 &&
    plan.variants.every(({ target, patch }) => target && Object.keys(patch).length === 0)
  )
}
