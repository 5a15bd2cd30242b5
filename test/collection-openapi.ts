import { randomUUID } from 'node:crypto'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import { API } from './helpers.js'

/**
 * The collections' part of openapi.test.ts's walk over every declared status: requests that
 * cause each one, against the same checker. Kept here so that the walk itself only calls in.
 */

type Send = (
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE',
  url: string,
  options?: {
    key?: string | null
    payload?: string
    contentType?: string
    headers?: Record<string, string>
  },
) => Promise<LightMyRequestResponse>
type Check = (label: string, response: Promise<LightMyRequestResponse>) => Promise<void>

const collections = `${API}/collections`
export const COLLECTION_LABELS = {
  create: `POST ${collections}`,
  preview: `POST ${collections}/preview`,
  list: `GET ${collections}`,
  get: `GET ${collections}/{id}`,
  patch: `PATCH ${collections}/{id}`,
  delete: `DELETE ${collections}/{id}`,
  products: `GET ${collections}/{id}/products`,
  add: `POST ${collections}/{id}/products`,
  move: `PATCH ${collections}/{id}/products/{productId}`,
  remove: `DELETE ${collections}/{id}/products/{productId}`,
}

/** Statuses no request can cause: 403 and 500 on reads (as for products), 409 on a DELETE. */
export const COLLECTION_UNREACHABLE = [
  ...[
    COLLECTION_LABELS.list,
    COLLECTION_LABELS.get,
    COLLECTION_LABELS.products,
    COLLECTION_LABELS.preview,
  ].flatMap((label) => [`${label} 403`, `${label} 500`]),
  `${COLLECTION_LABELS.delete} 409`,
]

export interface CollectionUrls {
  manual: string
  member: string
}

const json = (body: unknown) => ({ payload: JSON.stringify(body) })
const huge = json({ title: 'x', description: 'x'.repeat(300 * 1024) })
const plain = { payload: 'title=x', contentType: 'text/plain' }

/** Every status of the collections' routes but 503 (exerciseCollectionsGone). */
export async function exerciseCollections(
  check: Check,
  send: Send,
  keys: { read: string; otherStore: string },
  productId: string,
  broken: FastifyInstance,
  brokenKey: string,
): Promise<CollectionUrls> {
  const L = COLLECTION_LABELS
  const created = await send('POST', collections, json({ title: 'Picks', handle: 'picks' }))
  await check(L.create, Promise.resolve(created))
  const manual = `${collections}/${created.json().data.id}`
  const smartAnswer = await send(
    'POST',
    collections,
    json({ title: 'Cheap', rules: [{ field: 'price', relation: 'less_than', value: 100 }] }),
  )
  await check(L.create, Promise.resolve(smartAnswer))
  const smart = `${collections}/${smartAnswer.json().data.id}`
  await check(L.create, send('POST', collections, json({ title: 'Again', handle: 'picks' })))
  await check(L.create, send('POST', collections, json({ title: '', rules: [] })))
  await check(L.create, send('POST', collections, { ...json({ title: 'x' }), key: null }))
  await check(L.create, send('POST', collections, { ...json({ title: 'x' }), key: keys.read }))
  await check(L.create, send('POST', collections, huge))
  await check(L.create, send('POST', collections, plain))

  const preview = `${collections}/preview`
  const cheap = { rules: [{ field: 'price', relation: 'less_than', value: 100 }] }
  await check(L.preview, send('POST', preview, { ...json(cheap), key: keys.read }))
  await check(L.preview, send('POST', preview, json({ rules: [] })))
  await check(L.preview, send('POST', preview, { ...json(cheap), key: null }))
  await check(L.preview, send('POST', preview, huge))
  await check(L.preview, send('POST', preview, plain))

  const page = await send('GET', `${collections}?limit=1`)
  await check(L.list, Promise.resolve(page))
  await check(L.list, send('GET', `${collections}?cursor=${page.json().nextCursor}`))
  await check(L.list, send('GET', `${collections}?handle=picks`))
  await check(L.list, send('GET', `${collections}?limit=0`))
  await check(L.list, send('GET', collections, { key: null }))

  await check(L.get, send('GET', manual, { key: keys.read }))
  await check(L.get, send('GET', manual, { headers: { 'if-none-match': '"1"' } }))
  await check(L.get, send('GET', manual, { headers: { 'if-none-match': '1' } }))
  await check(L.get, send('GET', `${collections}/${randomUUID()}`))
  await check(L.get, send('GET', manual, { key: null }))

  const member = `${manual}/products/${productId}`
  await check(L.add, send('POST', `${manual}/products`, json({ product_ids: [productId] })))
  await check(L.add, send('POST', `${manual}/products`, json({ product_ids: ['nope'] })))
  await check(L.add, send('POST', `${smart}/products`, json({ product_ids: [productId] })))
  await check(
    L.add,
    send('POST', `${collections}/${randomUUID()}/products`, json({ product_ids: [productId] })),
  )
  await check(
    L.add,
    send('POST', `${manual}/products`, { ...json({ product_ids: [productId] }), key: null }),
  )
  await check(
    L.add,
    send('POST', `${manual}/products`, { ...json({ product_ids: [productId] }), key: keys.read }),
  )
  await check(L.add, send('POST', `${manual}/products`, huge))
  await check(L.add, send('POST', `${manual}/products`, plain))

  await check(L.products, send('GET', `${manual}/products`))
  await check(L.products, send('GET', `${smart}/products?status=draft&limit=1`))
  await check(L.products, send('GET', `${manual}/products?cursor=nonsense`))
  await check(L.products, send('GET', `${collections}/${randomUUID()}/products`))
  await check(L.products, send('GET', `${manual}/products`, { key: null }))

  await check(L.move, send('PATCH', member, json({ position: 1 })))
  await check(L.move, send('PATCH', member, json({ position: 0 })))
  await check(L.move, send('PATCH', `${smart}/products/${productId}`, json({ position: 1 })))
  await check(L.move, send('PATCH', `${manual}/products/${randomUUID()}`, json({ position: 1 })))
  await check(L.move, send('PATCH', member, { ...json({ position: 1 }), key: null }))
  await check(L.move, send('PATCH', member, { ...json({ position: 1 }), key: keys.read }))
  await check(L.move, send('PATCH', member, huge))
  await check(L.move, send('PATCH', member, plain))

  await check(L.patch, send('PATCH', manual, json({ description: 'Hand-picked' })))
  await check(L.patch, send('PATCH', manual, json({ title: '' })))
  await check(L.patch, send('PATCH', smart, json({ handle: 'picks' })))
  await check(
    L.patch,
    send('PATCH', manual, { ...json({ title: 'x' }), headers: { 'if-match': '"99"' } }),
  )
  await check(L.patch, send('PATCH', `${collections}/${randomUUID()}`, json({ title: 'x' })))
  await check(L.patch, send('PATCH', manual, { ...json({ title: 'x' }), key: null }))
  await check(L.patch, send('PATCH', manual, { ...json({ title: 'x' }), key: keys.read }))
  await check(L.patch, send('PATCH', manual, huge))
  await check(L.patch, send('PATCH', manual, plain))

  await check(L.remove, send('DELETE', `${smart}/products/${productId}`))
  await check(L.remove, send('DELETE', `${manual}/products/${randomUUID()}`))
  await check(L.remove, send('DELETE', member, { key: null }))
  await check(L.remove, send('DELETE', member, { key: keys.read }))
  await check(L.remove, send('DELETE', member, { payload: '{' }))
  await check(L.remove, send('DELETE', member, huge))
  await check(L.remove, send('DELETE', member, plain))
  await check(L.remove, send('DELETE', member))

  await check(L.delete, send('DELETE', smart, { headers: { 'if-match': '"99"' } }))
  await check(L.delete, send('DELETE', `${collections}/${randomUUID()}`))
  await check(L.delete, send('DELETE', smart, { key: null }))
  await check(L.delete, send('DELETE', smart, { key: keys.read }))
  await check(L.delete, send('DELETE', smart, { payload: '{' }))
  await check(L.delete, send('DELETE', smart, huge))
  await check(L.delete, send('DELETE', smart, plain))
  await check(L.delete, send('DELETE', smart))

  // Unexpected failures of the writes: 500.
  const fail = (method: 'POST' | 'PATCH' | 'DELETE', url: string, body: unknown) =>
    broken.inject({
      method,
      url,
      headers: { authorization: `Bearer ${brokenKey}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
    })
  await check(L.create, fail('POST', collections, { title: 'Doomed' }))
  await check(L.patch, fail('PATCH', manual, { title: 'Doomed' }))
  await check(L.delete, fail('DELETE', manual, undefined))
  await check(L.add, fail('POST', `${manual}/products`, { product_ids: [productId] }))
  await check(L.move, fail('PATCH', member, { position: 1 }))
  await check(L.remove, fail('DELETE', member, undefined))
  return { manual, member }
}

/** 503 on every collections route, once the database is gone. */
export async function exerciseCollectionsGone(
  check: Check,
  send: Send,
  urls: CollectionUrls,
  productId: string,
): Promise<void> {
  const L = COLLECTION_LABELS
  await check(L.create, send('POST', collections, json({ title: 'x' })))
  await check(L.list, send('GET', collections))
  await check(
    L.preview,
    send(
      'POST',
      `${collections}/preview`,
      json({ rules: [{ field: 'price', relation: 'less_than', value: 1 }] }),
    ),
  )
  await check(L.get, send('GET', urls.manual))
  await check(L.patch, send('PATCH', urls.manual, json({ title: 'x' })))
  await check(L.delete, send('DELETE', urls.manual))
  await check(L.products, send('GET', `${urls.manual}/products`))
  await check(L.add, send('POST', `${urls.manual}/products`, json({ product_ids: [productId] })))
  await check(L.move, send('PATCH', urls.member, json({ position: 1 })))
  await check(L.remove, send('DELETE', urls.member))
}
