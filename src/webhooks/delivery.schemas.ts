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
    data: Type.Array(WebhookDelivery),
    nextCursor: Nullable(
      Type.String({ description: 'Pass as cursor for the next page; null on the last' }),
    ),
  },
  {
    description: "A page of the endpoint's deliveries, newest first",
    examples: [{ data: [DELIVERY_EXAMPLE], nextCursor: null }],
  },
)

export const DeliveryResponse = Type.Object(
  { data: WebhookDelivery },
  {
    description: 'The delivery, pending and due now',
    examples: [{ data: { ...DELIVERY_EXAMPLE, nextAttemptAt: '2026-11-25T10:01:00.000Z' } }],
  },
)
