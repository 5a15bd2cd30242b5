import { Metafields, MetafieldsInput } from '../attributes/metafield-definition.schemas.js'
import { Type, type Static } from 'typebox'
import { RECORD_RESPONSE_HEADERS } from '../http/conditional.js'
import { Code, Money, Nullable, Timestamp } from '../http/schemas.js'
import { HTTP_URL } from '../http/validation.js'
import { encodeCursor } from './cursor.js'
import { SORTS, type Sort } from '../search/sorts.js'

export const PRODUCT_STATUSES = ['draft', 'active', 'archived'] as const
export type ProductStatus = (typeof PRODUCT_STATUSES)[number]

export const MAX_POSITION = 2_147_483_647

/** Products on a page of the list when the request does not say. */
export const DEFAULT_PAGE_SIZE = 50

const TaxRate = Type.Number({ minimum: 0, maximum: 100 })
const Name = Type.String({ minLength: 1, maxLength: 255, description: 'Trimmed first' })
const Status = Type.Unsafe<ProductStatus>({ type: 'string', enum: [...PRODUCT_STATUSES] })
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
export const MAX_SET_SLUG_LENGTH = 128
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
  { examples: [{ price: 17.5, compare_at_price: 19.99, tags: ['cotton', 'sale'] }] },
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
  { examples: [{ sku: 'TEE-CB-M-RED-2', weight_grams: 180 }] },
)
export type UpdateVariantInput = Static<typeof UpdateVariantBody>

/** The fields of the bodies that are trimmed before validation. */
export const TRIMMED_FIELDS = ['name', 'sku', 'barcode', 'vendor', 'product_type']

/** The fields of the bodies that are lists of strings, each trimmed before validation. */
export const TRIMMED_LIST_FIELDS = ['tags']

const PRODUCT_EXAMPLE = {
  id: '019aa9a4-6f2e-7c41-9b0d-3f5e2a8c1d70',
  name: 'Crème Brûlée T-Shirt',
  slug: 'creme-brulee-t-shirt',
  status: 'active',
  price: 19.99,
  compareAtPrice: 24.99,
  sku: 'TEE-CB',
  description: 'Soft cotton, printed in Lyon.',
  barcode: null,
  taxRate: 20,
  vendor: 'Atelier Lyon',
  productType: 'T-Shirt',
  tags: ['cotton', 'summer'],
  images: [{ url: 'https://cdn.example.com/tee-cb.jpg', alt: 'The T-shirt, front' }],
  metafields: { 'custom.material': 'cotton' },
  version: 3,
  createdAt: '2026-11-21T10:15:30.123Z',
  updatedAt: '2026-11-21T10:16:02.481Z',
}

const VARIANT_EXAMPLE = {
  id: '019aa9a5-0b31-7e09-8d4a-6c2f90b1e3a5',
  productId: PRODUCT_EXAMPLE.id,
  name: 'M / Red',
  sku: 'TEE-CB-M-RED',
  barcode: null,
  price: 21.5,
  compareAtPrice: null,
  options: { size: 'M', color: 'red' },
  position: 1,
  weightGrams: 180,
  metafields: {},
  version: 1,
  createdAt: '2026-11-21T10:16:02.481Z',
  updatedAt: '2026-11-21T10:16:02.481Z',
}

const Version = Type.Integer({
  minimum: 1,
  description:
    "1 at creation, plus 1 for each change (a product's also for each change of its variants); " +
    'the ETag header carries it',
})

export const Product = Type.Object({
  id: Type.String({ format: 'uuid', description: 'Assigned by the service (UUIDv7, lowercase)' }),
  name: Type.String(),
  slug: Type.String({
    description: 'Made from the name, unique in the store (t-shirt, t-shirt-2, ...)',
  }),
  status: Status,
  price: Type.Number({ description: '0 when not sent' }),
  compareAtPrice: Nullable(Type.Number()),
  sku: Nullable(Type.String()),
  description: Nullable(Type.String()),
  barcode: Nullable(Type.String()),
  taxRate: Nullable(Type.Number({ description: 'VAT rate, in percent' })),
  vendor: Nullable(Type.String()),
  productType: Nullable(Type.String()),
  tags: Type.Array(Type.String(), { description: 'In the order sent; [] when none' }),
  images: Type.Array(Type.Object({ url: Type.String(), alt: Nullable(Type.String()) }), {
    description: 'In the order sent; [] when none',
  }),
  metafields: Metafields,
  version: Version,
  createdAt: Timestamp,
  updatedAt: Timestamp,
})
export type Product = Static<typeof Product>

export const Variant = Type.Object({
  id: Type.String({ format: 'uuid' }),
  productId: Type.String({ format: 'uuid' }),
  name: Type.String(),
  sku: Nullable(Type.String({ description: 'Unique among the variants of the store' })),
  barcode: Nullable(Type.String()),
  price: Type.Number({ description: "The product's price when not sent" }),
  compareAtPrice: Nullable(Type.Number()),
  options: Type.Object(
    {},
    { additionalProperties: Type.String(), description: 'As sent; {} when not sent' },
  ),
  position: Type.Integer({
    description: "When not sent: one more than the highest of the product's variants, or 1",
  }),
  weightGrams: Nullable(Type.Integer()),
  metafields: Metafields,
  version: Version,
  createdAt: Timestamp,
  updatedAt: Timestamp,
})
export type Variant = Static<typeof Variant> & { options: Record<string, string> }

export const ProductWithVariants = Type.Object({
  ...Product.properties,
  variants: Type.Array(Variant, { description: 'By position, then creation' }),
})
export type ProductWithVariants = Product & { variants: Variant[] }

/** Text in a query string; NUL, which no stored text holds (nor PostgreSQL takes), is refused. */
const QueryText = (description: string) =>
  Type.String({ minLength: 1, maxLength: 255, pattern: '^[^\\u0000]*$', description })

/** A filter that may be repeated: any of its values. */
const ManyFilter = (description: string) =>
  Type.Optional(
    Type.Union([QueryText(description), Type.Array(QueryText(description), { maxItems: 100 })], {
      description: `${description}; repeat it for any of several values`,
    }),
  )

export const ListProductsQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: DEFAULT_PAGE_SIZE })),
    cursor: Type.Optional(
      Type.String({
        description: 'nextCursor of the previous page, with the same q, sort and filters',
      }),
    ),
    q: Type.Optional(
      Type.String({
        pattern: '^[^\\u0000]*$',
        description:
          'Words to find (1 to 256 characters after trimming, with a letter or a digit), ' +
          'without case or accents, the last also as the start of a word; or a sku or barcode',
      }),
    ),
    sort: Type.Optional(
      Type.Unsafe<Sort>({
        type: 'string',
        enum: [...SORTS],
        description: 'newest (default without q), relevance (default with q, only with q), ...',
      }),
    ),
    status: Type.Optional(
      Type.Union([Status, Type.Array(Status, { maxItems: 3 })], {
        description: 'Only products of this status; repeat it for any of several',
      }),
    ),
    slug: ManyFilter('Only the product with this slug'),
    vendor: ManyFilter('Only products of this vendor, exactly'),
    product_type: ManyFilter('Only products of this type, exactly'),
    tag: ManyFilter('Only products with this tag, in any case'),
    collection: ManyFilter('Only products in the collection of this id'),
    price_min: Type.Optional(
      Type.Number({ minimum: 0, description: 'Only products whose price is at least this' }),
    ),
    price_max: Type.Optional(
      Type.Number({ minimum: 0, description: 'Only products whose price is at most this' }),
    ),
    facets: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 1000,
        description:
          'Comma-separated, at most 10 of status, vendor, product_type, tag, price, option.<Name>',
      }),
    ),
    facet_limit: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 100, description: 'Values per facet; 20 by default' }),
    ),
  },
  {
    patternProperties: {
      '^option\\..+$': Type.Union(
        [
          QueryText('A variant of the product has this value of option <Name>, in any case'),
          Type.Array(QueryText('Any of these values'), { maxItems: 100 }),
        ],
        { description: 'option.<Name>=<value>: a variant has this value of this option' },
      ),
    },
  },
)
export type ListProductsQuery = Static<typeof ListProductsQuery>

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

/** The answers of the routes: the record inside `data`. */
export const ProductResponse = Type.Object(
  { data: Product },
  {
    description: 'The product',
    examples: [{ data: PRODUCT_EXAMPLE }],
    headers: RECORD_RESPONSE_HEADERS,
  },
)

export const VariantResponse = Type.Object(
  { data: Variant },
  {
    description: 'The variant',
    examples: [{ data: VARIANT_EXAMPLE }],
    headers: RECORD_RESPONSE_HEADERS,
  },
)

export const ProductWithVariantsResponse = Type.Object(
  { data: ProductWithVariants },
  {
    description: 'The product with its variants',
    examples: [{ data: { ...PRODUCT_EXAMPLE, variants: [VARIANT_EXAMPLE] } }],
    headers: RECORD_RESPONSE_HEADERS,
  },
)

export const DeletedResponse = Type.Object(
  {
    data: Type.Object({
      id: Type.String({ format: 'uuid' }),
      deleted: Type.Literal(true),
    }),
  },
  {
    description: 'The record is deleted: every read of it is 404 from now on',
    examples: [{ data: { id: PRODUCT_EXAMPLE.id, deleted: true } }],
  },
)

export const VariantListResponse = Type.Object(
  { data: Type.Array(Variant) },
  { description: "The product's variants", examples: [{ data: [VARIANT_EXAMPLE] }] },
)

export const ProductPage = Type.Object(
  {
    data: Type.Array(Product),
    nextCursor: Nullable(
      Type.String({ description: 'Pass as cursor for the next page; null on the last' }),
    ),
    facets: Type.Optional(
      Type.Record(
        Type.String(),
        Type.Union([
          Type.Array(
            Type.Object({
              value: Type.Union([Type.String(), Type.Number(), Type.Boolean()]),
              count: Type.Integer(),
            }),
          ),
          Type.Object({ min: Nullable(Type.Number()), max: Nullable(Type.Number()) }),
        ]),
        {
          description:
            'With facets: per facet as requested, its values by count (most first), or for price {min, max}',
        },
      ),
    ),
  },
  {
    description: 'A page of products, in the sort asked (newest first by default)',
    examples: [{ data: [PRODUCT_EXAMPLE], nextCursor: encodeCursor(PRODUCT_EXAMPLE) }],
  },
)
