import { lookup as dnsLookup } from 'node:dns/promises'
import type { LookupFunction } from 'node:net'
import ipaddr from 'ipaddr.js'

/** One address a host name resolves to. */
export interface ResolvedAddress {
  address: string
  family: 4 | 6
}

/**
 * Resolves a host name to all its addresses. Injected wherever names are resolved, so that
 * tests decide what a name resolves to (and when that changes).
 */
export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>

/** The system's resolver (getaddrinfo: /etc/hosts, then DNS), every address, in its order. */
export const systemResolver: Resolver = async (hostname) => {
  const answers = await dnsLookup(hostname, { all: true, verbatim: true })
  return answers.map(({ address, family }) => ({ address, family: family === 6 ? 6 : 4 }))
}

/** IPv6 global unicast is allocated from 2000::/3; anything else has no business receiving webhooks. */
const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR('2000::/3')

/**
 * Why an IP address may not receive a webhook (e.g. `loopback`), or undefined when it may.
 *
 * Only global unicast addresses may: ipaddr.js's range must be `unicast`, which refuses the
 * contract's loopback, private, link-local, CGNAT and unspecified ranges and also multicast,
 * broadcast, reserved, documentation and benchmarking ones; an IPv4-mapped IPv6 address
 * (`::ffff:127.0.0.1`) is judged as the IPv4 address it maps; an IPv6 address must also be in
 * 2000::/3, which leaves out the deprecated IPv4-compatible `::127.0.0.1` that ipaddr.js calls
 * unicast. `address` must be an IP address (not a name); anything else is refused.
 */
export function forbiddenAddressReason(address: string): string | undefined {
  if (!ipaddr.isValid(address)) return 'not an IP address'
  let parsed = ipaddr.parse(address)
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) {
    parsed = (parsed as ipaddr.IPv6).toIPv4Address()
  }
  const range = parsed.range()
  if (range !== 'unicast') return range
  if (parsed.kind() === 'ipv6' && !parsed.match(GLOBAL_UNICAST_V6)) return 'not global unicast'
  // 0.0.0.0/8 ("this network") other than 0.0.0.0 itself is not special to ipaddr.js.
  if (parsed.kind() === 'ipv4' && (parsed as ipaddr.IPv4).octets[0] === 0) return 'unspecified'
  return undefined
}

/** The host of a URL as a connection names it: an IPv6 literal without its brackets. */
export function bareHost(hostname: string): string {
  return hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname
}

/** The error of a connection the guard refused; its message names the host and why. */
export class ForbiddenAddressError extends Error {
  readonly code = 'EFORBIDDENADDRESS'
  constructor(message: string) {
    super(message)
    this.name = 'ForbiddenAddressError'
  }
}

export interface AddressGuardOptions {
  /** WEBHOOK_ALLOW_PRIVATE: every address may be connected to (the resolver is still used). */
  allowPrivate: boolean
  resolve?: Resolver
}

/**
 * A `lookup` for `http.request`/`https.request` (and their agents, and `net.connect`): Node
 * calls it to turn the host name into the address the socket connects to, so the address
 * checked here is the address connected to, at every connection. It resolves the name,
 * drops the forbidden addresses, and answers only those it kept; none kept is an error
 * (ForbiddenAddressError), and the request fails without connecting anywhere. A DNS answer
 * that changed since the URL was checked (rebinding) is checked again here.
 *
 * Node connects to an IP literal without calling `lookup`: check a URL's host with
 * `forbiddenAddressReason` before the request when it is one (the sender does).
 */
export function createGuardedLookup(options: AddressGuardOptions): LookupFunction {
  const resolve = options.resolve ?? systemResolver
  return ((hostname: string, lookupOptions: unknown, callback: unknown) => {
    // Node calls lookup(hostname, options, callback); older callers lookup(hostname, callback).
    const done = (typeof lookupOptions === 'function' ? lookupOptions : callback) as (
      error: NodeJS.ErrnoException | null,
      address: string | ResolvedAddress[],
      family?: number,
    ) => void
    const wanted = typeof lookupOptions === 'object' && lookupOptions !== null ? lookupOptions : {}
    const { all, family } = wanted as { all?: boolean; family?: number | string }
    guardedAddresses(hostname, resolve, options.allowPrivate).then(
      (addresses) => {
        const fitting = addresses.filter(
          (entry) => family === undefined || family === 0 || entry.family === Number(family),
        )
        if (fitting.length === 0) {
          const error = new Error(`${hostname} has no IPv${String(family)} address`)
          return done(Object.assign(error, { code: 'ENOTFOUND' }), all ? [] : '', undefined)
        }
        if (all) return done(null, fitting)
        return done(null, fitting[0]!.address, fitting[0]!.family)
      },
      (error: NodeJS.ErrnoException) => done(error, all ? [] : '', undefined),
    )
  }) as LookupFunction
}

async function guardedAddresses(
  hostname: string,
  resolve: Resolver,
  allowPrivate: boolean,
): Promise<ResolvedAddress[]> {
  const addresses = await resolve(bareHost(hostname))
  if (allowPrivate) return addresses
  const kept: ResolvedAddress[] = []
  const refused: string[] = []
  for (const entry of addresses) {
    const reason = forbiddenAddressReason(entry.address)
    if (reason === undefined) kept.push(entry)
    else refused.push(`${entry.address} (${reason})`)
  }
  if (kept.length === 0) {
    throw new ForbiddenAddressError(
      `${hostname} resolves to no address a webhook may be sent to: ${refused.join(', ') || 'none'}`,
    )
  }
  return kept
}
