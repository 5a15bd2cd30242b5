import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import {
  decideOutcome,
  EVENT_DELETED,
  statusOutcome,
  type AttemptReport,
  type DeliveryState,
} from '../src/webhooks/delivery-outcome.js'
import { DEFAULT_RETRY_SCHEDULE_SECONDS } from '../src/webhooks/retry-schedule.js'

// Contract, part 2: "An answer 2xx within WEBHOOK_TIMEOUT_MS succeeds; anything else (another
// status, a timeout, a refused connection) is retried after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h
// and 10 h (each with up to 10 % jitter), then the delivery is failed. [...] Redirects are not
// followed (a failure)." And a manual retry: "if it fails too, the delivery stays failed".

const schedule = DEFAULT_RETRY_SCHEDULE_SECONDS
const startedAt = new Date('2026-11-29T10:00:00.000Z')
/** The attempt took 1.5 s: the next one's delay counts from here. */
const endedAt = new Date('2026-11-29T10:00:01.500Z')
const after = (ms: number) => new Date(endedAt.getTime() + ms).toISOString()

/** An attempt as the sender reports a status (the sender reads the same rule). */
const answered = (statusCode: number): AttemptReport => {
  const { statusCode: code, error } = statusOutcome(statusCode)
  return { statusCode: code, error, startedAt, endedAt }
}
/** An attempt that got no status. */
const unanswered = (error: string): AttemptReport => ({ error, startedAt, endedAt })

const first: DeliveryState = { attempts: 0, manualRetry: false, eventDeleted: false }

describe('webhook delivery outcome: what an attempt comes to', () => {
  const cases: {
    name: string
    attempt: AttemptReport
    delivery?: DeliveryState
    jitter?: number
    expect: {
      status: 'succeeded' | 'pending' | 'failed'
      nextAttemptAt: string | null
      lastStatusCode: number | null
      lastError: string | null
    }
  }[] = [
    {
      name: '200 is delivered',
      attempt: answered(200),
      expect: { status: 'succeeded', nextAttemptAt: null, lastStatusCode: 200, lastError: null },
    },
    {
      name: '204 is delivered',
      attempt: answered(204),
      expect: { status: 'succeeded', nextAttemptAt: null, lastStatusCode: 204, lastError: null },
    },
    {
      name: '299 is delivered',
      attempt: answered(299),
      expect: { status: 'succeeded', nextAttemptAt: null, lastStatusCode: 299, lastError: null },
    },
    {
      name: '301 is a redirect, not followed: retried 5 s after the attempt ended',
      attempt: answered(301),
      expect: {
        status: 'pending',
        nextAttemptAt: after(5000),
        lastStatusCode: 301,
        lastError: 'redirect 301 not followed',
      },
    },
    {
      name: '302 likewise',
      attempt: answered(302),
      expect: {
        status: 'pending',
        nextAttemptAt: after(5000),
        lastStatusCode: 302,
        lastError: 'redirect 302 not followed',
      },
    },
    {
      name: '400 is retried',
      attempt: answered(400),
      expect: {
        status: 'pending',
        nextAttemptAt: after(5000),
        lastStatusCode: 400,
        lastError: 'status 400',
      },
    },
    {
      name: '404 is retried',
      attempt: answered(404),
      expect: {
        status: 'pending',
        nextAttemptAt: after(5000),
        lastStatusCode: 404,
        lastError: 'status 404',
      },
    },
    {
      name: '410 is retried like any other status (the contract makes no exception)',
      attempt: answered(410),
      expect: {
        status: 'pending',
        nextAttemptAt: after(5000),
        lastStatusCode: 410,
        lastError: 'status 410',
      },
    },
    {
      name: '429 is retried on the schedule: Retry-After is not read (the contract has only the schedule)',
      attempt: answered(429),
      expect: {
        status: 'pending',
        nextAttemptAt: after(5000),
        lastStatusCode: 429,
        lastError: 'status 429',
      },
    },
    {
      name: '500 is retried',
      attempt: answered(500),
      expect: {
        status: 'pending',
        nextAttemptAt: after(5000),
        lastStatusCode: 500,
        lastError: 'status 500',
      },
    },
    {
      name: '503 is retried',
      attempt: answered(503),
      expect: {
        status: 'pending',
        nextAttemptAt: after(5000),
        lastStatusCode: 503,
        lastError: 'status 503',
      },
    },
    {
      name: '100 (not a final answer 2xx) is retried',
      attempt: answered(100),
      expect: {
        status: 'pending',
        nextAttemptAt: after(5000),
        lastStatusCode: 100,
        lastError: 'status 100',
      },
    },
    {
      name: 'a timeout is retried',
      attempt: unanswered('no answer within 10000 ms'),
      expect: {
        status: 'pending',
        nextAttemptAt: after(5000),
        lastStatusCode: null,
        lastError: 'no answer within 10000 ms',
      },
    },
    {
      name: 'a refused connection is retried',
      attempt: unanswered('connection refused'),
      expect: {
        status: 'pending',
        nextAttemptAt: after(5000),
        lastStatusCode: null,
        lastError: 'connection refused',
      },
    },
    {
      name: 'an address refused by the guard is retried (a DNS change may fix it)',
      attempt: unanswered('address refused: 10.0.0.1 (private)'),
      expect: {
        status: 'pending',
        nextAttemptAt: after(5000),
        lastStatusCode: null,
        lastError: 'address refused: 10.0.0.1 (private)',
      },
    },
    {
      name: 'the second attempt failing is retried 5 min after it ended',
      attempt: answered(500),
      delivery: { ...first, attempts: 1 },
      expect: {
        status: 'pending',
        nextAttemptAt: after(300_000),
        lastStatusCode: 500,
        lastError: 'status 500',
      },
    },
    {
      name: 'the jitter lengthens the delay by up to 10 %',
      attempt: answered(500),
      delivery: { ...first, attempts: 2 },
      jitter: 0.5,
      expect: {
        status: 'pending',
        nextAttemptAt: after(1_890_000),
        lastStatusCode: 500,
        lastError: 'status 500',
      },
    },
    {
      name: 'the last retry of the schedule failing (the 8th attempt) fails the delivery for good',
      attempt: answered(500),
      delivery: { ...first, attempts: schedule.length },
      expect: {
        status: 'failed',
        nextAttemptAt: null,
        lastStatusCode: 500,
        lastError: 'status 500',
      },
    },
    {
      name: 'the 7th attempt failing still has its last retry, 10 h later',
      attempt: unanswered('connection refused'),
      delivery: { ...first, attempts: schedule.length - 1 },
      expect: {
        status: 'pending',
        nextAttemptAt: after(36_000_000),
        lastStatusCode: null,
        lastError: 'connection refused',
      },
    },
    {
      name: 'the last attempt succeeding is delivered',
      attempt: answered(200),
      delivery: { ...first, attempts: schedule.length },
      expect: { status: 'succeeded', nextAttemptAt: null, lastStatusCode: 200, lastError: null },
    },
    {
      name: 'a manual retry failing fails again, whatever is left of the schedule',
      attempt: answered(500),
      delivery: { ...first, attempts: 1, manualRetry: true },
      expect: {
        status: 'failed',
        nextAttemptAt: null,
        lastStatusCode: 500,
        lastError: 'status 500',
      },
    },
    {
      name: 'a manual retry succeeding is delivered',
      attempt: answered(201),
      delivery: { ...first, attempts: 8, manualRetry: true },
      expect: { status: 'succeeded', nextAttemptAt: null, lastStatusCode: 201, lastError: null },
    },
    {
      name: 'a delivery whose event was pruned fails at once: nothing can be sent',
      attempt: { startedAt, endedAt },
      delivery: { ...first, eventDeleted: true },
      expect: {
        status: 'failed',
        nextAttemptAt: null,
        lastStatusCode: null,
        lastError: EVENT_DELETED,
      },
    },
  ]

  for (const c of cases) {
    it(c.name, () => {
      const delivery = c.delivery ?? first
      const { decision, outcome } = decideOutcome(c.attempt, delivery, schedule, c.jitter ?? 0)
      assert.deepEqual(outcome, {
        ...c.expect,
        attempts: delivery.attempts + 1,
        // When the attempt started, not when its answer came.
        lastAttemptAt: startedAt.toISOString(),
      })
      const verdict = { succeeded: 'delivered', pending: 'retry', failed: 'failed' }[
        c.expect.status
      ]
      assert.equal(decision.verdict, verdict)
      if (decision.verdict === 'retry') {
        assert.equal(decision.at.toISOString(), c.expect.nextAttemptAt)
      }
    })
  }

  it('the jitter stays within 10 %, whatever the randomness answers', () => {
    for (const jitter of [-1, 0, 0.25, 0.999, 1, 7]) {
      const { decision } = decideOutcome(answered(500), first, [10], jitter)
      assert.equal(decision.verdict, 'retry')
      const delay = decision.verdict === 'retry' ? decision.at.getTime() - endedAt.getTime() : 0
      assert.ok(delay >= 10_000 && delay <= 11_000, `${jitter}: ${delay} ms`)
    }
  })

  it('a schedule set by WEBHOOK_RETRY_SCHEDULE replaces the default; with no retry left, a failure fails', () => {
    const twice = [1, 2.5]
    assert.equal(decideOutcome(answered(500), first, twice, 0).outcome.nextAttemptAt, after(1000))
    assert.equal(
      decideOutcome(answered(500), { ...first, attempts: 1 }, twice, 0).outcome.nextAttemptAt,
      after(2500),
    )
    assert.equal(
      decideOutcome(answered(500), { ...first, attempts: 2 }, twice, 0).decision.verdict,
      'failed',
    )
    assert.equal(decideOutcome(answered(500), first, [], 0).decision.verdict, 'failed')
  })

  it('the sender and the outcome read statuses alike: 2xx succeeds, anything else fails', () => {
    for (const code of [200, 201, 204, 299]) assert.equal(statusOutcome(code).ok, true)
    for (const code of [100, 199, 300, 304, 399, 400, 410, 429, 500, 599]) {
      assert.equal(statusOutcome(code).ok, false)
    }
  })
})
