import { isIP } from 'node:net'
import {
  bareHost,
  forbiddenAddressReason,
  systemResolver,
  type ResolvedAddress,
  type Resolver,
} from './address-guard.js'

/** The longest endpoint URL accepted, in characters. */
export const MAX_WEBHOOK_URL_LENGTH = 2048

export interface WebhookUrlOptions {
  /** WEBHOOK_ALLOW_PRIVATE: plain http:// and any address are allowed, and nothing is resolved. */
  allowPrivate: boolean
  resolve?: Resolver
}

/** How long a create or PATCH waits for the host's addresses before taking the URL as it is. */
const RESOLVE_TIMEOUT_MS = 2000

/**
 * Why `url` cannot be a webhook endpoint's URL, or undefined when it can: it must be an
 * absolute https:// URL (http:// too with allowPrivate) of at most 2,048 characters, and,
 * unless allowPrivate, its host must not be `localhost` and every address it resolves to must
 * be a global unicast one (see forbiddenAddressReason); a name with one forbidden address
 * among several is refused. The URL is parsed as WHATWG URL does (as Node's http does too),
 * which reads every IPv4 spelling (`2130706433`, `0177.0.0.1`, `127.1`) as the dotted address
 * it means. Deliveries check the address again when they connect (createGuardedLookup): this
 * check only tells the client early. So a host that cannot be resolved now (no such name yet,
 * no resolver answering in time) is not refused: only a host that resolves inside is.
 */
export async function webhookUrlProblem(
  url: string,
  options: WebhookUrlOptions,
): Promise<string | undefined> {
  if (url.length > MAX_WEBHOOK_URL_LENGTH) {
    return `must be at most ${MAX_WEBHOOK_URL_LENGTH} characters`
  }
  // WHATWG URL reads `https:hooks.example.com` as https://hooks.example.com/; not absolute here.
  if (!URL.canParse(url) || !/^[a-z][a-z\d+.-]*:\/\//i.test(url)) return 'must be an absolute URL'
  const parsed = new URL(url)
  const schemes = options.allowPrivate ? ['https:', 'http:'] : ['https:']
  if (!schemes.includes(parsed.protocol)) {
    return options.allowPrivate
      ? 'must be an https:// or http:// URL'
      : `must be an https:// URL${ALLOW_PRIVATE_HINT}`
  }
  if (parsed.hostname === '') return 'must name a host'
  if (parsed.port === '0') return 'must not name port 0 (nothing can be connected to there)'
  if (options.allowPrivate) return undefined

  const host = bareHost(parsed.hostname).replace(/\.$/, '').toLowerCase()
  if (host === 'localhost' || host.endsWith('.localhost')) {
    return `must not point to ${host} (loopback)${ALLOW_PRIVATE_HINT}`
  }
  if (isIP(host) !== 0) {
    const reason = forbiddenAddressReason(host)
    return reason === undefined
      ? undefined
      : `must not point to ${host} (${reason})${ALLOW_PRIVATE_HINT}`
  }
  const addresses = await addressesNow(host, options.resolve ?? systemResolver)
  for (const { address } of addresses) {
    const reason = forbiddenAddressReason(address)
    if (reason !== undefined)
      return `must not point to ${host}: it resolves to ${address} (${reason})${ALLOW_PRIVATE_HINT}`
  }
  return undefined
}

/** What a person testing against a receiver on their own machine needs to know. */
const ALLOW_PRIVATE_HINT =
  '; a server started with WEBHOOK_ALLOW_PRIVATE=1 (for development) also takes http:// and ' +
  'loopback or private addresses'

/** The host's addresses, or none when it cannot be resolved within RESOLVE_TIMEOUT_MS. */
async function addressesNow(host: string, resolve: Resolver): Promise<ResolvedAddress[]> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<ResolvedAddress[]>((done) => {
    timer = setTimeout(() => done([]), RESOLVE_TIMEOUT_MS)
  })
  try {
    return await Promise.race([resolve(host).catch(() => []), timeout])
  } finally {
    clearTimeout(timer)
  }
}
