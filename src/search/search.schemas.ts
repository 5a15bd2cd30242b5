import { Type, type Static } from 'typebox'
import { DEFAULT_PAGE_SIZE, Status } from '../catalog/catalog.schemas.js'
import { SORTS, type Sort } from './sorts.js'

/** The query string of the product list: search, filters, facets, sorts. */

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
          'Comma-separated, at most 10 of status, vendor, product_type, tag, price, option.<Name>, metafield.<namespace>.<key>',
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
      '^metafield\\..+$': Type.Union(
        [
          QueryText('The product (or a variant) has this value of a filterable attribute'),
          Type.Array(QueryText('Any of these values'), { maxItems: 100 }),
        ],
        {
          description:
            'metafield.<namespace>.<key>=<value>: the value read as the attribute type; a list matches on one item',
        },
      ),
    },
  },
)
export type ListProductsQuery = Static<typeof ListProductsQuery>
