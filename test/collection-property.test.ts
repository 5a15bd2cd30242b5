import assert from 'node:assert/strict'
import { it } from 'node:test'
import fc from 'fast-check'
import { buildTestApi, describeEachDialect, type TestApi } from './helpers.js'
import { readFeed } from './event-helpers.js'

/**
 * Smart membership as a property: after any sequence of product and variant writes and rule
 * changes, each smart collection holds exactly the products that an evaluation of its rules
 * written here (from the products as the API answers them) selects, and replaying the
 * collection.products_changed events of the feed gives the same sets.
 */

type Rule = { field: string; relation: string; value: string | number }

const WORDS = ['Red', 'blue', 'Crème', 'shirt', 'MUG']
const word = fc.constantFrom(...WORDS)
const text = fc.oneof(
  word,
  fc.tuple(word, word).map(([a, b]) => `${a} ${b}`),
)

const rule: fc.Arbitrary<Rule> = fc.oneof(
  fc.record({
    field: fc.constantFrom('name', 'vendor', 'product_type'),
    relation: fc.constantFrom(
      'equals',
      'not_equals',
      'contains',
      'not_contains',
      'starts_with',
      'ends_with',
    ),
    value: fc.oneof(
      word,
      word.map((w) => w.toUpperCase()),
      fc.constantFrom('e', 'RED BLUE'),
    ),
  }),
  fc.record({
    field: fc.constant('tag'),
    relation: fc.constantFrom('equals', 'not_equals'),
    value: word,
  }),
  fc.record({
    field: fc.constant('price'),
    relation: fc.constantFrom('equals', 'greater_than', 'less_than'),
    value: fc.constantFrom(0, 5, 10, 10.5),
  }),
  fc.record({
    field: fc.constant('status'),
    relation: fc.constantFrom('equals', 'not_equals'),
    value: fc.constantFrom('draft', 'active', 'archived'),
  }),
  fc.record({
    field: fc.constantFrom('option.Color', 'option.size'),
    relation: fc.constant('equals'),
    value: word,
  }),
)
const rules = fc.record({
  rules: fc.array(rule, { minLength: 1, maxLength: 3 }),
  disjunctive: fc.boolean(),
})

const productBody = fc.record(
  {
    name: text,
    vendor: fc.option(text, { nil: null }),
    product_type: fc.option(word, { nil: null }),
    tags: fc.array(word, { maxLength: 3 }),
    price: fc.constantFrom(0, 5, 10, 10.5, 20),
    status: fc.constantFrom('draft', 'active', 'archived'),
  },
  { requiredKeys: [] },
)

type Command =
  | { kind: 'createProduct'; body: Record<string, unknown> }
  | { kind: 'patchProduct'; pick: number; body: Record<string, unknown> }
  | { kind: 'deleteProduct'; pick: number }
  | { kind: 'addVariant'; pick: number; options: Record<string, string> }
  | { kind: 'patchVariant'; pick: number; options: Record<string, string> }
  | { kind: 'deleteVariant'; pick: number }
  | { kind: 'createCollection'; rules: { rules: Rule[]; disjunctive: boolean } }
  | { kind: 'patchCollection'; pick: number; rules: { rules: Rule[]; disjunctive: boolean } }

const options = fc.record(
  { Color: word, size: fc.constantFrom('S', 'M', 'Red') },
  { requiredKeys: [] },
)
const pick = fc.nat(1000)
const command: fc.Arbitrary<Command> = fc.oneof(
  {
    weight: 4,
    arbitrary: productBody.map((body) => ({
      kind: 'createProduct' as const,
      body: { name: 'x', ...body },
    })),
  },
  {
    weight: 4,
    arbitrary: fc.record({ kind: fc.constant('patchProduct' as const), pick, body: productBody }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('deleteProduct' as const), pick }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('addVariant' as const), pick, options }) },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant('patchVariant' as const), pick, options }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('deleteVariant' as const), pick }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('createCollection' as const), rules }) },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant('patchCollection' as const), pick, rules }),
  },
)

interface Known {
  products: string[]
  variants: { productId: string; id: string }[]
  collections: string[]
}

async function runCommand(api: TestApi, known: Known, c: Command): Promise<void> {
  const at = <T>(list: T[], n: number) => (list.length === 0 ? undefined : list[n % list.length])
  const ok = (res: { statusCode: number; body: string }, what: string) =>
    assert.ok([200, 409].includes(res.statusCode), `${what}: ${res.statusCode} ${res.body}`)
  switch (c.kind) {
    case 'createProduct':
      known.products.push((await api.createProduct(c.body)).id)
      return
    case 'patchProduct': {
      const id = at(known.products, c.pick)
      // archived to active is refused (409): the write changes nothing, the property holds.
      if (id) ok(await api.patch(`/products/${id}`, c.body), 'patch product')
      return
    }
    case 'deleteProduct': {
      const id = at(known.products, c.pick)
      if (!id) return
      ok(await api.delete(`/products/${id}`), 'delete product')
      known.products = known.products.filter((p) => p !== id)
      known.variants = known.variants.filter((v) => v.productId !== id)
      return
    }
    case 'addVariant': {
      const id = at(known.products, c.pick)
      if (!id) return
      const res = await api.post(`/products/${id}/variants`, { name: 'v', options: c.options })
      ok(res, 'add variant')
      if (res.statusCode === 200) known.variants.push({ productId: id, id: res.json().data.id })
      return
    }
    case 'patchVariant': {
      const v = at(known.variants, c.pick)
      if (v) {
        ok(
          await api.patch(`/products/${v.productId}/variants/${v.id}`, { options: c.options }),
          'patch variant',
        )
      }
      return
    }
    case 'deleteVariant': {
      const v = at(known.variants, c.pick)
      if (!v) return
      ok(await api.delete(`/products/${v.productId}/variants/${v.id}`), 'delete variant')
      known.variants = known.variants.filter((x) => x.id !== v.id)
      return
    }
    case 'createCollection': {
      const res = await api.post('/collections', { title: 'Smart', ...c.rules })
      ok(res, 'create collection')
      known.collections.push(res.json().data.id)
      return
    }
    case 'patchCollection': {
      const id = at(known.collections, c.pick)
      if (id) ok(await api.patch(`/collections/${id}`, c.rules), 'patch collection')
    }
  }
}

/** The rules' meaning, from the contract, over the records the API answers. */
function selects(rules: Rule[], disjunctive: boolean, product: any): boolean {
  const holds = (r: Rule): boolean => {
    const v = typeof r.value === 'string' ? r.value.toLowerCase() : r.value
    if (r.field === 'price') {
      return r.relation === 'equals'
        ? product.price === v
        : r.relation === 'greater_than'
          ? product.price > (v as number)
          : product.price < (v as number)
    }
    if (r.field === 'status') return (product.status === v) === (r.relation === 'equals')
    if (r.field === 'tag') {
      const has = product.tags.some((t: string) => t.toLowerCase() === v)
      return has === (r.relation === 'equals')
    }
    if (r.field.startsWith('option.')) {
      const name = r.field.slice('option.'.length).toLowerCase()
      return product.variants.some((variant: any) =>
        Object.entries(variant.options).some(
          ([k, value]) => k.toLowerCase() === name && String(value).toLowerCase() === v,
        ),
      )
    }
    const stored = {
      name: product.name,
      vendor: product.vendor,
      product_type: product.productType,
    }[r.field] as string | null
    const s = stored?.toLowerCase()
    const t = v as string
    const found =
      s !== undefined &&
      (r.relation.endsWith('equals')
        ? s === t
        : r.relation.endsWith('contains')
          ? s.includes(t)
          : r.relation === 'starts_with'
            ? s.startsWith(t)
            : s.endsWith(t))
    return r.relation.startsWith('not_') ? !found : found
  }
  return disjunctive ? rules.some(holds) : rules.every(holds)
}

async function check(api: TestApi, known: Known): Promise<void> {
  const products: any[] = []
  for (const id of known.products) products.push((await api.get(`/products/${id}`)).json().data)
  const expectedOf = new Map<string, string[]>()
  for (const id of known.collections) {
    const collection = (await api.get(`/collections/${id}`)).json().data
    const members = new Set<string>()
    let cursor: string | null = null
    do {
      const res = await api.get(
        `/collections/${id}/products?limit=200${cursor ? `&cursor=${cursor}` : ''}`,
      )
      for (const p of res.json().data) members.add(p.id)
      cursor = res.json().nextCursor
    } while (cursor)
    const expected: string[] = products
      .filter((p) => selects(collection.rules, collection.disjunctive, p))
      .map((p) => p.id)
      .sort()
    assert.deepEqual([...members].sort(), expected, JSON.stringify(collection.rules))
    assert.equal(collection.productsCount, expected.length)
    expectedOf.set(id, expected)
  }
  // PostgreSQL's feed holds an event back while an older transaction anywhere on the server
  // runs (another test's, say) for up to a second per read: read again until it shows them.
  const deadline = Date.now() + 10_000
  for (;;) {
    const events = await readFeed(api, { query: 'type=collection.products_changed&limit=500' })
    const replayedOf = new Map<string, string[]>()
    for (const id of known.collections) {
      const replayed = new Set<string>()
      for (const e of events) {
        if (e.data.object.collectionId !== id) continue
        for (const p of e.data.object.added) replayed.add(p)
        for (const p of e.data.object.removed) replayed.delete(p)
      }
      replayedOf.set(id, [...replayed].sort())
    }
    const same = known.collections.every(
      (id) => JSON.stringify(replayedOf.get(id)) === JSON.stringify(expectedOf.get(id)),
    )
    if (same || Date.now() > deadline) {
      assert.deepEqual(replayedOf, expectedOf, 'replayed products_changed events')
      return
    }
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

/** The test API's calls made with one key: each run of the property is a store of its own. */
function asStore(api: TestApi, key: string): TestApi {
  return {
    ...api,
    key,
    post: (path, body) => api.post(path, body, key),
    get: (path) => api.get(path, key),
    patch: (path, body, options = {}) => api.patch(path, body, { ...options, key }),
    delete: (path, options = {}) => api.delete(path, { ...options, key }),
    createProduct: (body) => api.createProduct(body, key),
  }
}

describeEachDialect('collection membership property', (dialect) => {
  it('members equal the rules evaluation and the replayed events', async (t) => {
    const shared = await buildTestApi(t, dialect)
    let run = 0
    await fc.assert(
      fc.asyncProperty(
        fc.array(command, { minLength: 5, maxLength: 25 }),
        fc.array(rules, { minLength: 2, maxLength: 4 }),
        async (commands, last) => {
          const api = asStore(shared, await shared.newKey({ store: `run-${run++}` }))
          const known: Known = { products: [], variants: [], collections: [] }
          for (const c of commands) await runCommand(api, known, c)
          // Collections made last select from every product at once (the SQL evaluation).
          for (const r of last) await runCommand(api, known, { kind: 'createCollection', rules: r })
          await check(api, known)
        },
      ),
      { numRuns: dialect === 'sqlite' ? 100 : 30 },
    )
  })
})
