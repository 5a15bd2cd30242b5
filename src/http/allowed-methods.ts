import type { FastifyInstance } from 'fastify'
import { AppError } from '../errors.js'

/**
 * Which methods a path takes, from the routes the app registers: what a 405 names in its
 * `Allow` header. Fastify's router looks a path up for one method only; a request whose
 * method no route of its path takes reaches the not-found handler like an unknown path, and
 * this tells the two apart. Patterns are matched as the router does with the app's settings
 * (case-sensitive, no trailing-slash or duplicate-slash folding): a static segment equals, a
 * `:param` is one non-empty segment, a final `*` is the rest of the path.
 */

/** The order an `Allow` header lists methods in. */
const METHOD_ORDER = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']

type Segment = { kind: 'static'; text: string } | { kind: 'param' } | { kind: 'rest' }

interface Pattern {
  segments: Segment[]
  methods: Set<string>
}

function compile(url: string): Segment[] {
  return url.split('/').map((text, index, all): Segment => {
    if (text === '*' && index === all.length - 1) return { kind: 'rest' }
    if (text.startsWith(':')) return { kind: 'param' }
    return { kind: 'static', text }
  })
}

function matches(segments: Segment[], parts: string[]): boolean {
  for (let index = 0; index < segments.length; index++) {
    const segment = segments[index]!
    if (segment.kind === 'rest') return parts.length >= index
    const part = parts[index]
    if (part === undefined) return false
    if (segment.kind === 'param' ? part === '' : part !== segment.text) return false
  }
  return parts.length === segments.length
}

export interface AllowedMethods {
  /** The methods the path of `url` (its query string aside) takes; empty for an unknown path. */
  of(url: string): string[]
}

/** Records every route `app` registers from now on (call it before registering any). */
export function recordAllowedMethods(app: FastifyInstance): AllowedMethods {
  const patterns = new Map<string, Pattern>()
  const add = (url: string, methods: string[]) => {
    let pattern = patterns.get(url)
    if (pattern === undefined) {
      pattern = { segments: compile(url), methods: new Set() }
      patterns.set(url, pattern)
    }
    for (const method of methods) pattern.methods.add(method)
  }
  app.addHook('onRoute', (route) => {
    const methods = [route.method].flat().map((method) => method.toUpperCase())
    add(route.url, methods)
    // A plugin's route '/' under a prefix is served at '/prefix' and at '/prefix/' (Fastify's
    // prefixTrailingSlash 'both', the default), but the hook hears of the first only.
    const both = (route.prefixTrailingSlash ?? 'both') === 'both'
    if (route.routePath === '' && route.prefix !== '' && both) {
      add(
        `${route.url}/`,
        methods.filter((method) => method !== 'HEAD'),
      )
    }
  })
  return {
    of(url) {
      const query = url.indexOf('?')
      const parts = (query === -1 ? url : url.slice(0, query)).split('/')
      const methods = new Set<string>()
      for (const pattern of patterns.values()) {
        if (matches(pattern.segments, parts))
          for (const method of pattern.methods) methods.add(method)
      }
      return [...methods].sort((a, b) => rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0))
    },
  }
}

function rank(method: string): number {
  const index = METHOD_ORDER.indexOf(method)
  return index === -1 ? METHOD_ORDER.length : index
}

/**
 * The 405 of a request to a known path with a method it does not take, with the `Allow`
 * header set on `reply`; undefined when the path is unknown (a 404) or takes the method.
 */
export function methodNotAllowed(
  allowed: AllowedMethods,
  request: { method: string; url: string },
  reply: { header(name: string, value: string): unknown },
): AppError | undefined {
  const methods = allowed.of(request.url)
  if (methods.length === 0 || methods.includes(request.method)) return undefined
  const list = methods.join(', ')
  reply.header('allow', list)
  return new AppError(
    'method_not_allowed',
    `This path does not take ${request.method}; it takes ${list} (the Allow header lists them).`,
  )
}
