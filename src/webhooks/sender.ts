import http from 'node:http'
import https from 'node:https'
import { isIP } from 'node:net'
import {
  bareHost,
  createGuardedLookup,
  forbiddenAddressReason,
  type Resolver,
} from './address-guard.js'
import { statusOutcome } from './delivery-outcome.js'
import { webhookHeaders } from './signature.js'

/** One attempt of one delivery: what to send where, and the secret to sign it with. */
export interface Attempt {
  /** The endpoint's URL, as stored. */
  url: string
  /** The endpoint's signing secret, `whsec_...`. */
  secret: string
  /** The event id: the `webhook-id` header, the same on every attempt. */
  id: string
  /** The event JSON, sent as it is. */
  body: string
}

/** How an attempt went. Success is a 2xx status within the timeout; anything else is a failure. */
export interface AttemptResult {
  ok: boolean
  /** The receiver's status, when one came (also for failures: 500, 301...). */
  statusCode?: number
  /** Why it failed, for the delivery's record and the log; never the secret. */
  error?: string
  /** From the start of the attempt to its outcome, in milliseconds. */
  durationMs: number
}

export interface SenderOptions {
  /** WEBHOOK_TIMEOUT_MS: the status must arrive within this time from the attempt's start. */
  timeoutMs: number
  /** WEBHOOK_ALLOW_PRIVATE: plain http:// and loopback or private addresses may be sent to. */
  allowPrivate: boolean
  /** Resolves host names at connect time (the system's by default; tests inject one). */
  resolve?: Resolver
  /** The most of a response body read, in bytes; past it the connection is dropped. 64 KiB by default. */
  maxResponseBytes?: number
  /** The clock of `webhook-timestamp`, in milliseconds since the epoch; Date.now by default. */
  now?: () => number
  /** Certificate authorities trusted besides the system's (tests with a local TLS receiver). */
  ca?: string | Buffer
}

export interface Sender {
  /** Makes one attempt. It never throws: every failure is an AttemptResult with `error`. */
  send(attempt: Attempt): Promise<AttemptResult>
  /** Closes the kept-alive connections. */
  close(): void
}

const DEFAULT_MAX_RESPONSE_BYTES = 64 * 1024

/**
 * Sends webhook attempts: `POST <url>` with the event JSON, `Content-Type: application/json`,
 * and the Standard Webhooks headers signed for this attempt's time. Connections go through
 * the address guard (createGuardedLookup), which checks the address each socket connects
 * to; an IP literal in the URL, which Node connects to without a lookup, is checked here.
 * Redirects are never followed (http.request does not), and count as failures. At most
 * `maxResponseBytes` of a response body are read, so that a huge answer costs nothing;
 * connections are kept alive between attempts to the same host.
 */
export function createSender(options: SenderOptions): Sender {
  const lookup = createGuardedLookup({
    allowPrivate: options.allowPrivate,
    ...(options.resolve && { resolve: options.resolve }),
  })
  const agents = {
    'http:': new http.Agent({ keepAlive: true, lookup }),
    'https:': new https.Agent({ keepAlive: true, lookup, ...(options.ca && { ca: options.ca }) }),
  }
  const maxResponseBytes = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES
  const now = options.now ?? Date.now
  const { timeoutMs, allowPrivate } = options

  const send = (attempt: Attempt): Promise<AttemptResult> => {
    const started = performance.now()
    return new Promise<AttemptResult>((resolve) => {
      let settled = false
      let statusCode: number | undefined
      let timer: NodeJS.Timeout | undefined
      const finish = (outcome: { ok: boolean; statusCode?: number; error?: string }) => {
        if (settled) return
        settled = true
        clearTimeout(timer)
        resolve({ ...outcome, durationMs: Math.round(performance.now() - started) })
      }
      const fail = (error: string) =>
        finish(statusCode === undefined ? { ok: false, error } : statusOutcome(statusCode))
      try {
        const url = URL.canParse(attempt.url) ? new URL(attempt.url) : undefined
        const refusal = urlRefusal(url, allowPrivate)
        if (refusal !== undefined || url === undefined) return finish({ ok: false, error: refusal })
        const timestamp = Math.floor(now() / 1000)
        const headers = {
          ...webhookHeaders(attempt.secret, { id: attempt.id, timestamp, body: attempt.body }),
          'content-type': 'application/json',
          'content-length': String(Buffer.byteLength(attempt.body)),
          'user-agent': 'catalog-service-webhooks',
        }
        const protocol = url.protocol as 'http:' | 'https:'
        const request = (protocol === 'https:' ? https : http).request(url, {
          method: 'POST',
          headers,
          agent: agents[protocol],
          lookup,
        })
        timer = setTimeout(() => {
          request.destroy()
          fail(`no answer within ${timeoutMs} ms`)
        }, timeoutMs)
        request.on('response', (response) => {
          statusCode = response.statusCode ?? 0
          let received = 0
          response.on('data', (chunk: Buffer) => {
            received += chunk.length
            if (received > maxResponseBytes) {
              // Enough read: the status is what counts. The connection goes with the rest.
              response.destroy()
              finish(statusOutcome(statusCode!))
            }
          })
          response.on('end', () => finish(statusOutcome(statusCode!)))
          response.on('close', () => finish(statusOutcome(statusCode!)))
          response.on('error', () => finish(statusOutcome(statusCode!)))
        })
        request.on('error', (error) => fail(describeError(error)))
        request.end(attempt.body)
      } catch (error) {
        fail(describeError(error as Error))
      }
    })
  }

  return {
    send,
    close: () => {
      agents['http:'].destroy()
      agents['https:'].destroy()
    },
  }
}

/** Why no request may be made to `url`, or undefined when one may (its address is checked later). */
function urlRefusal(url: URL | undefined, allowPrivate: boolean): string | undefined {
  if (url === undefined) return 'the URL cannot be parsed'
  if (url.protocol !== 'https:' && !(allowPrivate && url.protocol === 'http:')) {
    return `${url.protocol}// URLs are not sent to`
  }
  const host = bareHost(url.hostname)
  if (!allowPrivate && isIP(host) !== 0) {
    const reason = forbiddenAddressReason(host)
    if (reason !== undefined) return `address refused: ${host} (${reason})`
  }
  return undefined
}

const TLS_CODE = /^(ERR_TLS_|ERR_SSL_|CERT_|DEPTH_ZERO|SELF_SIGNED|UNABLE_TO_|HOSTNAME_)/

function describeError(error: Error): string {
  const code = (error as NodeJS.ErrnoException).code ?? ''
  if (code === 'EFORBIDDENADDRESS') return `address refused: ${error.message}`
  if (code === 'ECONNREFUSED') return 'connection refused'
  if (code === 'ECONNRESET') return 'connection reset'
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return `host not found (${code})`
  if (TLS_CODE.test(code) || /certificate|ssl|tls/i.test(error.message)) {
    return `TLS: ${error.message}`
  }
  return code ? `${code}: ${error.message}` : error.message
}
