import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { Webhook, WebhookVerificationError } from 'standardwebhooks'
import {
  DEFAULT_RETRY_SCHEDULE_SECONDS,
  nextAttemptAt,
  parseRetrySchedule,
} from '../src/webhooks/retry-schedule.js'
import { newWebhookSecret, webhookHeaders, webhookSignature } from '../src/webhooks/signature.js'

describe('webhook signatures', () => {
  it('match the Standard Webhooks test vector', () => {
    // The example of the specification's reference libraries (standard-webhooks/standard-webhooks).
    const signature = webhookSignature('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', {
      id: 'msg_p5jXN8AQM9LWM0D4loKWxJek',
      timestamp: 1614265330,
      body: '{"test": 2432232314}',
    })
    assert.equal(signature, 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=')
  })

  it('verify with the published verifier; a changed body, id, timestamp or secret fails', () => {
    const secret = newWebhookSecret()
    const body = JSON.stringify({ id: 'evt_1', type: 'variant.updated', data: { object: {} } })
    const timestamp = Math.floor(Date.now() / 1000)
    const headers = webhookHeaders(secret, { id: 'evt_1', timestamp, body })
    assert.deepEqual(Object.keys(headers).sort(), [
      'webhook-id',
      'webhook-signature',
      'webhook-timestamp',
    ])
    const verifier = new Webhook(secret)
    assert.deepEqual(verifier.verify(body, headers), JSON.parse(body))
    assert.equal(
      headers['webhook-signature'],
      verifier.sign('evt_1', new Date(timestamp * 1000), body),
      "the library's own signature of the same message",
    )

    const refused: [string, string, Record<string, string>][] = [
      ['another body', body.replace('evt_1', 'evt_2'), headers],
      ['a body with a space more', `${body} `, headers],
      ['another id', body, { ...headers, 'webhook-id': 'evt_2' }],
      ['another timestamp', body, { ...headers, 'webhook-timestamp': String(timestamp - 1) }],
    ]
    for (const [label, sentBody, sentHeaders] of refused) {
      assert.throws(() => verifier.verify(sentBody, sentHeaders), WebhookVerificationError, label)
    }
    assert.throws(
      () => new Webhook(newWebhookSecret()).verify(body, headers),
      WebhookVerificationError,
    )
    // A signature made for a time outside the verifier's 5 minutes is refused too.
    const old = timestamp - 6 * 60
    assert.throws(
      () => verifier.verify(body, webhookHeaders(secret, { id: 'evt_1', timestamp: old, body })),
      WebhookVerificationError,
    )
  })

  it('secrets are whsec_ and the base64 of 32 random bytes, never twice the same', () => {
    const secrets = new Set(Array.from({ length: 100 }, () => newWebhookSecret()))
    assert.equal(secrets.size, 100)
    for (const secret of secrets) {
      assert.match(secret, /^whsec_[A-Za-z0-9+/]{43}=$/)
      assert.equal(Buffer.from(secret.slice(6), 'base64').length, 32)
    }
  })
})

describe('the retry schedule', () => {
  const now = new Date('2026-11-25T10:00:00.000Z')
  const delayMs = (at: Date | 'failed') => (at === 'failed' ? at : at.getTime() - now.getTime())

  it("is the contract's: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h, then failed", () => {
    const expected = [5, 300, 1800, 7200, 18_000, 36_000, 36_000].map((s) => s * 1000)
    assert.deepEqual(
      [1, 2, 3, 4, 5, 6, 7, 8].map((made) =>
        delayMs(nextAttemptAt(DEFAULT_RETRY_SCHEDULE_SECONDS, made, now, () => 0)),
      ),
      [...expected, 'failed'],
    )
    assert.equal(
      nextAttemptAt(DEFAULT_RETRY_SCHEDULE_SECONDS, 9, now, () => 0),
      'failed',
    )
  })

  it('lengthens each delay by up to 10 %, as random says', () => {
    for (const [made, seconds] of DEFAULT_RETRY_SCHEDULE_SECONDS.entries()) {
      const base = seconds * 1000
      assert.equal(
        delayMs(nextAttemptAt(DEFAULT_RETRY_SCHEDULE_SECONDS, made + 1, now, () => 0.5)),
        Math.round(base * 1.05),
      )
      const longest = delayMs(
        nextAttemptAt(DEFAULT_RETRY_SCHEDULE_SECONDS, made + 1, now, () => 0.999_999),
      ) as number
      assert.ok(longest <= base * 1.1 && longest > base * 1.0999, `${made + 1}: ${longest}`)
    }
    // Math.random's spread: never shorter, never more than 10 % longer.
    for (let i = 0; i < 1000; i++) {
      const delay = delayMs(nextAttemptAt([300], 1, now, Math.random)) as number
      assert.ok(delay >= 300_000 && delay <= 330_000, `${delay}`)
    }
  })

  it('WEBHOOK_RETRY_SCHEDULE replaces it: its delays, then failed', () => {
    const schedule = parseRetrySchedule(' 1, 2 ,0')!
    assert.deepEqual(schedule, [1, 2, 0])
    assert.deepEqual(
      [1, 2, 3, 4].map((made) => delayMs(nextAttemptAt(schedule, made, now, () => 0))),
      [1000, 2000, 0, 'failed'],
    )
    for (const text of [
      '',
      ',',
      '5,,10',
      '1.',
      '.5',
      '1.2345',
      '-1',
      '5m',
      '0x10',
      '1e3',
      '2592001',
      '5;10',
    ]) {
      assert.equal(parseRetrySchedule(text), undefined, JSON.stringify(text))
    }
    assert.deepEqual(parseRetrySchedule('2592000'), [2_592_000])
    assert.deepEqual(parseRetrySchedule('0.5, 1.25,2'), [0.5, 1.25, 2])
    assert.throws(() => nextAttemptAt(schedule, 0, now, Math.random), RangeError)
  })
})
