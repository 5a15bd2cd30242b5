import assert from 'node:assert/strict'
import { it } from 'node:test'
import { buildTestApi, describeEachDialect, type TestApi } from './helpers.js'
import { importText, SHOPIFY_SAMPLES } from './import-helpers.js'

type Json = Record<string, any>

const q = encodeURIComponent

/** The names of one answer's products, sorted, asserting 200. */
async function found(api: TestApi, query: string): Promise<string[]> {
  const res = await api.get(`/products?limit=100&${query}`)
  assert.equal(res.statusCode, 200, `?${query} answered ${res.statusCode}: ${res.body}`)
  return res
    .json()
    .data.map((product: Json) => product.name)
    .sort()
}

const GREATOUTDOOR = `${SHOPIFY_SAMPLES}/greatoutdoor_products_export_1.csv`

describeEachDialect('GET /products?q= in HTML descriptions', (dialect) => {
  it('finds the words a page shows, not tags, attributes, comments, scripts or styles', async (t) => {
    const api = await buildTestApi(t, dialect)
    const html =
      '<p style="color: red" data-mce-fragment="1">Soft <b>cot</b>ton</p><p>Warm</p>' +
      'line<br>break foo&nbsp;bar Caf&eacute; &amp; more<!-- secret -->' +
      '<script>var hidden = 1</script><style>.span { width: 100% }</style>' +
      ' <a href="https://example.com/page">link</a>'
    const product = await api.createProduct({ name: 'Tee', description: html })
    await api.createProduct({ name: 'Plain', description: 'a < b, AT&T' })
    for (const word of ['cotton', 'warm', 'line', 'break', 'bar', 'café', 'cafe', 'link']) {
      assert.deepEqual(await found(api, `q=${q(word)}`), ['Tee'], word)
    }
    for (const word of [
      'style',
      'color',
      'red',
      'data-mce-fragment',
      'mce',
      'span',
      'https',
      'example',
      'href',
      'secret',
      'hidden',
      'width',
      'nbsp',
      'eacute',
      'amp',
      'ton',
      'warmline',
      'linebreak',
    ]) {
      assert.deepEqual(await found(api, `q=${q(word)}`), [], word)
    }
    assert.deepEqual(await found(api, `q=${q('cot ton')}`), [])
    assert.deepEqual(await found(api, `q=${q('soft cotton warm')}`), ['Tee'])
    // Plain text keeps its words.
    assert.deepEqual(await found(api, `q=${q('AT&T')}`), ['Plain'])
    assert.deepEqual(await found(api, `q=${q('a b')}`), ['Plain'])
    // The stored description is the one given.
    const read = await api.get(`/products/${product.id}`)
    assert.equal(read.json().data.description, html)
    // A changed description is searched as its text too.
    const patched = await api.patch(`/products/${product.id}`, {
      description: '<div class="warm">Teak</div>',
    })
    assert.equal(patched.statusCode, 200, patched.body)
    assert.deepEqual(await found(api, 'q=teak'), ['Tee'])
    assert.deepEqual(await found(api, 'q=warm'), [])
  })

  it('a real Shopify export: words only in markup find nothing, nor count in facets', async (t) => {
    const api = await buildTestApi(t, dialect)
    const summary = await importText(
      api.database,
      'store-a',
      { file: GREATOUTDOOR },
      { duplicateSkus: 'clear' },
    )
    assert.ok(summary.productsCreated > 50, JSON.stringify(summary))
    // Every description of this store is HTML with <style> blocks and styled spans.
    for (const word of ['span', 'https', 'data-mce-fragment', 'font-family', 'px']) {
      assert.deepEqual(await found(api, `q=${q(word)}`), [], word)
      const res = await api.get(`/products?q=${q(word)}&facets=vendor,tag,product_type`)
      for (const [facet, values] of Object.entries(res.json().facets as Json)) {
        assert.deepEqual(values, [], `${word}: facet ${facet}`)
      }
    }
    // `style` is a word some pages show ("modern style"): found in those only, as a crude
    // reading of the HTML (styles and tags cut out) tells them.
    const all = await api.get('/products?limit=100')
    const shows = (html: string) =>
      /\bstyle/i.test(html.replace(/<style[^]*?<\/style>/gi, ' ').replace(/<[^>]*>/g, ' '))
    const expected = (all.json().data as Json[])
      .filter((product) => shows(product.description ?? ''))
      .map((product) => product.name)
      .sort()
    assert.ok(expected.length > 0 && expected.length < all.json().data.length)
    assert.deepEqual(await found(api, 'q=style'), expected)
    // Words the pages show are still found.
    assert.ok((await found(api, 'q=chair')).length > 0)
  })
})

describeEachDialect('GET /products?q=Ø', (dialect) => {
  it('finds the words with ø, not every word starting with o; ø also found as o', async (t) => {
    const api = await buildTestApi(t, dialect)
    await api.createProduct({ name: 'Ølglas', description: 'Glass for beer' })
    await api.createProduct({ name: 'Pipe', description: 'Ø 20 mm, of steel' })
    await api.createProduct({ name: 'Bjørn chair', vendor: 'Øst' })
    await api.createProduct({ name: 'Oak table', description: 'Our own oil' })
    assert.deepEqual(await found(api, `q=${q('Ø')}`), ['Bjørn chair', 'Pipe', 'Ølglas'])
    assert.deepEqual(await found(api, `q=${q('ø')}`), ['Bjørn chair', 'Pipe', 'Ølglas'])
    assert.deepEqual(await found(api, `q=${q('øl')}`), ['Ølglas'])
    assert.deepEqual(await found(api, `q=${q('bjørn')}`), ['Bjørn chair'])
    assert.deepEqual(await found(api, `q=${q('bjorn')}`), ['Bjørn chair'])
    assert.deepEqual(await found(api, `q=${q('bjoern')}`), ['Bjørn chair'])
    assert.deepEqual(await found(api, `q=${q('olglas')}`), ['Ølglas'])
    assert.deepEqual(await found(api, `q=${q('oak')}`), ['Oak table'])
  })
})
