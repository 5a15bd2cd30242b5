import { Type, type Static } from 'typebox'
import { Metafields } from '../attributes/values/metafield-value.schemas.js'
import { RECORD_RESPONSE_HEADERS } from '../http/conditional.js'
import { Nullable, Timestamp } from '../http/schemas.js'
import { Status } from './catalog.schemas.js'
import { encodeCursor } from '../http/page-cursor.js'

/** The records of the catalogue as the API answers them, and the answers that carry them. */

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
