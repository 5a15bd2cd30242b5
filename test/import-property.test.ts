import assert from 'node:assert/strict'
import { it } from 'node:test'
import fc from 'fast-check'
import { createProduct } from '../src/catalog/product.service.js'
import { addVariant } from '../src/catalog/variant.service.js'
import { AppError } from '../src/errors.js'
import { createTestDatabase, describeEachDialect } from './helpers.js'
import { catalogue, exportText, importText } from './import-helpers.js'

/**
 * Text as users write it: letters, digits, spaces, punctuation that CSV must quote (comma,
 * quote, line breaks), accents and an emoji.
 */
const text = (min: number, max: number) =>
  fc.string({
    unit: fc.constantFrom(...'aZ09 -_.,;"\'\n\r\téßЖ😀/'.split(/(?:)/u)),
    minLength: min,
    maxLength: max,
  })

/**
 * A value as the API keeps it: trimmed, 1 to n characters. (The services are called here
 * without HTTP, whose body hook trims these fields.)
 */
const label = (max: number) =>
  text(1, max)
    .map((value) => value.trim())
    .filter((value) => value.length > 0)

const money = fc.integer({ min: 0, max: 10_000_000 }).map((n) => n / 100)

const productInput = fc.record(
  {
    name: label(40),
    // Not "": a CSV cell cannot tell an empty description from none (see docs/import-export.md).
    description: fc.option(text(1, 60), { nil: undefined }),
    status: fc.constantFrom('draft', 'active', 'archived'),
    price: money,
    compare_at_price: fc.option(money, { nil: undefined }),
    sku: fc.option(label(12), { nil: undefined }),
    barcode: fc.option(label(12), { nil: undefined }),
    tax_rate: fc.option(fc.double({ min: 0, max: 100, noNaN: true }), { nil: undefined }),
    vendor: fc.option(label(20), { nil: undefined }),
    product_type: fc.option(label(20), { nil: undefined }),
    // Not with a comma: Shopify's Tags cell is a comma-separated list.
    tags: fc.array(
      label(12).filter((tag) => !tag.includes(',')),
      { maxLength: 4 },
    ),
    images: fc.array(
      fc.record({
        url: fc.webUrl({ validSchemes: ['https'] }),
        // Not "": as the description.
        alt: fc.option(text(1, 20), { nil: null }),
      }),
      { maxLength: 3 },
    ),
  },
  { requiredKeys: ['name', 'status', 'price', 'tags', 'images'] },
)

const optionName = fc.constantFrom('Size', 'Color', 'material', 'Fit, cut', 'neck "v"', 'x')
const variantInput = fc.record(
  {
    name: label(30),
    sku: fc.option(label(10), { nil: undefined }),
    barcode: fc.option(label(10), { nil: undefined }),
    price: fc.option(money, { nil: undefined }),
    compare_at_price: fc.option(money, { nil: undefined }),
    weight_grams: fc.option(fc.integer({ min: 0, max: 1_000_000 }), { nil: undefined }),
    options: fc.dictionary(optionName, text(1, 10), { maxKeys: 4 }),
  },
  { requiredKeys: ['name', 'options'] },
)

const catalogueInput = fc.array(
  fc.record({ product: productInput, variants: fc.array(variantInput, { maxLength: 4 }) }),
  { maxLength: 4 },
)

describeEachDialect('import(export(store)) property', (dialect) => {
  it('any catalogue the API holds, exported then imported into an empty store, comes back equal', async (t) => {
    const database = await createTestDatabase(t, dialect)
    let run = 0
    await fc.assert(
      fc.asyncProperty(catalogueInput, async (products) => {
        run++
        const source = `src-${run}`
        const target = `dst-${run}`
        for (const { product, variants } of products) {
          const created = await createProduct(database, source, product)
          for (const variant of variants) {
            try {
              await addVariant(database, source, created.id, variant)
            } catch (error) {
              // A sku or options set already taken: the API refuses it, so the store holds
              // a catalogue without it.
              if (!(error instanceof AppError)) throw error
            }
          }
        }
        const exported = await exportText(database, source)
        const summary = await importText(database, target, exported)
        assert.deepEqual(summary.errors, [], exported)
        assert.deepEqual(await catalogue(database, target), await catalogue(database, source))
      }),
      { numRuns: dialect === 'sqlite' ? 60 : 15 },
    )
  })
})
