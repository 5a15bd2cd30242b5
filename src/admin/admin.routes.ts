import { createHash } from 'node:crypto'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { extname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { AppError } from '../errors.js'
import { errorBodyWithHeaders, headerObjects, textResponse } from '../http/openapi.js'

/** Where `npm run build` writes the page (scripts/build-admin.ts), from src/ and from dist/. */
export const ADMIN_BUILD_DIR = fileURLToPath(new URL('../../dist/admin-ui/', import.meta.url))

export const ADMIN_PATH = '/admin'
const ASSETS_PATH = `${ADMIN_PATH}/assets`

/**
 * The page is one more client of the public API: it loads its own script and style and talks
 * to this origin only. No inline script or style, no eval, never framed, no form posted
 * anywhere; images from here or over https (a product's thumbnails, from its image host).
 * Trusted Types allow one policy, DOMPurify's (descriptions are HTML, rendered sanitized), so
 * any other assignment of a string to innerHTML throws.
 */
export const ADMIN_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  // Product images: thumbnails from the shop's image host (https only), or from this service.
  "img-src 'self' https:",
  "font-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
  "require-trusted-types-for 'script'",
  // DOMPurify's own policy, the only one: what reaches an HTML sink was sanitized by it.
  'trusted-types dompurify',
].join('; ')

const SECURITY_HEADERS = {
  'content-security-policy': ADMIN_CSP,
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
} as const

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
}

interface Asset {
  type: string
  etag: string
  /** The file, and its brotli and gzip forms when the build wrote them. */
  bodies: { identity: Buffer; br?: Buffer; gzip?: Buffer }
}

/** The built files, read once per process: a few small files, shared by every app built. */
let loaded: Map<string, Asset> | null = null

function readAssets(): Map<string, Asset> {
  if (loaded) return loaded
  const assets = new Map<string, Asset>()
  if (existsSync(ADMIN_BUILD_DIR)) {
    const files = readdirSync(ADMIN_BUILD_DIR, { recursive: true, encoding: 'utf8' })
    for (const file of files) {
      const type = CONTENT_TYPES[extname(file)]
      if (!type) continue
      const path = join(ADMIN_BUILD_DIR, file)
      const identity = readFileSync(path)
      const sibling = (suffix: string) =>
        existsSync(path + suffix) ? readFileSync(path + suffix) : undefined
      const br = sibling('.br')
      const gzip = sibling('.gz')
      const hash = createHash('sha256').update(identity).digest('base64url').slice(0, 16)
      assets.set(file.split('\\').join('/'), {
        type,
        etag: `"${hash}"`,
        bodies: { identity, ...(br && { br }), ...(gzip && { gzip }) },
      })
    }
  }
  loaded = assets
  return assets
}

/** The best encoding the client accepts among those the asset has. */
function chooseEncoding(request: FastifyRequest, asset: Asset): 'br' | 'gzip' | 'identity' {
  const accepted = String(request.headers['accept-encoding'] ?? '')
  const accepts = (name: string) =>
    new RegExp(`(^|[\\s,])${name}(?!\\s*;\\s*q=0(\\.0*)?(\\s*[,;]|$))`, 'i').test(accepted)
  if (asset.bodies.br && accepts('br')) return 'br'
  if (asset.bodies.gzip && accepts('gzip')) return 'gzip'
  return 'identity'
}

function send(request: FastifyRequest, reply: FastifyReply, asset: Asset, cacheControl: string) {
  reply.headers(SECURITY_HEADERS)
  reply.header('cache-control', cacheControl)
  reply.header('vary', 'accept-encoding')
  reply.header('etag', asset.etag)
  const ifNoneMatch = request.headers['if-none-match']
  if (ifNoneMatch && ifNoneMatch.split(',').some((tag) => tag.trim() === asset.etag)) {
    return reply.code(304).send()
  }
  const encoding = chooseEncoding(request, asset)
  if (encoding !== 'identity') reply.header('content-encoding', encoding)
  return reply.type(asset.type).send(asset.bodies[encoding])
}

/**
 * GET /admin: the admin page, built by `npm run build` into dist/admin-ui. The page itself
 * is always revalidated (it names the current assets); its assets carry a hash of their
 * content in their names and are cached for a year. Sent brotli- or gzip-compressed as the
 * client accepts. Public, as the files hold no data: everything comes from the API, with the
 * key the person signs in with.
 */
export function registerAdminRoutes(app: FastifyInstance): void {
  const notBuilt = () =>
    new AppError('not_found', 'The admin page is not built: run npm run build.')
  const page = (request: FastifyRequest, reply: FastifyReply) => {
    const index = readAssets().get('index.html')
    if (!index) throw notBuilt()
    return send(request, reply, index, 'no-cache')
  }
  const pageSchema = {
    operationId: 'adminPage',
    tags: ['operations'],
    summary: 'The admin page',
    description:
      'A page for browsing and editing the catalogue in a browser, signed in with an API ' +
      'key: a client of the API like any other, and the same at `/admin/`. Answered ' +
      'brotli- or gzip-compressed as Accept-Encoding allows; 304 for an If-None-Match of ' +
      'its ETag. 404 until `npm run build` has built it.',
    response: assetResponses('The page', 'text/html'),
  }
  app.get(ADMIN_PATH, { schema: pageSchema }, page)
  // The address `catalog serve` prints, opened in a browser: the admin page, not a JSON 404.
  app.get(
    '/',
    {
      schema: {
        operationId: 'root',
        tags: ['operations'],
        summary: 'Redirects to the admin page',
        response: {
          302: {
            type: 'null',
            description: 'To the admin page',
            headers: { Location: { type: 'string', description: '`/admin`' } },
          },
        },
      },
    },
    (_request, reply) => reply.redirect(ADMIN_PATH, 302),
  )
  app.get(`${ADMIN_PATH}/`, { schema: { hide: true } }, page)
  const assetSchema = {
    operationId: 'adminAsset',
    tags: ['operations'],
    summary: "A script, style or image of the admin page's build",
    description:
      'Names carry a hash of the content: cached for a year. Compressed and revalidated as ' +
      'the page is.',
    response: assetResponses('The file', [
      ...new Set(Object.values(CONTENT_TYPES).map((type) => type.split(';')[0]!)),
    ]),
  }
  app.get<{ Params: { '*': string } }>(
    `${ASSETS_PATH}/*`,
    { schema: assetSchema },
    (request, reply) => {
      const asset = readAssets().get(`assets/${request.params['*']}`)
      if (!asset) {
        reply.headers(SECURITY_HEADERS)
        throw new AppError('not_found', `No asset ${request.url}.`)
      }
      return send(request, reply, asset, 'public, max-age=31536000, immutable')
    },
  )
}

/** SECURITY_HEADERS, as the document declares them. */
const SECURITY_HEADER_DOCS = {
  'Content-Security-Policy': 'What the page may load and run: this origin only.',
  'X-Content-Type-Options': '`nosniff`',
  'X-Frame-Options': '`DENY`',
  'Referrer-Policy': '`no-referrer`',
  'Cross-Origin-Opener-Policy': '`same-origin`',
  'Cross-Origin-Resource-Policy': '`same-origin`',
}

/** The headers `send` sets, as the document declares them. */
const ASSET_HEADERS = {
  ...SECURITY_HEADER_DOCS,
  'Cache-Control': '`no-cache` for the page; a year, immutable, for its assets.',
  Vary: '`accept-encoding`',
  ETag: 'A hash of the content.',
  'Content-Encoding': '`br` or `gzip` when the body is compressed.',
}

function assetResponses(description: string, mediaTypes: string | string[]) {
  const { 'Content-Encoding': _, ...notModified } = ASSET_HEADERS
  return {
    200: textResponse(description, mediaTypes, ASSET_HEADERS),
    304: {
      type: 'null',
      description: 'Not modified: the ETag sent is current',
      headers: headerObjects(notModified),
    },
    404: errorBodyWithHeaders(SECURITY_HEADER_DOCS),
  }
}
