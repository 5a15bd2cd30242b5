import { Type, type Static } from 'typebox'
import { Code, Money, Nullable, Timestamp } from '../http/schemas.js'

export const PRODUCT_STATUSES = ['draft', 'active', 'archived'] as const
export type ProductStatus = (typeof PRODUCT_STATUSES)[number]

export const MAX_POSITION = 2_147_483_647

const Name = Type.String({ minLength: 1, maxLength: 255, description: 'Trimmed' })
const Status = Type.Unsafe<ProductStatus>({ type: 'string', enum: [...PRODUCT_STATUSES] })
const Options = Type.Unsafe<Record<string, string>>({
  type: 'object',
  maxProperties: 50,
  propertyNames: { minLength: 1, maxLength: 64 },
  additionalProperties: { type: 'string', minLength: 1, maxLength: 255 },
  description: 'Option name to chosen value, e.g. {"size": "M", "color": "red"}',
})

/** Request body of POST /products. Every optional field also takes null, meaning "not sent". */
export const CreateProductBody = Type.Object({
  name: Name,
  description: Type.Optional(Nullable(Type.String({ maxLength: 20_000 }))),
  status: Type.Optional(Nullable(Status)),
  price: Type.Optional(Nullable(Money)),
  compare_at_price: Type.Optional(Nullable(Money)),
  sku: Type.Optional(Nullable(Code)),
  barcode: Type.Optional(Nullable(Code)),
  tax_rate: Type.Optional(Nullable(Type.Number({ minimum: 0, maximum: 100 }))),
})
export type CreateProductInput = Static<typeof CreateProductBody>

/** Request body of POST /products/:id/variants. */
export const CreateVariantBody = Type.Object({
  name: Name,
  sku: Type.Optional(Nullable(Code)),
  barcode: Type.Optional(Nullable(Code)),
  price: Type.Optional(Nullable(Money)),
  compare_at_price: Type.Optional(Nullable(Money)),
  options: Type.Optional(Nullable(Options)),
  position: Type.Optional(Nullable(Type.Integer({ minimum: 0, maximum: MAX_POSITION }))),
})
export type CreateVariantInput = Static<typeof CreateVariantBody>

/** The fields of the two bodies that are trimmed before validation. */
export const TRIMMED_FIELDS = ['name', 'sku', 'barcode']

export const Product = Type.Object({
  id: Type.String({ format: 'uuid' }),
  name: Type.String(),
  slug: Type.String(),
  status: Status,
  price: Type.Number(),
  compareAtPrice: Nullable(Type.Number()),
  sku: Nullable(Type.String()),
  description: Nullable(Type.String()),
  barcode: Nullable(Type.String()),
  taxRate: Nullable(Type.Number()),
  createdAt: Timestamp,
  updatedAt: Timestamp,
})
export type Product = Static<typeof Product>

export const Variant = Type.Object({
  id: Type.String({ format: 'uuid' }),
  productId: Type.String({ format: 'uuid' }),
  name: Type.String(),
  sku: Nullable(Type.String()),
  barcode: Nullable(Type.String()),
  price: Type.Number(),
  compareAtPrice: Nullable(Type.Number()),
  options: Type.Object({}, { additionalProperties: Type.String() }),
  position: Type.Integer(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
})
export type Variant = Static<typeof Variant> & { options: Record<string, string> }

export const ProductWithVariants = Type.Object({
  ...Product.properties,
  variants: Type.Array(Variant),
})
export type ProductWithVariants = Product & { variants: Variant[] }

export const ListProductsQuery = Type.Object({
  limit: Type.Integer({ minimum: 1, maximum: 200, default: 50 }),
  cursor: Type.Optional(Type.String({ description: 'nextCursor of the previous page' })),
  status: Type.Optional(Status),
})
export type ListProductsQuery = Static<typeof ListProductsQuery>

export const ProductPage = Type.Object({
  data: Type.Array(Product),
  nextCursor: Nullable(
    Type.String({ description: 'Pass as cursor for the next page; null on the last' }),
  ),
})
