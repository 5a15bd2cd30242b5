import http from 'node:http'
import type { AddressInfo } from 'node:net'
import type { TestContext } from 'node:test'
import { Webhook } from 'standardwebhooks'

/** One delivery as a receiver got it: verified, or why not. */
export interface Received {
  path: string
  id: string
  body: string
  at: number
}

/**
 * What the receiver answers an attempt with, after verifying it: a status, or 'hang' (never
 * answers), or a redirect elsewhere, or a status after a delay (a receiver doing some work).
 */
export type Answer = number | 'hang' | { redirect: string } | { status: number; afterMs: number }

export interface Receiver {
  /** http://127.0.0.1:<port> */
  url: string
  /** Every attempt that passed verification, in order of arrival. */
  received: Received[]
  /** Every attempt that failed verification, with why: must stay empty. */
  rejected: string[]
  /**
   * Attempts that arrived while another attempt of the same webhook-id to the same path was
   * still unanswered, as `<path> <webhook-id>`.
   */
  overlapping: string[]
  /** Sets the secret of the endpoint whose URL path is `path` (known after it is created). */
  trust(path: string, secret: string): void
  /** Resolves when `count` attempts passed verification (or throws after `timeoutMs`). */
  waitFor(count: number, timeoutMs?: number): Promise<void>
  /** Stops listening and drops its connections: attempts meanwhile find the port refused. */
  down(): Promise<void>
  /** Listens again, on the same port. */
  up(): Promise<void>
}

/**
 * A webhook receiver on a loopback port, as a customer would write one: each request is
 * verified with the published Standard Webhooks library (standardwebhooks), against the
 * secret of its endpoint (by URL path), which refuses a bad signature or a timestamp more
 * than 5 minutes away; a webhook-id seen before with another body is refused too. Then it
 * answers what `answer` says for that path.
 */
export async function startReceiver(
  t: TestContext,
  answer: (path: string, id: string, count: number) => Answer = () => 200,
): Promise<Receiver> {
  const secrets = new Map<string, Webhook>()
  const bodies = new Map<string, string>()
  const received: Received[] = []
  const rejected: string[] = []
  const overlapping: string[] = []
  const counts = new Map<string, number>()
  const unanswered = new Map<string, number>()
  const waiters = new Set<() => void>()
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8')
      const path = request.url ?? '/'
      const id = String(request.headers['webhook-id'])
      const verifier = secrets.get(path)
      try {
        if (!verifier) throw new Error(`no endpoint at ${path}`)
        if (request.headers['content-type'] !== 'application/json') throw new Error('content-type')
        verifier.verify(body, request.headers as Record<string, string>)
        const before = bodies.get(id)
        if (before !== undefined && before !== body)
          throw new Error(`id ${id} replayed with another body`)
        bodies.set(id, body)
      } catch (error) {
        rejected.push(`${path} ${id}: ${(error as Error).message}`)
        response.writeHead(400).end()
        return
      }
      const key = `${path} ${id}`
      const count = (counts.get(key) ?? 0) + 1
      counts.set(key, count)
      if ((unanswered.get(key) ?? 0) > 0) overlapping.push(key)
      unanswered.set(key, (unanswered.get(key) ?? 0) + 1)
      // Answered, or its connection gone (the sender gave up): no longer in flight.
      response.once('close', () => unanswered.set(key, unanswered.get(key)! - 1))
      received.push({ path, id, body, at: Date.now() })
      waiters.forEach((waiter) => waiter())
      const what = answer(path, id, count)
      if (what === 'hang') return
      if (typeof what === 'number') response.writeHead(what).end('ok')
      else if ('redirect' in what) response.writeHead(302, { location: what.redirect }).end()
      else setTimeout(() => response.writeHead(what.status).end('ok'), what.afterMs)
    })
  })
  const listen = (port: number) =>
    new Promise<void>((resolve, reject) => {
      server.once('error', reject)
      server.listen(port, '127.0.0.1', () => {
        server.off('error', reject)
        resolve()
      })
    })
  const close = () =>
    new Promise<void>((resolve) => {
      if (!server.listening) return resolve()
      server.close(() => resolve())
      server.closeAllConnections()
    })
  await listen(0)
  t.after(close)
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    rejected,
    overlapping,
    down: close,
    up: () => listen(port),
    trust: (path, secret) => secrets.set(path, new Webhook(secret)),
    waitFor: (count, timeoutMs = 10_000) =>
      new Promise<void>((resolve, reject) => {
        const check = () => {
          if (received.length >= count) {
            waiters.delete(check)
            clearTimeout(timer)
            resolve()
          }
        }
        const timer = setTimeout(() => {
          waiters.delete(check)
          reject(new Error(`received ${received.length} of ${count} within ${timeoutMs} ms`))
        }, timeoutMs)
        waiters.add(check)
        check()
      }),
  }
}
