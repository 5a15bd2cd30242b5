import { randomUUID } from 'node:crypto'
import { API } from '../helpers.js'

/** How one request ended: an HTTP answer, or no answer at all (a refused or broken connection). */
export type Outcome =
  | { answered: true; status: number; body: any; replayed: boolean; ms: number }
  | { answered: false; error: string; ms: number }

export interface Call {
  path: string
  body: Record<string, unknown>
  idempotencyKey: string
  requestId: string
  /** performance.now() when the request was handed to fetch. */
  sentAt: number
  outcome?: Outcome
}

const REQUEST_TIMEOUT_MS = 20_000

/** One POST under the API prefix over real HTTP (fetch: pooled keep-alive connections). */
export async function post(
  baseUrl: string,
  key: string,
  call: Pick<Call, 'path' | 'body' | 'idempotencyKey' | 'requestId'>,
): Promise<Outcome> {
  const started = performance.now()
  try {
    const response = await fetch(`${baseUrl}${API}${call.path}`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${key}`,
        'content-type': 'application/json',
        'idempotency-key': call.idempotencyKey,
        'x-request-id': call.requestId,
      },
      body: JSON.stringify(call.body),
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    })
    const text = await response.text()
    let body: unknown = text
    try {
      body = JSON.parse(text)
    } catch {
      // Left as text: an assertion shows it.
    }
    return {
      answered: true,
      status: response.status,
      body,
      replayed: response.headers.get('idempotent-replayed') === 'true',
      ms: performance.now() - started,
    }
  } catch (error) {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause
    return {
      answered: false,
      error: cause?.code ?? cause?.message ?? String(error),
      ms: performance.now() - started,
    }
  }
}

export interface Load {
  /** Every request sent so far, in the order sent. */
  readonly calls: Call[]
  /** Resolves once this many requests have been answered 200. */
  acknowledged(count: number): Promise<void>
  /** Asks the clients to stop after their current request. */
  stop(): void
  /** Resolves when every client has stopped. */
  readonly done: Promise<void>
}

/**
 * Clients creating products and adding two variants to each, as fast as they are answered,
 * each request with an Idempotency-Key and an X-Request-Id of its own. A client stops at its
 * first request that gets no answer (the server is gone) or, with `stopOnError`, no 200.
 */
export function startCatalogLoad(options: {
  url: () => string
  key: string
  /** Makes names and skus unique to this load. */
  prefix: string
  clients: number
  stopOnError?: boolean
}): Load {
  const calls: Call[] = []
  let stopped = false
  let acknowledged = 0
  let waiters: { count: number; resolve: () => void }[] = []
  let sequence = 0

  const send = async (path: string, body: Record<string, unknown>): Promise<Call> => {
    const call: Call = {
      path,
      body,
      idempotencyKey: randomUUID(),
      requestId: `${options.prefix}-${++sequence}`,
      sentAt: performance.now(),
    }
    calls.push(call)
    call.outcome = await post(options.url(), options.key, call)
    if (call.outcome.answered && call.outcome.status === 200) {
      acknowledged++
      waiters = waiters.filter((waiter) => {
        if (acknowledged < waiter.count) return true
        waiter.resolve()
        return false
      })
    }
    return call
  }
  const goOn = (call: Call) =>
    !stopped &&
    call.outcome!.answered &&
    (call.outcome!.status === 200 || options.stopOnError === false)

  const client = async (n: number) => {
    for (let i = 1; !stopped; i++) {
      const name = `${options.prefix}-c${n}-p${i}`
      const product = await send('/products', { name, sku: name, price: i })
      if (!goOn(product)) return
      const created = product.outcome!
      if (!created.answered || created.status !== 200) continue
      const productId: string = created.body.data.id
      for (const v of [1, 2]) {
        const variant = await send(`/products/${productId}/variants`, {
          name: `Variant ${v}`,
          sku: `${name}-v${v}`,
          options: { size: String(v) },
        })
        if (!goOn(variant)) return
      }
    }
  }

  const done = Promise.all(Array.from({ length: options.clients }, (_, n) => client(n + 1))).then(
    () => {
      for (const waiter of waiters) waiter.resolve()
    },
  )
  return {
    calls,
    acknowledged: (count) =>
      acknowledged >= count
        ? Promise.resolve()
        : new Promise((resolve) => waiters.push({ count, resolve })),
    stop: () => {
      stopped = true
    },
    done,
  }
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** A whole number of milliseconds between min and max, for "a random moment". */
export const randomMs = (min: number, max: number) => min + Math.floor(Math.random() * (max - min))

/** How many times each value comes, in order of value: e.g. "1: 310, 2: 45, 3: 12". */
export function tally(values: (number | string)[]): string {
  const counts = new Map<number | string, number>()
  for (const value of values) counts.set(value, (counts.get(value) ?? 0) + 1)
  return (
    [...counts]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([value, count]) => `${value}: ${count}`)
      .join(', ') || 'none'
  )
}
