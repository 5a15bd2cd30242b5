import assert from 'node:assert/strict'
import { it } from 'node:test'
import fc from 'fast-check'
import { ifMatchAllows, isEntityTagCondition } from '../src/http/conditional.js'
import { addVariant, buildTestApi, describeEachDialect } from './helpers.js'

/**
 * If-Match is decided in JavaScript (ifMatchAllows) and, on PostgreSQL's one-statement
 * PATCHes, restated in SQL (the versions ifMatchVersions names, compared in the statement).
 * As a property: whatever the header and the stored version, a PATCH answers 412 exactly when
 * ifMatchAllows refuses, on the one-statement path (a name) and on the transaction path (tags,
 * which that statement does not take), of a product and of a variant alike.
 */

const tag = fc.oneof(
  fc.integer({ min: 1, max: 6 }).map((v) => `"${v}"`),
  fc.integer({ min: 1, max: 6 }).map((v) => `W/"${v}"`),
  fc.constantFrom('"0"', '"01"', '"2147483648"', '"99999999999"', '"abc"', '""'),
)
const header = fc.oneof(
  fc.constant('*'),
  fc.array(tag, { minLength: 1, maxLength: 3 }).map((tags) => tags.join(', ')),
)

describeEachDialect('If-Match as a property: the PATCHes agree with ifMatchAllows', (dialect) => {
  it('answers 412 exactly when ifMatchAllows refuses, on either path', async (t) => {
    const api = await buildTestApi(t, dialect)
    const product = await api.createProduct({ name: 'Start', price: 1 })
    const variant = await addVariant(api, product.id, { name: 'V', sku: 'IFM-1' })
    // The add moved the product's version too.
    let productVersion = (await api.get(`/products/${product.id}`)).json().data.version as number
    let variantVersion = variant.version as number
    let n = 0
    await fc.assert(
      fc.asyncProperty(
        header,
        fc.constantFrom('product-one-statement', 'product-transaction', 'variant'),
        async (ifMatch, path) => {
          assert.ok(isEntityTagCondition(ifMatch))
          n++
          const [url, body, version] =
            path === 'variant'
              ? [
                  `/products/${product.id}/variants/${variant.id}`,
                  { name: `V${n}` },
                  variantVersion,
                ]
              : path === 'product-one-statement'
                ? [`/products/${product.id}`, { name: `Name ${n}` }, productVersion]
                : [`/products/${product.id}`, { tags: [`t${n}`] }, productVersion]
          const res = await api.patch(url, body, { headers: { 'if-match': ifMatch } })
          const allowed = ifMatchAllows(ifMatch, version)
          assert.equal(
            res.statusCode,
            allowed ? 200 : 412,
            `${path} If-Match ${ifMatch} at ${version}: ${res.body}`,
          )
          if (!allowed) return
          const after = res.json().data
          if (path === 'variant') {
            variantVersion = after.version
            productVersion++
          } else {
            productVersion = after.version
          }
          assert.equal(after.version, version + 1)
        },
      ),
      { numRuns: 60, seed: 43 },
    )
  })
})
