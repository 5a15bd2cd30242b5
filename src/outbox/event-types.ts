/**
 * The event types, in the contract's order: the one list that the outbox, the feed's `type`
 * filter, webhook endpoints' `events` and the admin page's webhook form all read. It imports
 * nothing, so the admin page's bundle can take it as it is.
 */
export const EVENT_TYPES = [
  'product.created',
  'product.updated',
  'product.deleted',
  'variant.created',
  'variant.updated',
  'variant.deleted',
  'collection.created',
  'collection.updated',
  'collection.deleted',
  'collection.products_changed',
] as const

export type EventType = (typeof EVENT_TYPES)[number]
