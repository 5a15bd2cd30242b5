import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { ConfigError, loadConfig } from '../src/config.js'
import { startServer } from '../src/server.js'
import {
  forbiddenAddressReason,
  type ResolvedAddress,
  type Resolver,
} from '../src/webhooks/address-guard.js'
import { webhookUrlProblem } from '../src/webhooks/webhook-url.js'
import { API } from './helpers.js'

const NAMES: Record<string, ResolvedAddress[]> = {
  'hooks.example.com': [
    { address: '93.184.215.14', family: 4 },
    { address: '2606:2800:21f:cb07:6820:80da:af6b:8b2c', family: 6 },
  ],
  // Several addresses, one of them private: refused.
  'mixed.example.com': [
    { address: '93.184.215.14', family: 4 },
    { address: '93.184.215.15', family: 4 },
    { address: '172.20.1.1', family: 4 },
  ],
  'v6-loopback.example.com': [{ address: '::1', family: 6 }],
  'mapped.example.com': [{ address: '::ffff:10.0.0.1', family: 6 }],
  'metadata.example.com': [{ address: '169.254.169.254', family: 4 }],
  'cgnat.example.com': [{ address: '100.127.255.254', family: 4 }],
}

/** The names above; any other does not exist. Records each name asked. */
function recordingResolver(): Resolver & { asked: string[] } {
  const asked: string[] = []
  const resolve = async (hostname: string) => {
    asked.push(hostname)
    const found = NAMES[hostname]
    if (found === undefined) throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' })
    return found
  }
  return Object.assign(resolve, { asked })
}

describe('webhook URL rules', () => {
  it('refuse loopback, private, link-local, CGNAT and unspecified hosts, however spelled', async () => {
    const resolve = recordingResolver()
    const refused: [string, RegExp][] = [
      ['https://localhost/hooks', /loopback/],
      ['https://LOCALHOST./hooks', /loopback/],
      ['https://api.localhost/hooks', /loopback/],
      ['https://127.0.0.1/', /loopback/],
      ['https://127.0.0.1:8443/', /loopback/],
      ['https://[::1]/', /loopback/],
      ['https://[::ffff:127.0.0.1]/', /loopback/],
      ['https://[0:0:0:0:0:ffff:7f00:1]/', /loopback/],
      ['https://0.0.0.0/', /unspecified/],
      ['https://0/', /unspecified/],
      ['https://0.1.2.3/', /unspecified/],
      ['https://[::]/', /unspecified/],
      ['https://169.254.169.254/latest/meta-data/', /linkLocal/],
      ['https://2130706433/', /127\.0\.0\.1 \(loopback\)/],
      ['https://0177.0.0.1/', /127\.0\.0\.1 \(loopback\)/],
      ['https://0x7f.0.0.1/', /127\.0\.0\.1 \(loopback\)/],
      ['https://127.1/', /127\.0\.0\.1 \(loopback\)/],
      ['https://017700000001/', /127\.0\.0\.1 \(loopback\)/],
      ['https://[fe80::1]/', /linkLocal/],
      ['https://[fd00::1]/', /uniqueLocal/],
      ['https://[fc00::5]/', /uniqueLocal/],
      ['https://100.64.0.1/', /carrierGradeNat/],
      ['https://10.0.0.1/', /private/],
      ['https://172.16.0.1/', /private/],
      ['https://172.31.255.255/', /private/],
      ['https://192.168.1.1/', /private/],
      ['https://[::ffff:192.168.1.1]/', /private/],
      ['https://[::127.0.0.1]/', /not global unicast/],
      ['https://224.0.0.1/', /multicast/],
      ['https://255.255.255.255/', /broadcast/],
      ['https://mixed.example.com/', /172\.20\.1\.1 \(private\)/],
      ['https://v6-loopback.example.com/', /::1 \(loopback\)/],
      ['https://mapped.example.com/', /private/],
      ['https://metadata.example.com/', /linkLocal/],
      ['https://cgnat.example.com/', /carrierGradeNat/],
    ]
    for (const [url, reason] of refused) {
      const problem = await webhookUrlProblem(url, { allowPrivate: false, resolve })
      assert.match(problem ?? 'allowed', reason, url)
    }
    // Literal addresses and localhost are judged without asking the resolver.
    assert.deepEqual(resolve.asked.sort(), [
      'cgnat.example.com',
      'mapped.example.com',
      'metadata.example.com',
      'mixed.example.com',
      'v6-loopback.example.com',
    ])
  })

  it('allow https:// to public addresses, by name or literal, just outside the refused ranges', async () => {
    const resolve = recordingResolver()
    for (const url of [
      'https://hooks.example.com/catalog?x=1',
      'https://hooks.example.com:8443/',
      'https://HOOKS.example.com./',
      'https://93.184.215.14/',
      'https://[2606:4700::1111]/',
      'https://[::ffff:93.184.215.14]/',
      'https://172.32.0.1/',
      'https://172.15.255.255/',
      'https://100.128.0.1/',
      'https://100.63.255.255/',
      'https://11.0.0.1/',
      'https://169.255.0.1/',
      'https://192.169.0.1/',
      // Not resolvable now: deliveries check the address they connect to.
      'https://nowhere.example.com/',
    ]) {
      assert.equal(await webhookUrlProblem(url, { allowPrivate: false, resolve }), undefined, url)
    }
  })

  it('refuse what is not an absolute https:// URL of at most 2,048 characters', async () => {
    const resolve = recordingResolver()
    const base = 'https://hooks.example.com/'
    const longest = base + 'a'.repeat(2048 - base.length)
    assert.equal(await webhookUrlProblem(longest, { allowPrivate: false, resolve }), undefined)
    for (const [url, reason] of [
      [longest + 'a', /at most 2048/],
      ['http://hooks.example.com/', /https:\/\//],
      ['HTTP://hooks.example.com/', /https:\/\//],
      ['ws://hooks.example.com/', /https:\/\//],
      ['file:///etc/passwd', /https:\/\//],
      ['hooks.example.com', /absolute URL/],
      ['//hooks.example.com/x', /absolute URL/],
      ['https://exa mple.com/', /absolute URL/],
      ['https://[::1/', /absolute URL/],
      ['https:hooks.example.com/x', /absolute URL/],
      ['https:/hooks.example.com/x', /absolute URL/],
      [' https://hooks.example.com/', /absolute URL/],
      ['https://hooks.example.com:0/', /port 0/],
    ] as const) {
      const problem = await webhookUrlProblem(url, { allowPrivate: false, resolve })
      assert.match(problem ?? 'allowed', reason, url)
    }
  })

  it('with allowPrivate: plain http:// and any host, resolved or not; other schemes still refused', async () => {
    const resolve = recordingResolver()
    for (const url of [
      'http://127.0.0.1:3000/hooks',
      'http://localhost/hooks',
      'https://[::1]/',
      'http://10.0.0.1/',
      'http://receiver/hooks',
      'http://mixed.example.com/',
    ]) {
      assert.equal(await webhookUrlProblem(url, { allowPrivate: true, resolve }), undefined, url)
    }
    assert.deepEqual(resolve.asked, [], 'nothing is resolved')
    assert.match(
      (await webhookUrlProblem('ftp://127.0.0.1/', { allowPrivate: true, resolve })) ?? '',
      /https:\/\/ or http:\/\//,
    )
  })

  it('classify addresses as ipaddr.js ranges them, IPv4-mapped as the IPv4 address', () => {
    const cases: [string, string | undefined][] = [
      ['8.8.8.8', undefined],
      ['2001:4860:4860::8888', undefined],
      ['127.0.0.1', 'loopback'],
      ['127.255.255.254', 'loopback'],
      ['::1', 'loopback'],
      ['::ffff:127.0.0.1', 'loopback'],
      ['10.255.0.1', 'private'],
      ['172.16.0.0', 'private'],
      ['192.168.255.255', 'private'],
      ['fc00::1', 'uniqueLocal'],
      ['fdff:ffff::1', 'uniqueLocal'],
      ['169.254.0.1', 'linkLocal'],
      ['fe80::abcd', 'linkLocal'],
      ['febf::1', 'linkLocal'],
      ['100.64.0.0', 'carrierGradeNat'],
      ['100.127.255.255', 'carrierGradeNat'],
      ['0.0.0.0', 'unspecified'],
      ['::', 'unspecified'],
      ['64:ff9b::a00:1', 'rfc6052'],
      ['example.com', 'not an IP address'],
    ]
    for (const [address, reason] of cases) {
      assert.equal(forbiddenAddressReason(address), reason, address)
    }
  })
})

describe('webhook settings', () => {
  it('have defaults: private addresses refused, 10 s timeout, the contract retry schedule', () => {
    const config = loadConfig({})
    assert.equal(config.webhookAllowPrivate, false)
    assert.equal(config.webhookTimeoutMs, 10_000)
    assert.deepEqual(config.webhookRetrySchedule, [5, 300, 1800, 7200, 18_000, 36_000, 36_000])
  })

  it('read WEBHOOK_ALLOW_PRIVATE, WEBHOOK_TIMEOUT_MS and WEBHOOK_RETRY_SCHEDULE, refusing malformed values', () => {
    for (const value of ['1', 'true', 'TRUE']) {
      assert.equal(loadConfig({ WEBHOOK_ALLOW_PRIVATE: value }).webhookAllowPrivate, true)
    }
    for (const value of ['0', 'false', '']) {
      assert.equal(loadConfig({ WEBHOOK_ALLOW_PRIVATE: value }).webhookAllowPrivate, false)
    }
    assert.equal(loadConfig({ WEBHOOK_TIMEOUT_MS: '2500' }).webhookTimeoutMs, 2500)
    assert.deepEqual(
      loadConfig({ WEBHOOK_RETRY_SCHEDULE: '1, 2,3' }).webhookRetrySchedule,
      [1, 2, 3],
    )
    for (const settings of [
      { WEBHOOK_ALLOW_PRIVATE: 'yes' },
      { WEBHOOK_TIMEOUT_MS: '0' },
      { WEBHOOK_TIMEOUT_MS: '10s' },
      { WEBHOOK_RETRY_SCHEDULE: '5,,10' },
      { WEBHOOK_RETRY_SCHEDULE: '5,1.' },
      { WEBHOOK_RETRY_SCHEDULE: '5,.5' },
      { WEBHOOK_RETRY_SCHEDULE: '5,-1' },
      { WEBHOOK_RETRY_SCHEDULE: '5m' },
      { WEBHOOK_RETRY_SCHEDULE: ',' },
    ]) {
      assert.throws(() => loadConfig(settings), ConfigError, JSON.stringify(settings))
    }
  })

  it('catalog serve passes WEBHOOK_ALLOW_PRIVATE to the app', async (t) => {
    for (const [allow, status] of [
      ['1', 200],
      ['0', 400],
    ] as const) {
      const server = await startServer(
        loadConfig({
          DATABASE_URL: 'sqlite::memory:',
          PORT: '0',
          LOG_LEVEL: 'silent',
          WEBHOOK_ALLOW_PRIVATE: allow,
        }),
      )
      t.after(() => server.close())
      const res = await fetch(`${server.url}${API}/webhook-endpoints`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${server.firstKey!.key}`,
          'content-type': 'application/json',
        },
        body: JSON.stringify({ url: 'http://127.0.0.1:9/hooks', events: ['*'] }),
      })
      assert.equal(res.status, status, `WEBHOOK_ALLOW_PRIVATE=${allow}: ${await res.text()}`)
    }
  })
})
