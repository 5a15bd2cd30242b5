import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { searchWords } from '../src/search/documents/fold.js'
import { buildSearchDocument } from '../src/search/documents/search-document.js'
import { decodeListCursor, encodeListCursor } from '../src/search/search-cursor.js'
import { bindingOf, readSearchRequest } from '../src/search/search-query.js'
import { byCountThenValue } from '../src/search/search.service.js'

describe('search folding', () => {
  it('folds as slugs do: accents, case, transliteration; splits at anything else', () => {
    assert.deepEqual(searchWords('Crème Brûlée T-shirt'), ['creme', 'brulee', 't', 'shirt'])
    assert.deepEqual(searchWords('Straße CAFÉ'), ['strasse', 'cafe'])
    assert.deepEqual(searchWords('Пальто'), ['palto'])
    assert.deepEqual(searchWords('"a" OR b* NEAR(c) -d:e'), ['a', 'or', 'b', 'near', 'c', 'd', 'e'])
    assert.deepEqual(searchWords('½ 😀 TS-001'), ['1', '2', 'ts', '001'])
    assert.deepEqual(searchWords(null), [])
  })
})

describe('search document', () => {
  it('holds every searchable text, the codes lowercased, and tag and option values once', () => {
    const document = buildSearchDocument(
      {
        id: 'p',
        name: 'Tee',
        slug: 'tee-2',
        description: 'Soft',
        vendor: 'Acme',
        product_type: 'Shirt',
        sku: 'TS-1',
        barcode: null,
        tags: '["Summer","sale"]',
      },
      [
        { product_id: 'p', name: 'Red', sku: 'TS-1-R', barcode: '123', options: { Color: 'Red' } },
        { product_id: 'p', name: 'red', sku: null, barcode: null, options: '{"color":"RED"}' },
      ],
      ['Material cotton'],
    )
    assert.equal(document.nameWords, 'tee')
    // The variants' words last, after the extra texts (decision 0056).
    assert.equal(
      document.otherWords,
      'soft acme shirt summer sale tee 2 ts 1 material cotton red ts 1 r 123 red red red',
    )
    assert.equal(document.codes, '\nts-1\nts-1-r\n123\n')
    assert.deepEqual(
      document.facetValues.map((f) => [f.kind, f.nameKey, f.valueKey, f.value]),
      [
        ['tag', '', 'summer', 'Summer'],
        ['tag', '', 'sale', 'sale'],
        ['option', 'color', 'red', 'Red'],
      ],
    )
  })
})

describe('facet order', () => {
  it('most first, then A to Z without case, then by code point', () => {
    const values = [
      { value: 'b', count: 1 },
      { value: 'B', count: 1 },
      { value: 'a', count: 1 },
      { value: 'z', count: 3 },
      { value: 'É', count: 1 },
    ]
    assert.deepEqual(
      values.sort(byCountThenValue).map((v) => v.value),
      ['z', 'a', 'B', 'b', 'É'],
    )
  })
})

describe('list cursors', () => {
  it('are bound to q, sort and the set of filter values, in any order', () => {
    const request = readSearchRequest({ q: ' tee ', vendor: ['B', 'A'], tag: 'X' })
    const cursor = encodeListCursor(request.sort, bindingOf(request), [
      1,
      0.5,
      '2026-01-01T00:00:00.000Z',
      '01234567-89ab-4def-8123-456789abcdef',
    ])
    const same = readSearchRequest({
      tag: 'x',
      vendor: ['A', 'B', 'A'],
      q: 'tee',
      sort: 'relevance',
    })
    assert.deepEqual(decodeListCursor(cursor, same.sort, bindingOf(same))[0], 1)
    for (const other of [
      { q: 'tee' },
      { q: 'tees', vendor: ['A', 'B'], tag: 'X' },
      { q: 'tee', vendor: 'A', tag: 'X' },
    ]) {
      const request = readSearchRequest(other)
      assert.throws(
        () => decodeListCursor(cursor, request.sort, bindingOf(request)),
        /invalid fields/,
      )
    }
  })
})
