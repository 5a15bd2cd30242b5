import { API } from '../helpers.js'
import { create, request } from '../process-helpers.js'
import type { Receiver } from '../webhook-receiver.js'
import { sleep, type Call } from './load.js'

/** The sender's timeout in these tests; a claim's lease is this plus 5 s. */
export const TIMEOUT_MS = 2000

/** Retries after about 1, 1, 2, 2 and 3 s: a delivery fails only after some 10 s of failures. */
export const SHORT_RETRY_SCHEDULE = '1,1,2,2,3'

/** The settings of a `catalog serve` that delivers to a loopback receiver. */
export function webhookEnv(DATABASE_URL: string, schedule = SHORT_RETRY_SCHEDULE) {
  return {
    DATABASE_URL,
    WEBHOOK_ALLOW_PRIVATE: '1',
    WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS),
    WEBHOOK_RETRY_SCHEDULE: schedule,
  }
}

/** Subscribes the receiver's /hooks to every event type, and lets it verify what comes. */
export async function subscribe(
  server: { url: string },
  key: string,
  receiver: Receiver,
): Promise<{ id: string }> {
  const endpoint = await create(server, key, '/webhook-endpoints', {
    url: `${receiver.url}/hooks`,
    events: ['*'],
  })
  receiver.trust('/hooks', endpoint.secret)
  return { id: endpoint.id }
}

const answered200 = (call: Call) => call.outcome?.answered === true && call.outcome.status === 200

/** The ids of the records created by the writes answered 200: each has an event. */
export function acknowledgedIds(calls: Call[]): Set<string> {
  return new Set(
    calls.filter(answered200).map((call) => (call.outcome as { body: any }).body.data.id as string),
  )
}

/** The `data.object.id` of every event the receiver has got. */
function receivedObjectIds(receiver: Receiver): Set<string> {
  return new Set(receiver.received.map((r) => JSON.parse(r.body).data.object.id as string))
}

/**
 * Waits until an event of each of `expected` has reached the receiver, or `timeoutMs` has
 * passed; answers those still missing.
 */
export async function waitForDeliveries(
  receiver: Receiver,
  expected: Set<string>,
  timeoutMs: number,
): Promise<string[]> {
  const deadline = Date.now() + timeoutMs
  const missing = () => {
    const got = receivedObjectIds(receiver)
    return [...expected].filter((id) => !got.has(id))
  }
  let left = missing()
  while (left.length > 0 && Date.now() < deadline) {
    await sleep(200)
    left = missing()
  }
  return left
}

/** What the receiver got, counted by webhook-id. */
export function receipts(receiver: Receiver) {
  const perId = new Map<string, number>()
  for (const r of receiver.received) perId.set(r.id, (perId.get(r.id) ?? 0) + 1)
  return {
    /** Every attempt verified. */
    received: receiver.received.length,
    /** Distinct webhook-ids. */
    distinct: perId.size,
    /** webhook-ids received more than once. */
    duplicated: [...perId.values()].filter((n) => n > 1).length,
  }
}

/** A delivery as GET …/deliveries lists it. */
export interface ListedDelivery {
  id: string
  eventId: string
  status: 'pending' | 'succeeded' | 'failed'
  attempts: number
  lastStatusCode: number | null
}

/** Every delivery of the endpoint, page after page. */
export async function listDeliveries(
  server: { url: string },
  key: string,
  endpointId: string,
): Promise<ListedDelivery[]> {
  const all: ListedDelivery[] = []
  let cursor: string | null = null
  do {
    const query: string = cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`
    const page = await request(
      server,
      'GET',
      `${API}/webhook-endpoints/${endpointId}/deliveries?limit=200${query}`,
      { key },
    )
    if (page.status !== 200) throw new Error(`deliveries answered ${page.status}`)
    all.push(...page.body.data)
    cursor = page.body.nextCursor
  } while (cursor !== null)
  return all
}

/**
 * The endpoint's deliveries once none is pending any more (an outcome is recorded just after
 * the receiver answers), or as they are after `timeoutMs`.
 */
export async function settledDeliveries(
  server: { url: string },
  key: string,
  endpointId: string,
  timeoutMs: number,
): Promise<ListedDelivery[]> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const deliveries = await listDeliveries(server, key, endpointId)
    if (deliveries.every((d) => d.status !== 'pending') || Date.now() > deadline) return deliveries
    await sleep(250)
  }
}
