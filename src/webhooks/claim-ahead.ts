import type { DueDelivery } from './claim-queries.js'

// How far ahead the dispatcher claims deliveries: how long a claim's lease lasts, how many an
// endpoint may hold, how long one claimed ahead may wait for a slot.

/** The lease of a claim outlasts the attempt's timeout by this much. */
export const LEASE_MARGIN_MS = 5000
/**
 * Deliveries claimed per endpoint at most, in flight and waiting, as a multiple of the
 * endpoint's bound in flight: a pass claims the next ones while the current ones are sent,
 * so that a freed slot is filled at once and one write serves several rounds of attempts.
 * An endpoint whose last attempt failed is claimed for its free slots only (a multiple of 1):
 * a dead receiver's deliveries would wait out MAX_WAIT_MS and be given back.
 */
export const CLAIM_AHEAD = 16
/**
 * A delivery claimed ahead starts within this time of its claim, or is released: so that it
 * ends within timeout + LEASE_MARGIN_MS of its claim, before its lease, as one claimed for a
 * free slot does.
 */
export const MAX_WAIT_MS = LEASE_MARGIN_MS - 1000

/**
 * The due deliveries (in due order) that a pass claims: at most `free` in all, and for each
 * endpoint at most `room(endpoint)` (its held limit less what it holds); the others stay due
 * for a later pass.
 */
export function pickToClaim(
  due: readonly DueDelivery[],
  free: number,
  room: (endpoint: string) => number,
): DueDelivery[] {
  const picked: DueDelivery[] = []
  const taken = new Map<string, number>()
  for (const delivery of due) {
    if (picked.length >= free) break
    const endpoint = delivery.endpoint_id
    const n = taken.get(endpoint) ?? 0
    if (n >= room(endpoint)) continue
    taken.set(endpoint, n + 1)
    picked.push(delivery)
  }
  return picked
}
