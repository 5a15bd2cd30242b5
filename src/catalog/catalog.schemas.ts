import { MetafieldsInput } from '../attributes/values/metafield-value.schemas.js'
import { Type, type Static } from 'typebox'
import { Code, Money, Nullable } from '../http/schemas.js'
import { HTTP_URL, SHOPIFY_NAMES } from '../http/validation.js'

/**
 * The catalogue's field rules (types, bounds, trimming) and its request bodies. The records
 * it answers are in catalog-records.schemas.ts; the product list's query string is search's
 * (search/search.schemas.ts).
 */

export const PRODUCT_STATUSES = ['draft', 'active', 'archived'] as const
export type ProductStatus = (typeof PRODUCT_STATUSES)[number]

export const MAX_POSITION = 2_147_483_647

/** Products on a page of the list when the request does not say. */
export const DEFAULT_PAGE_SIZE = 50

const TaxRate = Type.Number({ minimum: 0, maximum: 100 })
const Name = Type.String({ minLength: 1, maxLength: 255, description: 'Trimmed first' })
export const Status = Type.Unsafe<ProductStatus>({ type: 'string', enum: [...PRODUCT_STATUSES] })
/** A trimmed label: vendor, product type, or one tag. */
const Label = Type.String({ minLength: 1, maxLength: 255, description: 'Trimmed first' })
const Tags = Type.Array(Label, {
  maxItems: 250,
  description:
    'Each trimmed; a tag equal to an earlier one but for case is dropped, the first spelling kept',
})
const Image = Type.Object({
  url: Type.String({
    maxLength: 2048,
    [HTTP_URL]: true,
    description:
      'An absolute http:// or https:// URL with a host; no whitespace, control characters or backslashes',
  }),
  alt: Type.Optional(Nullable(Type.String({ maxLength: 512 }))),
})
const Images = Type.Array(Image, { maxItems: 250 })
const WeightGrams = Type.Integer({ minimum: 0, maximum: 1_000_000_000 })
const Position = Type.Integer({ minimum: 0, maximum: MAX_POSITION })

/** A slug set by hand: lowercase letters and digits, single dashes between them. */
export const SLUG_PATTERN = '^[a-z0-9]+(-[a-z0-9]+)*$'
export const MAX_SET_SLUG_LENGTH = 255
const Slug = Type.String({
  minLength: 1,
  maxLength: MAX_SET_SLUG_LENGTH,
  pattern: SLUG_PATTERN,
  description: 'Lowercase a-z and 0-9, single dashes between them; unique in the store',
})

const Options = Type.Unsafe<Record<string, string>>({
  type: 'object',
  maxProperties: 50,
  propertyNames: { minLength: 1, maxLength: 64 },
  additionalProperties: { type: 'string', minLength: 1, maxLength: 255 },
  description: 'Option name to chosen value, e.g. {"size": "M", "color": "red"}',
})

/**
 * Shopify's names of these bodies' fields: sent, they are refused naming the field meant
 * (the contract's Field rules), never ignored.
 */
const PRODUCT_SHOPIFY_NAMES = { title: 'name', body_html: 'description' }
const VARIANT_SHOPIFY_NAMES = { title: 'name' }

/** Request body of POST /products. Every optional field also takes null, meaning "not sent". */
export const CreateProductBody = Type.Object(
  {
    name: Name,
    description: Type.Optional(Nullable(Type.String({ maxLength: 20_000 }))),
    status: Type.Optional(Nullable(Status)),
    price: Type.Optional(Nullable(Money)),
    compare_at_price: Type.Optional(Nullable(Money)),
    sku: Type.Optional(Nullable(Code)),
    barcode: Type.Optional(Nullable(Code)),
    tax_rate: Type.Optional(Nullable(TaxRate)),
    vendor: Type.Optional(Nullable(Label)),
    product_type: Type.Optional(Nullable(Label)),
    tags: Type.Optional(Nullable(Tags)),
    images: Type.Optional(Nullable(Images)),
    metafields: Type.Optional(Nullable(MetafieldsInput)),
  },
  {
    [SHOPIFY_NAMES]: PRODUCT_SHOPIFY_NAMES,
    examples: [
      {
        name: 'Crème Brûlée T-Shirt',
        description: 'Soft cotton, printed in Lyon.',
        status: 'active',
        price: 19.99,
        compare_at_price: 24.99,
        sku: 'TEE-CB',
        tax_rate: 20,
        vendor: 'Atelier Lyon',
        tags: ['cotton', 'summer'],
      },
    ],
  },
)
export type CreateProductInput = Static<typeof CreateProductBody>

/** Request body of POST /products/:id/variants. */
export const CreateVariantBody = Type.Object(
  {
    name: Name,
    sku: Type.Optional(Nullable(Code)),
    barcode: Type.Optional(Nullable(Code)),
    price: Type.Optional(Nullable(Money)),
    compare_at_price: Type.Optional(Nullable(Money)),
    options: Type.Optional(Nullable(Options)),
    position: Type.Optional(Nullable(Position)),
    weight_grams: Type.Optional(Nullable(WeightGrams)),
    metafields: Type.Optional(Nullable(MetafieldsInput)),
  },
  {
    [SHOPIFY_NAMES]: VARIANT_SHOPIFY_NAMES,
    examples: [
      { name: 'M / Red', sku: 'TEE-CB-M-RED', price: 21.5, options: { size: 'M', color: 'red' } },
    ],
  },
)
export type CreateVariantInput = Static<typeof CreateVariantBody>

/**
 * Request body of PATCH /products/:id, a JSON Merge Patch: a field left out is unchanged, a
 * field sent replaces the stored value, null clears it. Fields that cannot be empty refuse null.
 */
export const UpdateProductBody = Type.Object(
  {
    name: Type.Optional(Name),
    slug: Type.Optional(Slug),
    description: Type.Optional(Nullable(Type.String({ maxLength: 20_000 }))),
    status: Type.Optional(Status),
    price: Type.Optional(Money),
    compare_at_price: Type.Optional(Nullable(Money)),
    sku: Type.Optional(Nullable(Code)),
    barcode: Type.Optional(Nullable(Code)),
    tax_rate: Type.Optional(Nullable(TaxRate)),
    vendor: Type.Optional(Nullable(Label)),
    product_type: Type.Optional(Nullable(Label)),
    tags: Type.Optional(Nullable(Tags)),
    images: Type.Optional(Nullable(Images)),
    metafields: Type.Optional(Nullable(MetafieldsInput)),
  },
  {
    [SHOPIFY_NAMES]: PRODUCT_SHOPIFY_NAMES,
    examples: [{ price: 17.5, compare_at_price: 19.99, tags: ['cotton', 'sale'] }],
  },
)
export type UpdateProductInput = Static<typeof UpdateProductBody>

/** Request body of PATCH /products/:id/variants/:variantId, a JSON Merge Patch. */
export const UpdateVariantBody = Type.Object(
  {
    name: Type.Optional(Name),
    sku: Type.Optional(Nullable(Code)),
    barcode: Type.Optional(Nullable(Code)),
    price: Type.Optional(Money),
    compare_at_price: Type.Optional(Nullable(Money)),
    options: Type.Optional(Nullable(Options)),
    position: Type.Optional(Position),
    weight_grams: Type.Optional(Nullable(WeightGrams)),
    metafields: Type.Optional(Nullable(MetafieldsInput)),
  },
  {
    [SHOPIFY_NAMES]: VARIANT_SHOPIFY_NAMES,
    examples: [{ sku: 'TEE-CB-M-RED-2', weight_grams: 180 }],
  },
)
export type UpdateVariantInput = Static<typeof UpdateVariantBody>

/** The fields of the bodies that are trimmed before validation. */
export const TRIMMED_FIELDS = ['name', 'sku', 'barcode', 'vendor', 'product_type']

/** The fields of the bodies that are lists of strings, each trimmed before validation. */
export const TRIMMED_LIST_FIELDS = ['tags']

/** The sku lookup of variants (GET /variants?sku=). */
export const FindVariantsQuery = Type.Object({
  // Not blank: trimmed, it would be the empty sku, which no variant has (400, as without it).
  sku: Type.String({
    minLength: 1,
    maxLength: 255,
    pattern: '^(?!\\s*$)[^\\u0000]*$',
    description: 'Compared after trimming; not blank',
  }),
})
export type FindVariantsQuery = Static<typeof FindVariantsQuery>
