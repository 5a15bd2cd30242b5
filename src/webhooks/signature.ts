import { createHmac, randomBytes } from 'node:crypto'

/** The prefix of a signing secret, as Standard Webhooks libraries expect it. */
export const SECRET_PREFIX = 'whsec_'

/** A new signing secret: `whsec_` and the base64 of 32 random bytes. */
export function newWebhookSecret(): string {
  return SECRET_PREFIX + randomBytes(32).toString('base64')
}

/** What one attempt of one delivery signs. */
export interface SignedMessage {
  /** The event id: `webhook-id`, the same on every attempt. */
  id: string
  /** Unix seconds of this attempt: `webhook-timestamp`. */
  timestamp: number
  /** The exact bytes sent as the body. */
  body: string
}

/**
 * The `webhook-signature` value of Standard Webhooks (standardwebhooks.com): `v1,` and the
 * base64 HMAC-SHA256 of `<id>.<timestamp>.<body>`, keyed with the base64-decoded part of the
 * secret after `whsec_`.
 */
export function webhookSignature(secret: string, message: SignedMessage): string {
  const key = Buffer.from(
    secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret,
    'base64',
  )
  const mac = createHmac('sha256', key)
    .update(`${message.id}.${message.timestamp}.${message.body}`)
    .digest('base64')
  return `v1,${mac}`
}

/** The three headers of an attempt: webhook-id, webhook-timestamp and webhook-signature. */
export function webhookHeaders(secret: string, message: SignedMessage): Record<string, string> {
  return {
    'webhook-id': message.id,
    'webhook-timestamp': String(message.timestamp),
    'webhook-signature': webhookSignature(secret, message),
  }
}
