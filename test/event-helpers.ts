import assert from 'node:assert/strict'
import type { TestApi } from './helpers.js'

/**
 * Every event of the key's store, oldest first, following the cursor to the end. On
 * PostgreSQL an event appears once every transaction older than its own has ended, which
 * other tests sharing the server can delay a little: a reader waiting for `atLeast` events
 * polls, as a real reader would, then reads once more to see any extra one.
 */
export async function readFeed(
  api: TestApi,
  options: { atLeast?: number; key?: string; query?: string } = {},
): Promise<Record<string, any>[]> {
  const deadline = Date.now() + 10_000
  for (;;) {
    const events: Record<string, any>[] = []
    let after: string | undefined
    for (;;) {
      const query = [options.query, after && `after=${after}`].filter(Boolean).join('&')
      const res = await api.get(`/events${query ? `?${query}` : ''}`, options.key)
      assert.equal(res.statusCode, 200, res.body)
      const page = res.json()
      events.push(...page.data)
      after = page.nextCursor
      if (!page.hasMore) break
    }
    if (events.length >= (options.atLeast ?? 0) || Date.now() > deadline) return events
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}
