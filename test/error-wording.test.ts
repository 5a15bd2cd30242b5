import assert from 'node:assert/strict'
import { it } from 'node:test'
import fc from 'fast-check'
import type { LightMyRequestResponse } from 'fastify'
import { MAX_POSITION } from './field-rules.js'
import { anyBody, anyPatch } from './fuzz-inputs.js'
import { addVariant, buildTestApi, describeEachDialect, type TestApi } from './helpers.js'
import {
  IMAGES,
  integer,
  money,
  OPTIONS,
  slugSpec,
  TAGS,
  text,
  trimmedString,
  type FieldSpec,
} from './update-cases.js'

/**
 * Ajv's own wording ("must NOT have more than 64 characters", "must be number,null"): none of
 * it may reach a person, in an error's message or in any of its details.
 */
const AJV_WORDING =
  /must NOT|must be (string|number|integer|boolean|array|object|null)\b|,null|must match pattern|must have required|additional properties|equal to one of|must match format|must pass/

const PRODUCT_SPECS: FieldSpec[] = [
  trimmedString('name', 'name', 'Linen Shirt', 255, true),
  trimmedString('sku', 'sku', 'SKU-1', 255),
  trimmedString('vendor', 'vendor', 'Acme', 255),
  money('price', 'price', 10, true),
  money('compare_at_price', 'compareAtPrice', 15, false),
  TAGS,
  IMAGES,
  slugSpec('linen-shirt'),
]

const VARIANT_SPECS: FieldSpec[] = [
  trimmedString('name', 'name', 'Red', 255, true),
  trimmedString('barcode', 'barcode', 'VB-1', 255),
  money('price', 'price', 10, true),
  OPTIONS,
  integer('position', 'position', 3, MAX_POSITION, true),
  integer('weight_grams', 'weightGrams', 500, 1_000_000_000, false),
]

/** Bad values of each field: of the wrong type, out of bounds, null where refused. */
function badValues(spec: FieldSpec): unknown[] {
  return [
    ...spec.wrongType.map((s) => s.value),
    ...spec.outOfBounds.map((s) => s.value),
    ...(spec.null === 'refused' ? [null] : []),
  ]
}

/** Fields and values no rule of the fuzz corpus reaches on its own. */
const EXTRA_PRODUCT_BODIES: unknown[] = [
  {},
  [],
  'text',
  42,
  null,
  { name: 'Tee', status: 'published' },
  { name: 'Tee', status: 3 },
  { name: 'Tee', tax_rate: -1 },
  { name: 'Tee', tax_rate: 101 },
  { name: 'Tee', tax_rate: '19' },
  { name: 'Tee', description: text(20_001) },
  { name: 'Tee', description: 5 },
  { name: 'Tee', barcode: '' },
  { name: 'Tee', product_type: ['a'] },
  { name: 'Tee', price: 1.23456 },
  { name: 'Tee', compareAtPrice: 3 },
  { name: 'Tee', images: [{ url: 'https://x.example/a.jpg', alt: text(513) }] },
  { name: 'Tee', images: [{ alt: 'no url' }] },
  { name: 'Tee', images: ['https://x.example/a.jpg'] },
]

const EXTRA_VARIANT_BODIES: unknown[] = [
  {},
  { name: 'V', options: { '': 'x' } },
  { name: 'V', options: { [text(65)]: 'x' } },
  { name: 'V', options: { size: '' } },
  { name: 'V', options: { size: 5 } },
  { name: 'V', options: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`o${i}`, 'x'])) },
  { name: 'V', position: 1.5 },
  { name: 'V', weight_grams: -1 },
  { name: 'V', weightGrams: 1 },
]

const WEBHOOK_BODIES: unknown[] = [
  {},
  { url: 5, events: ['*'] },
  { url: '', events: ['*'] },
  { url: `https://example.com/${text(2048)}`, events: ['*'] },
  { url: 'https://example.com/hook' },
  { url: 'https://example.com/hook', events: [] },
  { url: 'https://example.com/hook', events: ['nope'] },
  { url: 'https://example.com/hook', events: 'product.created' },
  { url: 'https://example.com/hook', events: ['product.created', 'product.created'] },
  { url: 'https://example.com/hook', events: Array(8).fill('*') },
  { url: 'https://example.com/hook', events: ['*'], enabled: 'yes' },
  { url: 'https://example.com/hook', events: ['*'], description: text(1025) },
  { url: 'https://example.com/hook', events: ['*'], description: 5 },
]

const QUERIES = [
  '/products?limit=0',
  '/products?limit=201',
  '/products?limit=abc',
  '/products?limit=1.5',
  '/products?limit=5&limit=6',
  '/products?status=published',
  '/products?slug=',
  `/products?vendor=${text(256)}`,
  '/products?tag=a%00b',
  '/products?product_type=',
  '/variants',
  '/variants?sku=',
  '/variants?sku=%20%20',
  '/variants?sku=a%00b',
  '/events?limit=0',
  '/events?limit=x',
  '/events?after=x',
  '/events?after=-1',
  '/events?type=nope',
  '/imports?limit=0',
  '/imports?limit=1000',
]

/** Every 400 answer's message and detail messages, with what was asked. */
class Answers {
  readonly seen: { label: string; body: Record<string, any> }[] = []

  add(label: string, res: LightMyRequestResponse): void {
    if (res.statusCode !== 400) return
    this.seen.push({ label, body: res.json() })
  }

  check(): void {
    for (const { label, body } of this.seen) {
      const messages = [body.message, ...(body.details ?? []).map((d: any) => d.message)]
      for (const message of messages) {
        assert.equal(typeof message, 'string', `${label}: ${JSON.stringify(body)}`)
        assert.doesNotMatch(message, AJV_WORDING, `${label}: ${JSON.stringify(body)}`)
      }
    }
  }
}

async function sendAll(
  api: TestApi,
  answers: Answers,
  method: string,
  path: string,
  bodies: unknown[],
): Promise<void> {
  for (const body of bodies) {
    const payload = typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body)
    answers.add(
      `${method} ${path} ${String(payload).slice(0, 200)}`,
      await api.request(method, path, { body: payload }),
    )
  }
}

/** `{name, field: value}` for a create, `{field: value}` for a patch, per bad value. */
function fieldBodies(specs: FieldSpec[], name: string | undefined): unknown[] {
  return specs.flatMap((spec) =>
    badValues(spec).map((value) => ({ ...(name && { name }), [spec.field]: value })),
  )
}

const SEED = 33
const RUNS = 120

describeEachDialect('error wording', (dialect) => {
  it("no 400 answer of any route carries Ajv's wording", async (t) => {
    const api = await buildTestApi(t, dialect)
    const answers = new Answers()
    const product = await api.createProduct({ name: 'Linen Shirt', slug: 'linen-shirt' })
    const variant = await addVariant(api, product.id, { name: 'Red', options: { color: 'red' } })
    const productPath = `/products/${product.id}`
    const variantPath = `${productPath}/variants/${variant.id}`

    // Products: each field's bad values, the fuzz corpus, and the rest.
    await sendAll(api, answers, 'POST', '/products', [
      ...fieldBodies(PRODUCT_SPECS, 'Tee'),
      ...EXTRA_PRODUCT_BODIES,
      ...fc.sample(anyBody('product'), { numRuns: RUNS, seed: SEED }),
    ])
    await sendAll(api, answers, 'PATCH', productPath, [
      ...fieldBodies(PRODUCT_SPECS, undefined),
      ...EXTRA_PRODUCT_BODIES.slice(1),
      ...fc.sample(anyPatch('product'), { numRuns: RUNS, seed: SEED }),
    ])

    // Variants, the same way.
    await sendAll(api, answers, 'POST', `${productPath}/variants`, [
      ...fieldBodies(VARIANT_SPECS, 'V'),
      ...EXTRA_VARIANT_BODIES,
      ...fc.sample(anyBody('variant'), { numRuns: RUNS, seed: SEED }),
    ])
    await sendAll(api, answers, 'PATCH', variantPath, [
      ...fieldBodies(VARIANT_SPECS, undefined),
      ...EXTRA_VARIANT_BODIES.slice(1),
      ...fc.sample(anyPatch('variant'), { numRuns: RUNS, seed: SEED }),
    ])

    // Webhook endpoints.
    await sendAll(api, answers, 'POST', '/webhook-endpoints', WEBHOOK_BODIES)
    const endpoint = await api.post('/webhook-endpoints', {
      url: 'https://example.com/hook',
      events: ['*'],
    })
    if (endpoint.statusCode === 200) {
      const path = `/webhook-endpoints/${endpoint.json().data.id}`
      await sendAll(api, answers, 'PATCH', path, WEBHOOK_BODIES.slice(1))
      for (const query of ['?limit=0', '?limit=x', '?limit=500']) {
        answers.add(`GET ${path}/deliveries${query}`, await api.get(`${path}/deliveries${query}`))
      }
    }

    // Query strings and headers.
    for (const query of QUERIES) answers.add(`GET ${query}`, await api.get(query))
    for (const key of ['', ' padded ', text(256), 'tab\there']) {
      answers.add(
        `POST /products with Idempotency-Key ${JSON.stringify(key)}`,
        await api.request('POST', '/products', {
          body: { name: 'Tee' },
          headers: { 'idempotency-key': key },
        }),
      )
    }
    answers.add(
      'PATCH with If-Match 3',
      await api.request('PATCH', productPath, {
        body: { name: 'x' },
        headers: { 'if-match': '3' },
      }),
    )

    // A broad set indeed: hundreds of refusals, most of them of fields.
    assert.ok(answers.seen.length >= 300, `only ${answers.seen.length} answers of 400`)
    const details = answers.seen.flatMap(({ body }) => body.details ?? [])
    assert.ok(details.length >= 300, `only ${details.length} field problems`)
    answers.check()
  })

  it('says each rule in plain words, from the schema', async (t) => {
    const api = await buildTestApi(t, dialect)
    const product = await api.createProduct({ name: 'Tee' })
    const created = await api.post('/webhook-endpoints', {
      url: 'https://e.example/h',
      events: ['*'],
    })
    assert.equal(created.statusCode, 200, created.body)
    const endpoint = created.json().data
    const cases: [path: string, body: unknown, field: string, message: string][] = [
      ['/products', { name: 'T', price: -1 }, 'price', 'must be >= 0'],
      ['/products', { name: 'T', price: 1e10 }, 'price', 'must be <= 1000000000'],
      ['/products', { name: 'T', price: '1' }, 'price', 'must be a number'],
      ['/products', { name: 'T', sku: 5 }, 'sku', 'must be text'],
      ['/products', { name: '' }, 'name', 'must not be empty'],
      ['/products', { name: text(256) }, 'name', 'must be at most 255 characters long'],
      ['/products', { name: 'T', tags: 'a' }, 'tags', 'must be a list'],
      [
        '/products',
        { name: 'T', tags: Array(251).fill('a') },
        'tags',
        'must have at most 250 items',
      ],
      ['/products', { name: 'T', images: [5] }, 'images.0', 'must be an object with named fields'],
      ['/products', {}, 'name', 'is required'],
      ['/products', { name: 'T', status: 'x' }, 'status', 'must be one of draft, active, archived'],
      [
        `/products/${product.id}/variants`,
        { name: 'V', position: 1.5 },
        'position',
        'must be a whole number',
      ],
      [
        `/products/${product.id}/variants`,
        { name: 'V', options: { [text(65)]: 'x' } },
        'options',
        `name "${text(65)}" must be at most 64 characters long`,
      ],
      [
        '/webhook-endpoints',
        { url: 'https://e.example/h', events: [] },
        'events',
        'must not be an empty list',
      ],
    ]
    const patches: typeof cases = [
      [
        `/products/${product.id}`,
        { slug: 'Not A Slug' },
        'slug',
        'must be lowercase letters, digits and single dashes between them',
      ],
      [`/products/${product.id}`, { price: null }, 'price', 'must be a number'],
      [`/webhook-endpoints/${endpoint.id}`, { enabled: 'yes' }, 'enabled', 'must be true or false'],
    ]
    const send = (path: string, body: unknown, patch: boolean) =>
      patch ? api.patch(path, body) : api.post(path, body)
    for (const [path, body, field, message, patch] of [
      ...cases.map((c) => [...c, false] as const),
      ...patches.map((c) => [...c, true] as const),
    ]) {
      const res = await send(path, body, patch)
      assert.equal(res.statusCode, 400, `${path} ${JSON.stringify(body)}: ${res.body}`)
      const details: { field: string; message: string }[] = res.json().details ?? []
      assert.ok(
        details.some((d) => d.field === field && d.message === message),
        `${JSON.stringify(body)}: expected ${field} "${message}", got ${JSON.stringify(details)}`,
      )
    }
  })
})
