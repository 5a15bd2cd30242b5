import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { slugify, splitSuffix, withSuffix } from '../src/slugs/slug.js'

/** What every slug looks like: lowercase ASCII words joined by single dashes, none at the ends. */
const SLUG_SHAPE = /^[a-z0-9]+(?:-[a-z0-9]+)*$/

function expectSlugs(table: [name: string, slug: string][]): void {
  for (const [name, slug] of table) {
    assert.equal(slugify(name), slug, `slugify(${JSON.stringify(name)})`)
  }
}

describe('slugify', () => {
  it('transliterates Latin letters with accents and ligatures to ASCII', () => {
    expectSlugs([
      ['Crème Brûlée', 'creme-brulee'],
      ['Straße', 'strasse'],
      ['naïve café', 'naive-cafe'],
      ['Ærøskøbing', 'aeroskobing'],
      ['Łódź', 'lodz'],
      ['Ñandú', 'nandu'],
      ['Ça va', 'ca-va'],
      ['Cre\u0301me', 'creme'], // decomposed: e followed by a combining acute accent
      ['ﬁsh', 'fish'],
    ])
  })

  it('transliterates Cyrillic by a standard transliteration', () => {
    expectSlugs([
      ['Привет мир', 'privet-mir'],
      ['Футболка', 'futbolka'],
      ['Щука', 'shchuka'],
      // The soft and hard signs are dropped, not made into a dash inside the word.
      ['Пальто', 'palto'],
      ['Объект', 'obekt'],
      ['ПОДЪЕЗД СЕМЬЯ', 'podezd-semya'],
    ])
  })

  it('transliterates Greek by a standard transliteration', () => {
    expectSlugs([
      ['Καλημέρα κόσμε', 'kalimera-kosme'],
      ['Ελληνικά', 'ellinika'],
    ])
  })

  it('gives CJK names a slug that is ASCII and not empty', () => {
    for (const name of ['北京', '東京タワー', 'こんにちは', '한국어', '你好世界']) {
      const slug = slugify(name)
      assert.match(slug, SLUG_SHAPE, `slugify(${JSON.stringify(name)}) = ${slug}`)
      assert.notEqual(slug, 'product', `slugify(${JSON.stringify(name)}) kept nothing`)
    }
  })

  it('lowercases', () => {
    expectSlugs([
      ['UPPER lower MiXeD', 'upper-lower-mixed'],
      ['iPhone 15 Pro', 'iphone-15-pro'],
      ['Ünïcödé', 'unicode'],
    ])
  })

  it('turns every run of other characters into one dash', () => {
    expectSlugs([
      ['Hello, World!', 'hello-world'],
      ['a   &&&   b', 'a-b'],
      ['a___b', 'a-b'],
      ['a - b -- c', 'a-b-c'],
      ['100% Cotton', '100-cotton'],
      ['tab\tnew\nline', 'tab-new-line'],
      ["Levi's 501", 'levi-s-501'],
      ['T-Shirt', 't-shirt'],
    ])
  })

  it('leaves no dash at either end', () => {
    expectSlugs([
      ['  --Hello--  ', 'hello'],
      ['#1 Best!!', '1-best'],
      ['(Limited) Edition.', 'limited-edition'],
      ['...dots...', 'dots'],
    ])
  })

  it('gives `product` for a name with nothing to keep: empty, punctuation, emoji', () => {
    expectSlugs([
      ['', 'product'],
      ['   ', 'product'],
      ['!!!', 'product'],
      ['-- ** --', 'product'],
      ['😀', 'product'],
      ['😀🎉🔥', 'product'],
      ['🇫🇷🇩🇪', 'product'],
      ['👍🏽', 'product'],
      ['👨‍👩‍👧', 'product'],
    ])
  })

  it('drops emoji mixed with words', () => {
    expectSlugs([
      ['Tee 😀 Shirt', 'tee-shirt'],
      ['😀Tee😀Shirt😀', 'tee-shirt'],
      ['❤️ Love', 'love'],
      ['🇫🇷 Baguette', 'baguette'],
      ['👍🏽 Like', 'like'],
      ['👨‍👩‍👧 Family Pack', 'family-pack'],
    ])
  })

  it('keeps a slug of exactly 96 characters whole', () => {
    const name = 'a'.repeat(96)
    assert.equal(slugify(name), name)
    assert.equal(slugify(`${'a'.repeat(94)} b`), `${'a'.repeat(94)}-b`)
    assert.equal(slugify(`${'a'.repeat(94)} b`).length, 96)
  })

  it('cuts a slug over 96 characters at a dash', () => {
    const words = Array.from({ length: 30 }, () => 'word').join(' ') // 149 characters
    assert.equal(slugify(words), Array.from({ length: 19 }, () => 'word').join('-')) // 94
    assert.equal(slugify(`${'a'.repeat(95)} bcd`), 'a'.repeat(95))
    assert.equal(slugify(`${'a'.repeat(96)} bcd`), 'a'.repeat(96))
    assert.equal(slugify(`ab ${'c'.repeat(200)}`), 'ab')
  })

  it('cuts a single word over 96 characters hard at 96', () => {
    assert.equal(slugify('a'.repeat(200)), 'a'.repeat(96))
    assert.equal(slugify(`-${'a'.repeat(200)}-`), 'a'.repeat(96))
    // The limit is on the slug, after transliteration: Щ is four letters.
    assert.equal(slugify('Щ'.repeat(30)), 'shch'.repeat(24))
  })

  it('always gives a lowercase ASCII slug of 1 to 96 characters with single inner dashes', () => {
    const names = [
      'Crème Brûlée',
      '  !!  ',
      'Tee 😀 Shirt',
      'a'.repeat(500),
      'word '.repeat(100),
      '-a-'.repeat(100),
      'Привет мир '.repeat(20),
      '東京タワー'.repeat(30),
      'x\u0000y\u200bz',
      `${'é'.repeat(95)} ${'ü'.repeat(95)}`,
    ]
    for (const name of names) {
      const slug = slugify(name)
      assert.match(slug, SLUG_SHAPE, `slugify(${JSON.stringify(name)}) = ${slug}`)
      assert.ok(slug.length <= 96, `slugify(${JSON.stringify(name)}) has ${slug.length} characters`)
    }
  })
})

describe('withSuffix', () => {
  it('leaves the base alone for 1 and appends -N from 2 on', () => {
    assert.equal(withSuffix('t-shirt', 1), 't-shirt')
    assert.equal(withSuffix('t-shirt', 2), 't-shirt-2')
    assert.equal(withSuffix('t-shirt', 3), 't-shirt-3')
    assert.equal(withSuffix('t-shirt', 10), 't-shirt-10')
    assert.equal(withSuffix('t-shirt-2', 2), 't-shirt-2-2')
    assert.equal(withSuffix('product', 123456), 'product-123456')
  })
})

describe('splitSuffix', () => {
  it('splits a slug that ends in -N with N >= 2 into its base and N', () => {
    assert.deepEqual(splitSuffix('t-shirt-2'), { base: 't-shirt', n: 2 })
    assert.deepEqual(splitSuffix('t-shirt-10'), { base: 't-shirt', n: 10 })
    assert.deepEqual(splitSuffix('t-shirt-2-3'), { base: 't-shirt-2', n: 3 })
    assert.deepEqual(splitSuffix('a-2'), { base: 'a', n: 2 })
    assert.deepEqual(splitSuffix('2-2'), { base: '2', n: 2 })
    assert.deepEqual(splitSuffix('product-999999999999999'), {
      base: 'product',
      n: 999_999_999_999_999,
    })
  })

  it('gives undefined for a slug withSuffix cannot have made', () => {
    for (const slug of [
      't-shirt',
      'shirt',
      't-shirt-1',
      't-shirt-0',
      't-shirt-02',
      't-shirt-',
      '2',
      '-2',
      't-shirt-2a',
      'product-1234567890123456', // more digits than a suffix may have (15)
    ]) {
      assert.equal(splitSuffix(slug), undefined, `splitSuffix(${JSON.stringify(slug)})`)
    }
  })

  it('undoes withSuffix for every N >= 2', () => {
    for (const base of ['t-shirt', 'a', 't-shirt-2', 'x-1']) {
      for (const n of [2, 3, 9, 10, 99, 100, 1234567]) {
        assert.deepEqual(splitSuffix(withSuffix(base, n)), { base, n }, `${base} with ${n}`)
      }
    }
  })
})
