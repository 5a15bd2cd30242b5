import assert from 'node:assert/strict'
import { it } from 'node:test'
import anyAscii from 'any-ascii'
import fc from 'fast-check'
import { addVariant, buildTestApi, describeEachDialect, type TestApi } from './helpers.js'

type Json = Record<string, any>

/**
 * A property test of the list against a plain in-memory reference of the contract's rules:
 * for random small catalogues and random queries (seeded), the products found and the facet
 * counts equal the reference's.
 */

const WORDS = [
  'Crème',
  'creme',
  'Café',
  'T-shirt',
  'shirt',
  'Blue',
  'bleu',
  'mug',
  'Mugs',
  'naïve',
  'ÉCO',
]
const VENDORS = ['Acme', 'Globex', 'acme']
const TAGS = ['Sale', 'sale', 'New', 'eco']
const COLORS = ['Blue', 'blue', 'Red']
const SIZES = ['S', 'M']

interface Item {
  name: string
  description?: string
  vendor?: string
  price: number
  tags: string[]
  variants: { name: string; options: Record<string, string> }[]
}

const item: fc.Arbitrary<Item> = fc.record({
  name: fc.array(fc.constantFrom(...WORDS), { minLength: 1, maxLength: 3 }).map((w) => w.join(' ')),
  description: fc.option(fc.constantFrom(...WORDS), { nil: undefined }),
  vendor: fc.option(fc.constantFrom(...VENDORS), { nil: undefined }),
  price: fc.integer({ min: 0, max: 40 }),
  tags: fc.uniqueArray(fc.constantFrom(...TAGS), {
    maxLength: 2,
    selector: (t) => t.toLowerCase(),
  }),
  variants: fc.uniqueArray(
    fc.record({
      name: fc.constantFrom('v', 'Large', 'small'),
      options: fc.record({ Color: fc.constantFrom(...COLORS), Size: fc.constantFrom(...SIZES) }),
    }),
    { maxLength: 2, selector: (v) => JSON.stringify(v.options).toLowerCase() },
  ),
})

interface Query {
  q?: string
  vendor?: string[]
  tag?: string[]
  color?: string[]
  priceMin?: number
}

const query: fc.Arbitrary<Query> = fc.record(
  {
    q: fc.oneof(
      fc.constantFrom(...WORDS),
      fc.constantFrom(...WORDS).map((w) => w.slice(0, 3)),
      fc
        .tuple(fc.constantFrom(...WORDS), fc.constantFrom(...WORDS))
        .map(([a, b]) => `${a} ${b.slice(0, 2)}`),
    ),
    vendor: fc.uniqueArray(fc.constantFrom(...VENDORS), { minLength: 1, maxLength: 2 }),
    tag: fc.uniqueArray(fc.constantFrom(...TAGS), { minLength: 1, maxLength: 2 }),
    color: fc.uniqueArray(fc.constantFrom(...COLORS), { minLength: 1, maxLength: 2 }),
    priceMin: fc.integer({ min: 0, max: 40 }),
  },
  { requiredKeys: [] },
)

const fold = (text: string) =>
  anyAscii(text)
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean)

/** The reference: does `item` (whose slug is `slug`) match `q`? */
function matchesQ(item: Item, slug: string, q: string): boolean {
  const words = fold(q)
  const texts = [
    item.name,
    item.description ?? '',
    item.vendor ?? '',
    ...item.tags,
    slug,
    ...item.variants.flatMap((v) => [v.name, ...Object.values(v.options)]),
  ]
  const have = new Set(texts.flatMap(fold))
  return words.every((word, i) =>
    i === words.length - 1 ? [...have].some((h) => h.startsWith(word)) : have.has(word),
  )
}

type Filter = 'vendor' | 'tag' | 'color' | 'price'

function matches(item: Item, slug: string, query: Query, except?: Filter): boolean {
  if (query.q !== undefined && !matchesQ(item, slug, query.q)) return false
  if (except !== 'vendor' && query.vendor && !query.vendor.includes(item.vendor ?? '\u0000'))
    return false
  if (
    except !== 'tag' &&
    query.tag &&
    !item.tags.some((t) => query.tag!.some((w) => w.toLowerCase() === t.toLowerCase()))
  )
    return false
  if (
    except !== 'color' &&
    query.color &&
    !item.variants.some((v) =>
      query.color!.some((c) => c.toLowerCase() === v.options.Color!.toLowerCase()),
    )
  )
    return false
  if (except !== 'price' && query.priceMin !== undefined && item.price < query.priceMin)
    return false
  return true
}

function countsOf(values: string[][], fold: (v: string) => string): Map<string, number> {
  const counts = new Map<string, number>()
  for (const list of values) {
    for (const value of new Set(list.map(fold))) counts.set(value, (counts.get(value) ?? 0) + 1)
  }
  return counts
}

function queryString(query: Query): string {
  const parts: string[] = ['limit=200', 'facets=vendor,tag,option.color,price']
  if (query.q !== undefined) parts.push(`q=${encodeURIComponent(query.q)}`, 'sort=newest')
  for (const v of query.vendor ?? []) parts.push(`vendor=${encodeURIComponent(v)}`)
  for (const v of query.tag ?? []) parts.push(`tag=${encodeURIComponent(v)}`)
  for (const v of query.color ?? []) parts.push(`option.Color=${encodeURIComponent(v)}`)
  if (query.priceMin !== undefined) parts.push(`price_min=${query.priceMin}`)
  return parts.join('&')
}

async function load(
  api: TestApi,
  key: string,
  items: Item[],
): Promise<{ id: string; slug: string; item: Item }[]> {
  const made = []
  for (const item of items) {
    const product = await api.createProduct(
      {
        name: item.name,
        price: item.price,
        tags: item.tags,
        ...(item.description && { description: item.description }),
        ...(item.vendor && { vendor: item.vendor }),
      },
      key,
    )
    for (const variant of item.variants) await addVariant(api, product.id, variant, key)
    made.push({ id: product.id as string, slug: product.slug as string, item })
  }
  return made
}

describeEachDialect('search against a reference', (dialect) => {
  it('finds and counts what the contract says, for random catalogues and queries', async (t) => {
    const api = await buildTestApi(t, dialect)
    let store = 0
    await fc.assert(
      fc.asyncProperty(
        fc.array(item, { minLength: 1, maxLength: 8 }),
        fc.array(query, { minLength: 1, maxLength: 6 }),
        async (items, queries) => {
          const key = await api.newKey({ store: `prop-${store++}` })
          const products = await load(api, key, items)
          for (const q of queries) {
            const res = await api.get(`/products?${queryString(q)}`, key)
            assert.equal(res.statusCode, 200, res.body)
            const body = res.json()
            const expected = products
              .filter((p) => matches(p.item, p.slug, q))
              .map((p) => p.id)
              .reverse()
            assert.deepEqual(
              body.data.map((p: Json) => p.id),
              expected,
              queryString(q),
            )
            const expectFacet = (
              filter: Filter,
              values: (i: Item) => string[],
              f: (v: string) => string,
            ) => {
              const counted = countsOf(
                products
                  .filter((p) => matches(p.item, p.slug, q, filter))
                  .map((p) => values(p.item)),
                f,
              )
              return [...counted.entries()]
                .map(([value, count]) => ({ value, count }))
                .sort(
                  (a, b) =>
                    b.count - a.count || (a.value < b.value ? -1 : a.value > b.value ? 1 : 0),
                )
            }
            const got = (name: string, f: (v: string) => string) =>
              body.facets[name].map((e: Json) => ({ value: f(e.value), count: e.count }))
            const lower = (v: string) => v.toLowerCase()
            const same = (v: string) => v
            // Vendors are exact: a tie between Acme and acme is ordered without case first.
            const vendorSort = (list: { value: string; count: number }[]) =>
              list.sort(
                (a, b) =>
                  b.count - a.count ||
                  (lower(a.value) < lower(b.value)
                    ? -1
                    : lower(a.value) > lower(b.value)
                      ? 1
                      : 0) ||
                  (a.value < b.value ? -1 : a.value > b.value ? 1 : 0),
              )
            assert.deepEqual(
              got('vendor', same),
              vendorSort(expectFacet('vendor', (i) => (i.vendor ? [i.vendor] : []), same)),
            )
            assert.deepEqual(
              got('tag', lower),
              expectFacet('tag', (i) => i.tags, lower),
            )
            assert.deepEqual(
              got('option.color', lower),
              expectFacet('color', (i) => i.variants.map((v) => v.options.Color!), lower),
            )
            const priced = products
              .filter((p) => matches(p.item, p.slug, q, 'price'))
              .map((p) => p.item.price)
            assert.deepEqual(body.facets.price, {
              min: priced.length ? Math.min(...priced) : null,
              max: priced.length ? Math.max(...priced) : null,
            })
          }
        },
      ),
      { numRuns: Number(process.env.SEARCH_PROPERTY_RUNS) || 12, seed: 3434 },
    )
  })
})
