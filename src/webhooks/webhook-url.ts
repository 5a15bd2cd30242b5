import { isIP } from 'node:net'
import { AppError } from '../errors.js'
import { bareHost, forbiddenAddressReason, systemResolver, type Resolver } from './address-guard.js'

/** The longest endpoint URL accepted, in characters. */
export const MAX_WEBHOOK_URL_LENGTH = 2048

export interface WebhookUrlOptions {
  /** WEBHOOK_ALLOW_PRIVATE: plain http:// and any address are allowed, and nothing is resolved. */
  allowPrivate: boolean
  resolve?: Resolver
}

/** Answers of getaddrinfo meaning the name has no address, rather than "could not ask". */
const NO_SUCH_NAME = new Set(['ENOTFOUND', 'ENODATA', 'EAI_NONAME', 'EAI_NODATA'])

/**
 * Why `url` cannot be a webhook endpoint's URL, or undefined when it can: it must be an
 * absolute https:// URL (http:// too with allowPrivate) of at most 2,048 characters, and,
 * unless allowPrivate, its host must not be `localhost` and every address it resolves to must
 * be a global unicast one (see forbiddenAddressReason); a name with one forbidden address
 * among several is refused. The URL is parsed as WHATWG URL does (as Node's http does too),
 * which reads every IPv4 spelling (`2130706433`, `0177.0.0.1`, `127.1`) as the dotted address
 * it means. Deliveries check the address again when they connect (createGuardedLookup): this
 * check only tells the client early.
 *
 * A resolver that fails for another reason than "no such name" is 503 `unavailable`: the
 * URL may be fine.
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
    return options.allowPrivate ? 'must be an https:// or http:// URL' : 'must be an https:// URL'
  }
  if (parsed.hostname === '') return 'must name a host'
  if (parsed.port === '0') return 'must not name port 0 (nothing can be connected to there)'
  if (options.allowPrivate) return undefined

  const host = bareHost(parsed.hostname).replace(/\.$/, '').toLowerCase()
  if (host === 'localhost' || host.endsWith('.localhost')) {
    return `must not point to ${host} (loopback)`
  }
  if (isIP(host) !== 0) {
    const reason = forbiddenAddressReason(host)
    return reason === undefined ? undefined : `must not point to ${host} (${reason})`
  }
  let addresses
  try {
    addresses = await (options.resolve ?? systemResolver)(host)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code !== undefined && NO_SUCH_NAME.has(code)) return `host ${host} does not resolve`
    throw new AppError('unavailable', `Could not resolve ${host} to check it; retry shortly.`)
  }
  if (addresses.length === 0) return `host ${host} does not resolve`
  for (const { address } of addresses) {
    const reason = forbiddenAddressReason(address)
    if (reason !== undefined)
      return `must not point to ${host}: it resolves to ${address} (${reason})`
  }
  return undefined
}
