import http from 'node:http'

export interface HttpRequest {
  method: 'GET' | 'POST' | 'PATCH'
  /** Path and query, e.g. `/api/commerce/v1/products?limit=50`. */
  path: string
  /** A JSON document, sent with `Content-Type: application/json`. */
  body?: string
}

export interface HttpResponse {
  status: number
  body: string
}

/** The only host the benchmark sends requests to. */
export const BENCH_HOST = '127.0.0.1'

/** Refuses any base URL that is not plain HTTP on this machine. */
export function assertLocalUrl(url: string): URL {
  const parsed = new URL(url)
  if (parsed.protocol !== 'http:' || parsed.hostname !== BENCH_HOST) {
    throw new Error(`the benchmark only sends requests to http://${BENCH_HOST}, not ${url}`)
  }
  return parsed
}

/**
 * A small keep-alive HTTP/1.1 client for setup requests and for timing requests one at a
 * time: plain node:http costs less per request than fetch, so it adds less to what it times.
 */
export class HttpClient {
  readonly #base: URL
  readonly #agent: http.Agent
  readonly #headers: Record<string, string>

  constructor(baseUrl: string, headers: Record<string, string> = {}, maxSockets = 8) {
    this.#base = assertLocalUrl(baseUrl)
    this.#agent = new http.Agent({ keepAlive: true, maxSockets })
    this.#headers = headers
  }

  send(request: HttpRequest): Promise<HttpResponse> {
    return new Promise((resolve, reject) => {
      const headers: Record<string, string | number> = { ...this.#headers }
      if (request.body !== undefined) {
        headers['content-type'] = 'application/json'
        headers['content-length'] = Buffer.byteLength(request.body)
      }
      const req = http.request(
        {
          host: this.#base.hostname,
          port: this.#base.port,
          method: request.method,
          path: request.path,
          headers,
          agent: this.#agent,
        },
        (res) => {
          const chunks: Buffer[] = []
          res.on('data', (chunk: Buffer) => chunks.push(chunk))
          res.on('end', () =>
            resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }),
          )
          res.on('error', reject)
        },
      )
      req.on('error', reject)
      req.end(request.body)
    })
  }

  /** Sends a request that must answer 200, and returns its parsed body. */
  async json<T>(request: HttpRequest): Promise<T> {
    const response = await this.send(request)
    if (response.status !== 200) {
      throw new Error(
        `${request.method} ${request.path} answered ${response.status}: ${response.body.slice(0, 300)}`,
      )
    }
    return JSON.parse(response.body) as T
  }

  close(): void {
    this.#agent.destroy()
  }
}
