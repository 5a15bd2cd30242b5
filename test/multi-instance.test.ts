import assert from 'node:assert/strict'
import { describe, it, type TestContext } from 'node:test'
import { API, POSTGRES_URL, startTwoInstances } from './helpers.js'

/** Requests fired at once in each case, alternating between the instances. */
const N = 30

interface Answer {
  status: number
  body: any
}

/**
 * Two instances of the service on one PostgreSQL schema, and ways to send them requests: the
 * invariants must hold across processes as they do within one.
 */
async function twoInstancesClient(t: TestContext) {
  const { key, addresses } = await startTwoInstances(t)
  const send = async (i: number, method: string, path: string, body?: unknown): Promise<Answer> => {
    const response = await fetch(`${addresses[i % addresses.length]}${API}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${key}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    })
    return { status: response.status, body: await response.json() }
  }
  /** Sends every request before awaiting any, spread over both instances. */
  const postAll = (requests: { path: string; body: unknown }[]) =>
    Promise.all(requests.map((request, i) => send(i, 'POST', request.path, request.body)))
  const createProduct = async (name: string) => {
    const answer = await send(0, 'POST', '/products', { name })
    assert.equal(answer.status, 200, JSON.stringify(answer.body))
    return answer.body.data
  }
  return { send, postAll, createProduct }
}

function statuses(answers: Answer[]): Record<number, number> {
  const counts: Record<number, number> = {}
  for (const answer of answers) counts[answer.status] = (counts[answer.status] ?? 0) + 1
  return counts
}

const suite = POSTGRES_URL ? describe : describe.skip

suite('two instances on one PostgreSQL [postgres]', () => {
  it('give concurrent products with one name distinct slugs t-shirt ... t-shirt-30', async (t) => {
    const { postAll } = await twoInstancesClient(t)
    const answers = await postAll(
      Array.from({ length: N }, () => ({ path: '/products', body: { name: 'T-Shirt' } })),
    )
    assert.deepEqual(statuses(answers), { 200: N })
    const slugs = answers.map((answer) => answer.body.data.slug).sort()
    const expected = ['t-shirt', ...Array.from({ length: N - 1 }, (_, i) => `t-shirt-${i + 2}`)]
    assert.deepEqual(slugs, expected.sort())
  })

  it('let exactly one of concurrent variants with one sku succeed', async (t) => {
    const { postAll, createProduct } = await twoInstancesClient(t)
    const products = [await createProduct('A'), await createProduct('B')]
    const answers = await postAll(
      Array.from({ length: N }, (_, i) => ({
        path: `/products/${products[i % 2].id}/variants`,
        body: { name: `V ${i}`, sku: 'ONE' },
      })),
    )
    assert.deepEqual(statuses(answers), { 200: 1, 409: N - 1 })
    for (const answer of answers) {
      if (answer.status === 409) assert.equal(answer.body.error, 'duplicate_sku')
    }
  })

  it('let exactly one of concurrent variants with equal options succeed', async (t) => {
    const { postAll, createProduct } = await twoInstancesClient(t)
    const product = await createProduct('Options')
    const answers = await postAll(
      Array.from({ length: N }, (_, i) => ({
        path: `/products/${product.id}/variants`,
        body: {
          name: `V ${i}`,
          options: i % 2 === 0 ? { size: 'M', color: 'red' } : { color: 'red', size: 'M' },
        },
      })),
    )
    assert.deepEqual(statuses(answers), { 200: 1, 409: N - 1 })
    for (const answer of answers) {
      if (answer.status === 409) assert.equal(answer.body.error, 'duplicate_options')
    }
  })

  it('give concurrent variants of one product the distinct default positions 1 ... 30', async (t) => {
    const { postAll, send, createProduct } = await twoInstancesClient(t)
    const product = await createProduct('Positions')
    const answers = await postAll(
      Array.from({ length: N }, (_, i) => ({
        path: `/products/${product.id}/variants`,
        body: { name: `V ${i}`, sku: `P-${i}` },
      })),
    )
    assert.deepEqual(statuses(answers), { 200: N })
    const positions = answers.map((answer) => answer.body.data.position).sort((a, b) => a - b)
    assert.deepEqual(
      positions,
      Array.from({ length: N }, (_, i) => i + 1),
    )
    const stored = await send(1, 'GET', `/products/${product.id}/variants`)
    assert.equal(stored.body.data.length, N)
  })
})
