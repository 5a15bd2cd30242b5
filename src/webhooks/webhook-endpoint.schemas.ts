import { Type, type Static } from 'typebox'
import { Nullable, Timestamp } from '../http/schemas.js'
import { EVENT_TYPES, type EventType } from '../outbox/event-types.js'
import { MAX_WEBHOOK_URL_LENGTH } from './webhook-url.js'

/** Subscribes an endpoint to every event type, present and future. */
export const ALL_EVENTS = '*'

const EventType = Type.Unsafe<EventType | typeof ALL_EVENTS>({
  type: 'string',
  enum: [...EVENT_TYPES, ALL_EVENTS],
})

const Events = Type.Array(EventType, {
  minItems: 1,
  maxItems: EVENT_TYPES.length,
  uniqueItems: true,
  description: `Event types, each once, or ["${ALL_EVENTS}"] for every type`,
})

const Url = Type.String({
  minLength: 1,
  maxLength: MAX_WEBHOOK_URL_LENGTH,
  description:
    'An absolute https:// URL whose host resolves to public addresses only (loopback, private, ' +
    'link-local, CGNAT and unspecified addresses are refused); http:// and private addresses ' +
    'only where the service runs with WEBHOOK_ALLOW_PRIVATE=1',
})

const Description = Nullable(Type.String({ maxLength: 1024, description: 'Trimmed first' }))

/** Fields trimmed before validation. */
export const TRIMMED_ENDPOINT_FIELDS = ['url', 'description'] as const

export const CreateWebhookEndpointBody = Type.Object(
  {
    url: Url,
    events: Events,
    description: Type.Optional(Description),
  },
  {
    examples: [
      {
        url: 'https://erp.example.com/hooks/catalog',
        events: ['product.created', 'product.updated'],
        description: 'ERP sync',
      },
    ],
  },
)
export type CreateWebhookEndpointInput = Static<typeof CreateWebhookEndpointBody>

/** Request body of PATCH /webhook-endpoints/:id, a JSON Merge Patch (null only for description). */
export const UpdateWebhookEndpointBody = Type.Object(
  {
    url: Type.Optional(Url),
    events: Type.Optional(Events),
    description: Type.Optional(Description),
    enabled: Type.Optional(Type.Boolean()),
  },
  { examples: [{ enabled: false }] },
)
export type UpdateWebhookEndpointInput = Static<typeof UpdateWebhookEndpointBody>

const ENDPOINT_EXAMPLE = {
  id: '019a8f6e-1c2d-7b3a-9e4f-5a6b7c8d9e0f',
  url: 'https://erp.example.com/hooks/catalog',
  events: ['product.created', 'product.updated'],
  description: 'ERP sync',
  enabled: true,
  createdAt: '2026-11-25T10:15:30.123Z',
  updatedAt: '2026-11-25T10:15:30.123Z',
}

const endpointFields = {
  id: Type.String({ format: 'uuid' }),
  url: Type.String(),
  events: Type.Array(EventType),
  description: Nullable(Type.String()),
  enabled: Type.Boolean({ description: 'A disabled endpoint is sent nothing' }),
  createdAt: Timestamp,
  updatedAt: Timestamp,
}

export const WebhookEndpoint = Type.Object(endpointFields)
export type WebhookEndpoint = Static<typeof WebhookEndpoint>

export const CreatedWebhookEndpoint = Type.Object({
  ...endpointFields,
  secret: Type.String({
    pattern: '^whsec_[A-Za-z0-9+/]{43}=$',
    description:
      'The signing secret, `whsec_` and the base64 of 32 random bytes: in this answer only ' +
      '(and its replays under the same Idempotency-Key). Keep it to verify signatures.',
  }),
})
export type CreatedWebhookEndpoint = Static<typeof CreatedWebhookEndpoint>

export const CreatedWebhookEndpointResponse = Type.Object(
  { data: CreatedWebhookEndpoint },
  {
    description: 'The endpoint, with its signing secret (shown this once)',
    examples: [
      {
        data: {
          ...ENDPOINT_EXAMPLE,
          secret: 'whsec_' + 'MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'.padEnd(43, 'A') + '=',
        },
      },
    ],
  },
)

export const WebhookEndpointResponse = Type.Object(
  { data: WebhookEndpoint },
  { description: 'The endpoint (never its secret)', examples: [{ data: ENDPOINT_EXAMPLE }] },
)

export const WebhookEndpointList = Type.Object(
  { data: Type.Array(WebhookEndpoint) },
  {
    description: "The store's endpoints (at most 16), oldest first",
    examples: [{ data: [ENDPOINT_EXAMPLE] }],
  },
)

export const EndpointIdParams = Type.Object({
  id: Type.String({ description: 'Webhook endpoint id (UUID)' }),
})
