import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { it } from 'node:test'
import fc from 'fast-check'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import { createApiKey } from '../src/auth/api-key.service.js'
import { assertContractAnswer, TIMESTAMP, UUID } from './contract-checks.js'
import { API, buildTestApi, describeEachDialect } from './helpers.js'
import { checkAgainstDocument } from './openapi-conformance.js'

/**
 * A model of the contract: two stores, their products in order of creation with their
 * variants, the slugs and variant skus taken in each store. Every command predicts the
 * service's whole answer from it.
 */
type Store = 'a' | 'b'

interface ModelProduct {
  store: Store
  record: Record<string, any>
  variants: Record<string, any>[]
}

interface Model {
  products: ModelProduct[]
  slugs: Record<Store, Set<string>>
  /** Per base slug, the highest suffix handed out or reserved (a name like "T-Shirt 5"). */
  highestSuffix: Record<Store, Map<string, number>>
  skus: Record<Store, Set<string>>
}

interface Real {
  app: FastifyInstance
  keys: Record<Store, string>
  commands: number
  requests: number
  /** Answers by status and error code, to show that the runs reach every kind of answer. */
  answers: Map<string, number>
}

/** Runs; FUZZ_RUNS raises it. */
const RUNS = Number(process.env.FUZZ_RUNS) > 0 ? Number(process.env.FUZZ_RUNS) : 25

/** Names drawn from a small pool, so that slugs collide: each with the slug it makes. */
const NAMES: { name: string; slug: string }[] = [
  { name: 'T-Shirt', slug: 't-shirt' },
  { name: '  t shirt ', slug: 't-shirt' },
  { name: 'T--SHIRT!', slug: 't-shirt' },
  { name: 'T-Shirt 2', slug: 't-shirt-2' },
  { name: 'T-Shirt 3', slug: 't-shirt-3' },
  { name: 'T-Shirt 2 2', slug: 't-shirt-2-2' },
  { name: 'T-Shirt 1', slug: 't-shirt-1' },
  { name: 'T-Shirt 02', slug: 't-shirt-02' },
  { name: 'Crème Brûlée', slug: 'creme-brulee' },
  { name: 'creme brulee 2', slug: 'creme-brulee-2' },
  { name: 'Straße', slug: 'strasse' },
  { name: '😀🎉', slug: 'product' },
  { name: 'Product', slug: 'product' },
  { name: 'Product 2', slug: 'product-2' },
]

/** The slug the contract gives a product whose name makes `base`, in a store that has `taken`. */
function nextSlug(model: Model, store: Store, base: string): string {
  const taken = model.slugs[store]
  const highest = model.highestSuffix[store]
  // A name that looks suffixed reserves its suffix for its base (docs/decisions.md).
  const looksSuffixed = /^(.+)-([1-9]\d*)$/.exec(base)
  if (looksSuffixed && Number(looksSuffixed[2]) >= 2) {
    const [, of, n] = looksSuffixed
    highest.set(of!, Math.max(highest.get(of!) ?? 1, Number(n)))
  }
  let slug = base
  if (taken.has(base)) {
    const n = (highest.get(base) ?? 1) + 1
    highest.set(base, n)
    slug = `${base}-${n}`
  }
  taken.add(slug)
  return slug
}

function sameOptions(a: Record<string, string>, b: Record<string, string>): boolean {
  const keys = Object.keys(a)
  return (
    keys.length === Object.keys(b).length && keys.every((k) => Object.hasOwn(b, k) && b[k] === a[k])
  )
}

/** Variants by position, then creation: a stable sort of the model's creation order. */
function ordered(variants: Record<string, any>[]) {
  return [...variants].sort((x, y) => x.position - y.position)
}

async function request(
  real: Real,
  store: Store,
  method: 'GET' | 'POST',
  path: string,
  body?: unknown,
): Promise<LightMyRequestResponse> {
  real.requests++
  const response = await real.app.inject({
    method,
    url: `${API}${path}`,
    headers: {
      authorization: `Bearer ${real.keys[store]}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
  })
  assertContractAnswer(response, `${method} ${path} ${JSON.stringify(body) ?? ''}`)
  checkAgainstDocument(method, `${API}${path}`, response)
  const answer = `${response.statusCode}${response.statusCode === 200 ? '' : ` ${response.json().error}`}`
  real.answers.set(answer, (real.answers.get(answer) ?? 0) + 1)
  return response
}

function expectStatus(response: LightMyRequestResponse, status: number, code?: string) {
  assert.equal(response.statusCode, status, response.body)
  if (code !== undefined) assert.equal(response.json().error, code)
}

/** A product chosen by a number: one of the model's (of either store), or an id no store has. */
type ProductChoice = { index: number } | { unknown: string }

function resolve(model: Model, choice: ProductChoice): { id: string; product?: ModelProduct } {
  if ('unknown' in choice) return { id: choice.unknown }
  const product = model.products[choice.index % Math.max(1, model.products.length)]
  return product ? { id: product.record.id, product } : { id: randomUUID() }
}

class CreateProduct implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly store: Store,
    readonly name: (typeof NAMES)[number],
    readonly status: string | undefined,
    readonly price: number | undefined,
  ) {}
  check = () => true
  async run(model: Model, real: Real) {
    real.commands++
    const body = { name: this.name.name, status: this.status, price: this.price }
    const response = await request(real, this.store, 'POST', '/products', body)
    expectStatus(response, 200)
    const record = response.json().data
    assert.match(record.id, UUID)
    assert.match(record.createdAt, TIMESTAMP)
    assert.deepEqual(record, {
      id: record.id,
      name: this.name.name.trim(),
      slug: nextSlug(model, this.store, this.name.slug),
      status: this.status ?? 'draft',
      price: this.price ?? 0,
      compareAtPrice: null,
      sku: null,
      description: null,
      barcode: null,
      taxRate: null,
      createdAt: record.createdAt,
      updatedAt: record.createdAt,
    })
    model.products.push({ store: this.store, record, variants: [] })
  }
  toString = () =>
    `create(${this.store}, ${JSON.stringify(this.name.name)}, ${this.status}, ${this.price})`
}

class AddVariant implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly store: Store,
    readonly product: ProductChoice,
    readonly sku: string | undefined,
    readonly options: Record<string, string> | undefined,
    readonly position: number | undefined,
    readonly price: number | undefined,
  ) {}
  check = () => true
  async run(model: Model, real: Real) {
    real.commands++
    const { id, product } = resolve(model, this.product)
    const body = {
      name: 'Variant',
      sku: this.sku,
      options: this.options,
      position: this.position,
      price: this.price,
    }
    const response = await request(real, this.store, 'POST', `/products/${id}/variants`, body)
    if (!product || product.store !== this.store) return expectStatus(response, 404, 'not_found')
    const sku = this.sku?.trim()
    const skuTaken = sku !== undefined && model.skus[this.store].has(sku)
    const options = this.options ?? {}
    const optionsTaken =
      Object.keys(options).length > 0 &&
      product.variants.some((v) => sameOptions(v.options, options))
    if (skuTaken && optionsTaken) {
      // Both conflicts: the contract does not rank them.
      assert.equal(response.statusCode, 409, response.body)
      assert.ok(['duplicate_sku', 'duplicate_options'].includes(response.json().error))
      return
    }
    if (skuTaken) return expectStatus(response, 409, 'duplicate_sku')
    if (optionsTaken) return expectStatus(response, 409, 'duplicate_options')
    expectStatus(response, 200)
    const record = response.json().data
    const highest = Math.max(0, ...product.variants.map((v) => v.position))
    assert.deepEqual(record, {
      id: record.id,
      productId: product.record.id,
      name: 'Variant',
      sku: sku ?? null,
      barcode: null,
      price: this.price ?? product.record.price,
      compareAtPrice: null,
      options,
      position: this.position ?? highest + 1,
      createdAt: record.createdAt,
      updatedAt: record.createdAt,
    })
    assert.match(record.id, UUID)
    product.variants.push(record)
    if (sku !== undefined) model.skus[this.store].add(sku)
  }
  toString = () =>
    `addVariant(${this.store}, ${JSON.stringify(this.product)}, sku ${JSON.stringify(this.sku)}, options ${JSON.stringify(this.options)}, position ${this.position}, price ${this.price})`
}

class GetProduct implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly store: Store,
    readonly product: ProductChoice,
    readonly variantsOnly: boolean,
  ) {}
  check = () => true
  async run(model: Model, real: Real) {
    real.commands++
    const { id, product } = resolve(model, this.product)
    const path = this.variantsOnly ? `/products/${id}/variants` : `/products/${id}`
    const response = await request(real, this.store, 'GET', path)
    if (!product || product.store !== this.store) return expectStatus(response, 404, 'not_found')
    expectStatus(response, 200)
    const variants = ordered(product.variants)
    assert.deepEqual(
      response.json().data,
      this.variantsOnly ? variants : { ...product.record, variants },
    )
  }
  toString = () =>
    `${this.variantsOnly ? 'listVariants' : 'get'}(${this.store}, ${JSON.stringify(this.product)})`
}

class ListProducts implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly store: Store,
    readonly limit: number,
    readonly status: string | undefined,
  ) {}
  check = () => true
  async run(model: Model, real: Real) {
    real.commands++
    const expected = model.products
      .filter(
        (p) =>
          p.store === this.store && (this.status === undefined || p.record.status === this.status),
      )
      .map((p) => p.record)
      .reverse()
    const pages: Record<string, any>[][] = []
    let cursor: string | null = null
    do {
      const query = new URLSearchParams({ limit: String(this.limit) })
      if (this.status !== undefined) query.set('status', this.status)
      if (cursor !== null) query.set('cursor', cursor)
      const response = await request(real, this.store, 'GET', `/products?${query}`)
      expectStatus(response, 200)
      const page = response.json()
      pages.push(page.data)
      cursor = page.nextCursor
      assert.ok(pages.length <= expected.length + 1, 'the pages do not end')
    } while (cursor !== null)
    const expectedPages = []
    for (let i = 0; i < expected.length; i += this.limit)
      expectedPages.push(expected.slice(i, i + this.limit))
    assert.deepEqual(pages, expectedPages.length > 0 ? expectedPages : [[]])
  }
  toString = () => `list(${this.store}, limit ${this.limit}, status ${this.status})`
}

const store = fc.constantFrom<Store>('a', 'b')
const productChoice: fc.Arbitrary<ProductChoice> = fc.oneof(
  { weight: 8, arbitrary: fc.nat().map((index) => ({ index })) },
  { weight: 1, arbitrary: fc.uuid().map((unknown) => ({ unknown })) },
  { weight: 1, arbitrary: fc.constantFrom('not-a-uuid', '123').map((unknown) => ({ unknown })) },
)
const OPTION_SETS: (Record<string, string> | undefined)[] = [
  undefined,
  {},
  { size: 'M' },
  { size: 'M', color: 'red' },
  { color: 'red', size: 'M' },
  { size: 'L' },
  { Size: 'M' },
  { constructor: 'x', toString: 'y' },
]

const addVariant = fc
  .tuple(
    store,
    productChoice,
    fc.constantFrom(undefined, 'S1', ' S1 ', 's1', 'S2', 'S3'),
    fc.constantFrom(...OPTION_SETS),
    fc.constantFrom(undefined, undefined, 0, 1, 3),
    fc.constantFrom(undefined, 0, 5.5),
  )
  .map((args) => new AddVariant(...args))

const commands = fc.commands(
  [
    fc
      .tuple(
        store,
        fc.constantFrom(...NAMES),
        fc.constantFrom(undefined, 'draft', 'active', 'archived'),
        fc.constantFrom(undefined, 0, 19.99, 1e9),
      )
      .map((args) => new CreateProduct(...args)),
    // Twice the weight: variants are where the conflicts are.
    addVariant,
    addVariant,
    fc.tuple(store, productChoice, fc.boolean()).map((args) => new GetProduct(...args)),
    fc
      .tuple(store, fc.constantFrom(1, 2, 3, 50), fc.constantFrom(undefined, 'draft', 'active'))
      .map((args) => new ListProducts(...args)),
  ],
  { maxCommands: 80, size: 'large' },
)

describeEachDialect('the contract, as a model', (dialect) => {
  it('random sequences of creates and reads across two stores get the answers the model predicts', async (t) => {
    const api = await buildTestApi(t, dialect)
    let runs = 0
    let commandsRun = 0
    let requests = 0
    const answers = new Map<string, number>()
    await fc.assert(
      fc.asyncProperty(commands, async (sequence) => {
        runs++
        // Two new stores for every run: the model starts empty without a new database.
        const keys = {
          a: (
            await createApiKey(api.database, { store: `run-${runs}-a`, scopes: ['read', 'write'] })
          ).key,
          // Store b's key has only write, which includes read.
          b: (await createApiKey(api.database, { store: `run-${runs}-b`, scopes: ['write'] })).key,
        }
        const real: Real = { app: api.app, keys, commands: 0, requests: 0, answers }
        const model: Model = {
          products: [],
          slugs: { a: new Set(), b: new Set() },
          highestSuffix: { a: new Map(), b: new Map() },
          skus: { a: new Set(), b: new Set() },
        }
        await fc.asyncModelRun(() => ({ model, real }), sequence)
        commandsRun += real.commands
        requests += real.requests
      }),
      { numRuns: RUNS },
    )
    const byAnswer = [...answers].sort().map(([answer, count]) => `${answer}: ${count}`)
    t.diagnostic(
      `${runs} runs, ${commandsRun} commands, ${requests} requests (${byAnswer.join(', ')})`,
    )
  })
})
