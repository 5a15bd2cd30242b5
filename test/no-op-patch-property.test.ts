import assert from 'node:assert/strict'
import { isDeepStrictEqual } from 'node:util'
import { it } from 'node:test'
import fc from 'fast-check'
import { buildTestApi, describeEachDialect } from './helpers.js'

/**
 * "A patch that changes nothing writes nothing" is decided in JavaScript (sameFields) and, on
 * PostgreSQL's one-statement PATCH, restated in SQL (a column sent differs from the stored
 * one). As a property: for any patch of the fields that statement takes, each sent value
 * either the stored one or another, the version moves by one exactly when a sent value
 * differs from the record as read, and otherwise stays, with updatedAt.
 */

const FIELDS = {
  name: ['Alpha', 'Beta'],
  description: ['One', 'Two', null],
  status: ['draft', 'active'],
  price: [1, 2.5, 0],
  compare_at_price: [3, 4.25, null],
  barcode: ['B1', 'B2', null],
  tax_rate: [0, 7.5, null],
  vendor: ['Acme', 'Globex', null],
  product_type: ['Mug', 'Shirt', null],
  images: [
    [],
    [{ url: 'https://example.com/a.png', alt: null }],
    [{ url: 'https://example.com/b.png', alt: 'B' }],
  ],
} as const

type Field = keyof typeof FIELDS
const OUT: Record<Field, string> = {
  name: 'name',
  description: 'description',
  status: 'status',
  price: 'price',
  compare_at_price: 'compareAtPrice',
  barcode: 'barcode',
  tax_rate: 'taxRate',
  vendor: 'vendor',
  product_type: 'productType',
  images: 'images',
}

/** Each field left out, sent as stored (most often, so that many patches change nothing), or another value. */
const patch = fc.record(
  Object.fromEntries(
    Object.entries(FIELDS).map(([field, values]) => [
      field,
      fc.oneof(
        { weight: 3, arbitrary: fc.constant('stored' as const) },
        { weight: 1, arbitrary: fc.constantFrom(...values) },
      ),
    ]),
  ) as { [F in Field]: fc.Arbitrary<'stored' | (typeof FIELDS)[F][number]> },
  { requiredKeys: [] },
)

describeEachDialect('a patch that changes nothing, as a property', (dialect) => {
  it('moves the version exactly when a sent value differs from the stored one', async (t) => {
    const api = await buildTestApi(t, dialect)
    let current = await api.createProduct({ name: 'Alpha', price: 1 })
    await fc.assert(
      fc.asyncProperty(patch, async (drawn) => {
        const sent = Object.fromEntries(
          Object.entries(drawn).map(([field, value]) => [
            field,
            value === 'stored' ? current[OUT[field as Field]] : value,
          ]),
        )
        const res = await api.patch(`/products/${current.id}`, sent)
        assert.equal(res.statusCode, 200, res.body)
        const after = res.json().data
        const changed = Object.entries(sent).some(
          ([field, value]) => !isDeepStrictEqual(current[OUT[field as Field]], value),
        )
        assert.equal(after.version, current.version + (changed ? 1 : 0), JSON.stringify(sent))
        if (!changed) assert.equal(after.updatedAt, current.updatedAt)
        current = after
      }),
      { numRuns: 120, seed: 7 },
    )
  })
})
