import { Type, type Static } from 'typebox'
import { Product, Variant } from '../catalog/catalog-records.schemas.js'
import { Collection, ProductsChanged } from '../collections/collection.schemas.js'
import { Timestamp } from '../http/schemas.js'
import { encodeEventCursor } from './event-cursor.js'
import { START } from './event-queries.js'
import { EVENT_TYPES, type EventType } from '../outbox/event-types.js'

export const DEFAULT_EVENT_PAGE_SIZE = 100
export const MAX_EVENT_PAGE_SIZE = 500

const EventTypeSchema = Type.Unsafe<EventType>({
  type: 'string',
  enum: [...EVENT_TYPES],
  description: 'One of the event types',
})

export const ListEventsQuery = Type.Object({
  after: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 128,
      description:
        'nextCursor of a previous page; without it, the feed starts at the oldest kept event',
    }),
  ),
  limit: Type.Optional(
    Type.Integer({ minimum: 1, maximum: MAX_EVENT_PAGE_SIZE, default: DEFAULT_EVENT_PAGE_SIZE }),
  ),
  type: Type.Optional(EventTypeSchema),
})
export type ListEventsQuery = Static<typeof ListEventsQuery>

/** The fields of a record that previousAttributes may list: its own, but id and the counters. */
const attributesOf = (record: typeof Product | typeof Variant | typeof Collection) =>
  Type.Partial(Type.Omit(record, ['id', 'productId', 'version', 'createdAt', 'updatedAt']))

export const CatalogEventSchema = Type.Object({
  id: Type.String({ format: 'uuid', description: 'Unique; the same on every delivery' }),
  type: EventTypeSchema,
  createdAt: Timestamp,
  data: Type.Object({
    object: Type.Union([Product, Variant, Collection, ProductsChanged], {
      description:
        'The product (without variants), the variant or the collection after the change; for ' +
        '*.deleted, before it; for collection.products_changed, the products that entered ' +
        '(`added`) and left (`removed`) the collection',
    }),
    previousAttributes: Type.Optional(
      Type.Union([attributesOf(Product), attributesOf(Variant), attributesOf(Collection)], {
        description:
          'On *.updated only: each field of the record that changed, with its value before ' +
          '(version and updatedAt are not listed)',
      }),
    ),
  }),
})

const EVENT_EXAMPLE = {
  id: '01937c2e-6a4b-7c3d-9e8f-a1b2c3d4e5f6',
  type: 'product.updated',
  createdAt: '2026-11-25T10:15:30.123Z',
  data: {
    object: {
      id: '01937c2e-5f00-7a11-8b22-c3d4e5f60718',
      name: 'T-Shirt',
      slug: 't-shirt',
      status: 'active',
      price: 19.99,
      compareAtPrice: null,
      sku: null,
      description: null,
      barcode: null,
      taxRate: null,
      vendor: null,
      productType: null,
      tags: ['summer'],
      images: [],
      metafields: {},
      version: 2,
      createdAt: '2026-11-25T10:00:00.000Z',
      updatedAt: '2026-11-25T10:15:30.123Z',
    },
    previousAttributes: { status: 'draft', tags: [] },
  },
}

export const EventPage = Type.Object(
  {
    data: Type.Array(CatalogEventSchema),
    nextCursor: Type.String({
      description:
        'Never null: pass it as `after` to continue. On an empty page it is the cursor sent ' +
        '(or, without one, where the kept events start).',
    }),
    hasMore: Type.Boolean({ description: 'Whether more events could be read at once' }),
  },
  {
    description: "A page of the store's events, oldest first",
    examples: [{ data: [EVENT_EXAMPLE], nextCursor: encodeEventCursor(START), hasMore: false }],
  },
)
