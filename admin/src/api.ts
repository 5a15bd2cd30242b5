// The page's only way to the data: the public API, with the key the person signed in with.

export const API = '/api/commerce/v1'
const KEY_ITEM = 'catalog-admin-key'

export type Status = 'draft' | 'active' | 'archived'

export interface Product {
  id: string
  name: string
  slug: string
  status: Status
  price: number
  compareAtPrice: number | null
  sku: string | null
  description: string | null
  barcode: string | null
  taxRate: number | null
  vendor: string | null
  productType: string | null
  tags: string[]
  images: { url: string; alt: string | null }[]
  metafields: Record<string, unknown>
  version: number
  createdAt: string
  updatedAt: string
}

export interface Variant {
  id: string
  productId: string
  name: string
  sku: string | null
  barcode: string | null
  price: number
  compareAtPrice: number | null
  options: Record<string, string>
  position: number
  weightGrams: number | null
  metafields: Record<string, unknown>
  version: number
  createdAt: string
  updatedAt: string
}

export interface ImportError {
  row: number
  handle: string
  field: string | null
  error: string
  message: string
}

/** An import of a CSV file (POST /imports, GET /imports/:id). */
export interface ImportJob {
  id: string
  status: 'running' | 'succeeded' | 'failed'
  rowsProcessed: number
  productsCreated: number
  productsUpdated: number
  variantsCreated: number
  variantsUpdated: number
  rowsFailed: number
  columnsNotStored: string[]
  errors: ImportError[]
  failureReason: string | null
  createdAt: string
  finishedAt: string | null
}

/** An import as GET /imports lists it: without its errors. */
export type ImportListItem = Omit<ImportJob, 'errors'>

/**
 * The event types an endpoint can subscribe to (`*` is every type): the service's own list,
 * bundled in, so a type the service adds appears in the form without a copy to keep up.
 */
export { EVENT_TYPES } from '../../src/outbox/event-types.js'

export interface WebhookEndpoint {
  id: string
  url: string
  events: string[]
  description: string | null
  enabled: boolean
  createdAt: string
  updatedAt: string
  /** In the answer of the create only. */
  secret?: string
}

export interface WebhookDelivery {
  id: string
  eventId: string
  eventType: string
  status: 'pending' | 'succeeded' | 'failed'
  attempts: number
  lastAttemptAt: string | null
  lastStatusCode: number | null
  nextAttemptAt: string | null
  /** What the event was about (in lists only): null once the event is past its retention. */
  subject?: { id: string; name: string; sku: string | null } | null
}

export interface FieldProblem {
  field: string
  message: string
}

/** An answer of the API other than 2xx, as the contract writes it. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: FieldProblem[] = [],
  ) {
    super(message)
  }
}

/** The key lives in this tab's sessionStorage only: never a cookie, localStorage or a URL. */
export const session = {
  key: (): string | null => sessionStorage.getItem(KEY_ITEM),
  signIn: (key: string) => sessionStorage.setItem(KEY_ITEM, key),
  signOut: () => sessionStorage.removeItem(KEY_ITEM),
}

interface CallOptions {
  body?: unknown
  /** A body sent as it is (a file the person chose), with its Content-Type. */
  raw?: { body: Blob; type: string }
  /** The version the change is based on, sent as If-Match. */
  version?: number
  key?: string
}

export async function call<T>(method: string, path: string, options: CallOptions = {}): Promise<T> {
  const headers: Record<string, string> = {
    authorization: `Bearer ${options.key ?? session.key() ?? ''}`,
    accept: 'application/json',
  }
  if (options.body !== undefined) {
    headers['content-type'] =
      method === 'PATCH' ? 'application/merge-patch+json' : 'application/json'
  }
  if (options.raw) headers['content-type'] = options.raw.type
  if (options.version !== undefined) headers['if-match'] = `"${options.version}"`
  let response: Response
  try {
    response = await fetch(API + path, {
      method,
      headers,
      cache: 'no-store',
      credentials: 'omit',
      ...(options.body !== undefined && { body: JSON.stringify(options.body) }),
      ...(options.raw && { body: options.raw.body }),
    })
  } catch {
    throw unreachable()
  }
  if (!response.ok) throw await refusal(response)
  const text = await response.text()
  return (text ? JSON.parse(text) : null) as T
}

/**
 * A file the API streams (the export), read whole: a link cannot carry the key, so the page
 * fetches the file with it and hands the browser the bytes to save.
 */
export async function fetchFile(path: string): Promise<Blob> {
  let response: Response
  try {
    response = await fetch(API + path, {
      headers: { authorization: `Bearer ${session.key() ?? ''}` },
      cache: 'no-store',
      credentials: 'omit',
    })
  } catch {
    throw unreachable()
  }
  if (!response.ok) throw await refusal(response)
  return response.blob()
}

function unreachable(): ApiError {
  return new ApiError(0, 'network', 'The service cannot be reached; check that it is running.')
}

/** An answer other than 2xx as an ApiError, with the contract's code, message and details. */
async function refusal(response: Response): Promise<ApiError> {
  const text = await response.text()
  let body: any = null
  try {
    body = text ? JSON.parse(text) : null
  } catch {
    // An answer that is not JSON is reported by its status below.
  }
  return new ApiError(
    response.status,
    typeof body?.error === 'string' ? body.error : 'http_error',
    typeof body?.message === 'string' ? body.message : `The service answered ${response.status}.`,
    Array.isArray(body?.details) ? body.details : [],
  )
}

/** The calling key, as GET /me answers: its store and what it may do. */
export interface Me {
  keyId: string
  store: string
  scopes: ('read' | 'write')[]
}

/** Whether a key may write, from GET /me (a wrong key is refused there with the API's message). */
export async function canWrite(key: string): Promise<boolean> {
  const { data } = await call<{ data: Me }>('GET', '/me', { key })
  return data.scopes.includes('write')
}

/** A smart collection's condition, as the API takes and answers it. */
export interface CollectionRule {
  field: string
  relation: string
  value: string | number
}

export type CollectionSortOrder =
  'manual' | 'newest' | 'oldest' | 'name' | '-name' | 'price' | '-price'

export interface Collection {
  id: string
  title: string
  handle: string
  description: string | null
  kind: 'manual' | 'smart'
  rules: CollectionRule[] | null
  disjunctive: boolean
  sortOrder: CollectionSortOrder
  productsCount: number
  version: number
  createdAt: string
  updatedAt: string
}
