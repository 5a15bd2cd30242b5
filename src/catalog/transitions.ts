import { AppError } from '../errors.js'
import type { ProductStatus } from './catalog.schemas.js'

/**
 * The status changes a product may make (the contract's table). An archived product goes
 * back to draft before it can be active again, as in Shopify's admin: unarchiving never
 * puts a product on sale by surprise.
 */
const NEXT_STATUSES: Record<ProductStatus, readonly ProductStatus[]> = {
  draft: ['active', 'archived'],
  active: ['draft', 'archived'],
  archived: ['draft'],
}

/** Throws invalid_transition unless a product in status `from` may be set to `to`. */
export function checkTransition(from: ProductStatus, to: ProductStatus): void {
  if (from === to || NEXT_STATUSES[from].includes(to)) return
  throw new AppError(
    'invalid_transition',
    `A product cannot go from ${from} to ${to}` +
      (from === 'archived' ? '; set it to draft first.' : '.'),
  )
}

/** The statuses from which a product may not be set to `to`: what the one-statement PATCH bars. */
export function statusesBarredFrom(to: ProductStatus): ProductStatus[] {
  return (Object.keys(NEXT_STATUSES) as ProductStatus[]).filter(
    (from) => from !== to && !NEXT_STATUSES[from].includes(to),
  )
}
