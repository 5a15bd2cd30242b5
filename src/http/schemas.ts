import { Type, type Static, type TSchema } from 'typebox'

/**
 * `schema`, or null. A type list rather than anyOf, so a wrong value gets one clear
 * validation message ("must be a number").
 */
export function Nullable<T extends TSchema>(schema: T) {
  const { type, enum: allowed, ...rest } = schema as unknown as { type: string; enum?: unknown[] }
  return Type.Unsafe<Static<T> | null>({
    ...rest,
    type: [type, 'null'],
    ...(allowed ? { enum: [...allowed, null] } : {}),
  })
}

/** The body of every error response. */
export const ErrorBody = Type.Object(
  {
    error: Type.String({ description: 'Machine-readable error code, e.g. validation_failed' }),
    message: Type.String({ description: 'One sentence for a person' }),
    details: Type.Optional(
      Type.Array(
        Type.Object({
          field: Type.String({ description: 'Request field, e.g. price or options.color' }),
          message: Type.String({ description: 'What is wrong with it, e.g. must be >= 0' }),
        }),
      ),
    ),
  },
  { $id: 'ErrorBody' },
)

/** Responses that any authenticated route may give besides its own. */
export function withErrors<R extends Record<number, TSchema>>(responses: R) {
  return {
    ...responses,
    401: ErrorBody,
    403: ErrorBody,
    429: ErrorBody,
    500: ErrorBody,
    503: ErrorBody,
  }
}

export const Timestamp = Type.String({
  format: 'date-time',
  description: 'ISO 8601 UTC with milliseconds, e.g. 2026-11-21T10:15:30.123Z',
})

/** A money amount: 0 to 1,000,000,000 with at most four decimal places. */
export const Money = Type.Number({
  minimum: 0,
  maximum: 1_000_000_000,
  'x-max-decimals': 4,
  description: 'At most 4 decimal places; returned exactly as sent',
})

/** A trimmed code such as a sku or barcode: up to 255 characters, Shopify's bound. */
export const Code = Type.String({ minLength: 1, maxLength: 255 })

export const IdParams = Type.Object({ id: Type.String({ description: 'Product id (UUID)' }) })
