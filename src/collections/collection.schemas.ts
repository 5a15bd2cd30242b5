import { Type, type Static } from 'typebox'
import { MAX_SET_SLUG_LENGTH, PRODUCT_STATUSES, SLUG_PATTERN } from '../catalog/catalog.schemas.js'
import { RECORD_RESPONSE_HEADERS } from '../http/conditional.js'
import { Nullable, Timestamp } from '../http/schemas.js'
import { SHOPIFY_NAMES } from '../http/validation.js'
import { MAX_RULES, RULE_RELATIONS } from './membership/rules.js'
import { SORT_ORDERS, type SortOrder } from './membership/sort-orders.js'

/** Collections a store may have. */
export const MAX_COLLECTIONS = 5_000
/** Product ids one manual add takes. */
export const MAX_ADDED_PRODUCTS = 250

const Title = Type.String({ minLength: 1, maxLength: 255, description: 'Trimmed first' })
const Handle = Type.String({
  minLength: 1,
  maxLength: MAX_SET_SLUG_LENGTH,
  pattern: SLUG_PATTERN,
  description: 'Lowercase a-z and 0-9, single dashes between them; unique among the collections',
})
const Description = Nullable(Type.String({ maxLength: 20_000 }))
const SortOrderSchema = Type.Unsafe<SortOrder>({ type: 'string', enum: [...SORT_ORDERS] })

const RULE_DESCRIPTION =
  '{field, relation, value}. Fields: name, vendor, product_type (equals, not_equals, contains, ' +
  'not_contains, starts_with, ends_with), tag (equals, not_equals), price (a number: equals, ' +
  'greater_than, less_than), status (equals, not_equals), option.<Name> (equals), ' +
  'metafield.<namespace>.<key> of a filterable product attribute. Text compared without case. ' +
  'Each is checked by the service, which names a problem as rules[i].field, rules[i].relation ' +
  'or rules[i].value'

/** A rule as the API shows it. */
const RuleSchema = Type.Object({
  field: Type.String(),
  relation: Type.Unsafe<(typeof RULE_RELATIONS)[number]>({
    type: 'string',
    enum: [...RULE_RELATIONS],
  }),
  value: Type.Union([Type.String(), Type.Number()]),
})

/**
 * A rule as a request sends it: its items are checked by the service (rules.ts), so each
 * problem is named `rules[i].<part>`.
 */
const RuleInput = Type.Unsafe<Record<string, unknown>>({ description: RULE_DESCRIPTION })
const RulesInput = Type.Array(RuleInput, { minItems: 1, maxItems: MAX_RULES })

/** Shopify's name of a collection's description: refused naming it (validation.ts). */
const COLLECTION_SHOPIFY_NAMES = { body_html: 'description' }

export const CreateCollectionBody = Type.Object(
  {
    title: Title,
    handle: Type.Optional(Nullable(Handle)),
    description: Type.Optional(Description),
    rules: Type.Optional(Nullable(RulesInput)),
    disjunctive: Type.Optional(Nullable(Type.Boolean())),
    sort_order: Type.Optional(Nullable(SortOrderSchema)),
  },
  {
    [SHOPIFY_NAMES]: COLLECTION_SHOPIFY_NAMES,
    examples: [
      {
        title: 'Under 20',
        rules: [
          { field: 'price', relation: 'less_than', value: 20 },
          { field: 'status', relation: 'equals', value: 'active' },
        ],
        sort_order: 'price',
      },
    ],
  },
)
export type CreateCollectionInput = Static<typeof CreateCollectionBody>

export const UpdateCollectionBody = Type.Object(
  {
    title: Type.Optional(Title),
    handle: Type.Optional(Handle),
    description: Type.Optional(Description),
    rules: Type.Optional(Nullable(RulesInput)),
    disjunctive: Type.Optional(Type.Boolean()),
    sort_order: Type.Optional(SortOrderSchema),
  },
  {
    [SHOPIFY_NAMES]: COLLECTION_SHOPIFY_NAMES,
    examples: [{ title: 'Summer sale', disjunctive: true }],
  },
)
export type UpdateCollectionInput = Static<typeof UpdateCollectionBody>

export const TRIMMED_COLLECTION_FIELDS = ['title']

export const PreviewRulesBody = Type.Object(
  {
    rules: RulesInput,
    disjunctive: Type.Optional(Nullable(Type.Boolean())),
  },
  {
    examples: [
      {
        rules: [
          { field: 'price', relation: 'less_than', value: 20 },
          { field: 'tag', relation: 'equals', value: 'summer' },
        ],
        disjunctive: false,
      },
    ],
  },
)
export type PreviewRulesInput = Static<typeof PreviewRulesBody>

export const RulesPreview = Type.Object({
  rules: Type.Array(RuleSchema, { description: 'The rules as a collection would store them' }),
  disjunctive: Type.Boolean(),
  productsCount: Type.Integer({
    minimum: 0,
    description: 'The products of the store these rules match now',
  }),
})
export type RulesPreview = Static<typeof RulesPreview>

export const RulesPreviewResponse = Type.Object(
  { data: RulesPreview },
  {
    description: 'What a smart collection with these rules would hold; nothing is written',
    examples: [
      {
        data: {
          rules: [{ field: 'price', relation: 'less_than', value: 20 }],
          disjunctive: false,
          productsCount: 42,
        },
      },
    ],
  },
)

export const Collection = Type.Object({
  id: Type.String({ format: 'uuid' }),
  title: Type.String(),
  handle: Type.String(),
  description: Nullable(Type.String()),
  kind: Type.Unsafe<'manual' | 'smart'>({ type: 'string', enum: ['manual', 'smart'] }),
  rules: Nullable(Type.Array(RuleSchema, { description: RULE_DESCRIPTION })),
  disjunctive: Type.Boolean(),
  sortOrder: SortOrderSchema,
  productsCount: Type.Integer({ minimum: 0, description: 'Read fresh with every answer' }),
  version: Type.Integer({ minimum: 1 }),
  createdAt: Timestamp,
  updatedAt: Timestamp,
})
export type Collection = Static<typeof Collection>

const COLLECTION_EXAMPLE = {
  id: '019ab0c4-1f2e-7c41-9b0d-3f5e2a8c1d70',
  title: 'Under 20',
  handle: 'under-20',
  description: null,
  kind: 'smart',
  rules: [{ field: 'price', relation: 'less_than', value: 20 }],
  disjunctive: false,
  sortOrder: 'price',
  productsCount: 42,
  version: 1,
  createdAt: '2026-11-30T10:15:30.123Z',
  updatedAt: '2026-11-30T10:15:30.123Z',
}

export const CollectionResponse = Type.Object(
  { data: Collection },
  {
    description: 'The collection',
    examples: [{ data: COLLECTION_EXAMPLE }],
    headers: RECORD_RESPONSE_HEADERS,
  },
)

export const CollectionPage = Type.Object(
  {
    data: Type.Array(Collection),
    nextCursor: Nullable(
      Type.String({ description: 'Pass as cursor for the next page; null on the last' }),
    ),
  },
  {
    description: 'A page of collections, newest first',
    examples: [{ data: [COLLECTION_EXAMPLE], nextCursor: null }],
  },
)

const QueryText = (description: string) =>
  Type.String({ minLength: 1, maxLength: 255, pattern: '^[^\\u0000]*$', description })

export const ListCollectionsQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })),
  cursor: Type.Optional(Type.String({ description: 'nextCursor of the previous page' })),
  handle: Type.Optional(QueryText('Only the collection with this handle')),
})
export type ListCollectionsQuery = Static<typeof ListCollectionsQuery>

export const ListCollectionProductsQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })),
  cursor: Type.Optional(Type.String({ description: 'nextCursor of the previous page' })),
  status: Type.Optional(Type.Unsafe<string>({ type: 'string', enum: [...PRODUCT_STATUSES] })),
})
export type ListCollectionProductsQuery = Static<typeof ListCollectionProductsQuery>

export const AddProductsBody = Type.Object(
  {
    product_ids: Type.Array(
      Type.Unsafe<unknown>({ description: 'A product id of the store (UUID)' }),
      { minItems: 1, maxItems: MAX_ADDED_PRODUCTS },
    ),
  },
  { examples: [{ product_ids: ['019aa9a4-6f2e-7c41-9b0d-3f5e2a8c1d70'] }] },
)
export type AddProductsInput = Static<typeof AddProductsBody>

export const MoveProductBody = Type.Object(
  {
    position: Type.Integer({
      minimum: 1,
      maximum: 2_147_483_647,
      description: '1 is first; past the last, the product goes last',
    }),
  },
  { examples: [{ position: 1 }] },
)
export type MoveProductInput = Static<typeof MoveProductBody>

export const CollectionIdParams = Type.Object({
  id: Type.String({ description: 'Collection id (UUID)' }),
})
export const CollectionProductParams = Type.Object({
  id: Type.String({ description: 'Collection id (UUID)' }),
  productId: Type.String({ description: 'Product id (UUID)' }),
})

/** The data of a collection.products_changed event. */
export const ProductsChanged = Type.Object({
  collectionId: Type.String({ format: 'uuid' }),
  added: Type.Array(Type.String({ format: 'uuid' })),
  removed: Type.Array(Type.String({ format: 'uuid' })),
})
