import { Type, type Static } from 'typebox'
import { Nullable } from '../http/schemas.js'

const DateTime = (description: string) => Type.String({ format: 'date-time', description })

const DELIVERY_EXAMPLE = {
  id: '01936d1e-5f7a-7c3e-9c52-3f1a2b4c5d6e',
  eventId: '01936d1e-5f70-7a11-8b2c-9d8e7f6a5b4c',
  eventType: 'product.created',
  status: 'pending',
  attempts: 1,
  lastAttemptAt: '2026-11-25T10:00:05.120Z',
  lastStatusCode: 503,
  nextAttemptAt: '2026-11-25T10:05:10.004Z',
}

export const WebhookDelivery = Type.Object({
  id: Type.String({ format: 'uuid' }),
  eventId: Type.String({
    format: 'uuid',
    description: 'Also the webhook-id header of every attempt',
  }),
  eventType: Type.String(),
  status: Type.Union([Type.Literal('pending'), Type.Literal('succeeded'), Type.Literal('failed')], {
    description:
      'pending: an attempt is due (or under way); failed: every retry of the schedule failed',
  }),
  attempts: Type.Integer({ minimum: 0, description: 'Attempts made so far' }),
  lastAttemptAt: Nullable(DateTime('When the last attempt started')),
  lastStatusCode: Nullable(
    Type.Integer({ description: "The receiver's status at the last attempt; null if none came" }),
  ),
  nextAttemptAt: Nullable(DateTime('When the next attempt is due; null unless pending')),
})
export type WebhookDelivery = Static<typeof WebhookDelivery>

/** What a delivery's event was about, read from the event's `data.object`. */
export const DeliverySubject = Type.Object(
  {
    id: Type.String({ description: "The product's, variant's or collection's id" }),
    name: Type.String({
      description:
        "Its name (a collection's title) when the event happened; for " +
        "collection.products_changed, the collection's title now ('' once it is deleted)",
    }),
    sku: Nullable(Type.String({ description: "A variant's sku when the event happened" })),
  },
  {
    description:
      'The product, variant or collection the event was about, as the event carries it (for ' +
      'collection.products_changed, the collection of `collectionId`); null once the event is ' +
      'past its retention (`EVENT_RETENTION_DAYS`)',
  },
)
export type DeliverySubject = Static<typeof DeliverySubject>

/** A delivery as the list answers it: with what its event was about. */
export const ListedWebhookDelivery = Type.Object({
  ...WebhookDelivery.properties,
  subject: Nullable(DeliverySubject),
})
export type ListedWebhookDelivery = Static<typeof ListedWebhookDelivery>

export const DeliveryIdParams = Type.Object({
  id: Type.String({ description: 'Webhook endpoint id (UUID)' }),
  deliveryId: Type.String({ description: 'Delivery id (UUID)' }),
})

export const ListDeliveriesQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })),
  cursor: Type.Optional(Type.String({ description: 'nextCursor of the previous page' })),
})

export const DeliveryPage = Type.Object(
  {
    data: Type.Array(ListedWebhookDelivery),
    nextCursor: Nullable(
      Type.String({ description: 'Pass as cursor for the next page; null on the last' }),
    ),
  },
  {
    description: "A page of the endpoint's deliveries, newest first",
    examples: [
      {
        data: [
          {
            ...DELIVERY_EXAMPLE,
            subject: {
              id: '01936d1e-5f6f-7b20-8a3c-1d2e3f4a5b6c',
              name: 'Linen Shirt',
              sku: 'LIN-SHIRT',
            },
          },
        ],
        nextCursor: null,
      },
    ],
  },
)

export const DeliveryResponse = Type.Object(
  { data: WebhookDelivery },
  {
    description: 'The delivery, pending and due now',
    examples: [{ data: { ...DELIVERY_EXAMPLE, nextAttemptAt: '2026-11-25T10:01:00.000Z' } }],
  },
)
