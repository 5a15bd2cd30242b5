import fc from 'fast-check'
import { BODY_LIMIT, MAX_POSITION, type BodyKind } from './field-rules.js'

/** Characters that break naive code: controls, lone surrogates, odd spaces, joiners, RTL. */
const oddCharacter = fc.oneof(
  { weight: 4, arbitrary: fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 1 }) },
  fc.integer({ min: 0, max: 0x1f }).map((c) => String.fromCharCode(c)),
  fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c)),
  fc.constantFrom(
    '\u007f',
    '\u00a0',
    '\u2028',
    '\u2029',
    '\ufeff',
    '\u3000',
    '\u200b',
    '\u200d',
    '\u202e',
    '\ufffd',
    'e\u0301',
    'ß',
    'Ж',
    'Χ',
    '日',
    '😀',
    '👍🏽',
    '🇫🇷',
    '\t',
    '\n',
    ' ',
  ),
  fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }),
)

/** Strings with a meaning somewhere else: JavaScript, SQL, templates, paths. */
const loadedString = fc.constantFrom(
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'hasOwnProperty',
  "'; drop table products; --",
  '" or 1=1 --',
  '${process.exit()}',
  '{{7*7}}',
  '%s%n%x',
  '../../etc/passwd',
  '<script>alert(1)</script>',
  'null',
  'undefined',
  'NaN',
  '-0',
  '19.99',
)

/** A string of `n` characters, in a few kinds: ASCII, emoji (two UTF-16 units each), padded. */
function stringOfLength(n: number): fc.Arbitrary<string> {
  return fc.constantFrom('x'.repeat(n), '😀'.repeat(n), `  ${'é'.repeat(n)}\t\n`)
}

/** Strings at and around every length bound of the contract (64, 255, 20,000) and the body limit. */
const boundaryString = fc.oneof(
  fc.constantFrom(0, 1, 63, 64, 65, 254, 255, 256).chain(stringOfLength),
  fc.constantFrom(19_999, 20_000, 20_001).map((n) => 'd'.repeat(n)),
  fc.constant('x'.repeat(BODY_LIMIT + 1)),
  fc.constantFrom('', ' ', '\t\n ', '\u00a0', '\ufeff'),
)

export const oddString = fc.oneof(
  { weight: 4, arbitrary: fc.string({ unit: oddCharacter, maxLength: 24 }) },
  { weight: 2, arbitrary: loadedString },
  { weight: 1, arbitrary: boundaryString },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 24 }) },
)

/**
 * Numbers as JSON text, at and past every bound: money (0, 1e9, four decimals, -0), tax rate
 * (0 to 100), position (0 to 2^31 - 1), tiny and huge exponents, and text JSON.parse reads as
 * Infinity or -0.
 */
const boundaryNumberText = fc.constantFrom(
  '0',
  '-0',
  '-0.0',
  '0.0',
  '1',
  '-1',
  '-0.0001',
  '0.0001',
  '0.00001',
  '0.1',
  '0.30000000000000004',
  '19.99',
  '19.9900',
  '19.99001',
  '1e9',
  '1E+9',
  '1000000000',
  '1000000000.0000',
  '999999999.9999',
  '1000000000.0001',
  '1000000001',
  '100',
  '100.0',
  '100.0000001',
  '99.99999999999',
  '101',
  '2147483647',
  '2147483647.0',
  '2147483648',
  '4294967296',
  '9007199254740993',
  '1.5',
  '1e-7',
  '5e-324',
  '-5e-324',
  '1e-400',
  '-1e-400',
  '1e308',
  '1.7976931348623157e308',
  '1e400',
  '-1e400',
)

export const numberText = fc.oneof(
  { weight: 3, arbitrary: boundaryNumberText },
  fc.double({ noNaN: true, noDefaultInfinity: true }).map((n) => JSON.stringify(n)),
  fc.integer({ min: 0, max: 10_000_000_000_000 }).map((n) => String(n / 10_000)),
  fc.integer({ min: -10, max: MAX_POSITION + 10 }).map(String),
  fc.integer({ min: 0, max: 100_000 }).map((n) => String(n / 1000)),
)

const wrongTypeText = fc.oneof(
  fc.constantFrom('true', 'false', '[]', '{}', '[1]', '{"a":1}', '"1"', '"19.99"'),
  fc.jsonValue({ maxDepth: 2 }).map((v) => JSON.stringify(v)),
)

/** A JSON object written out from its entries, so that `__proto__` can be a key of its own. */
export function objectText(entries: [key: string, valueText: string][]): string {
  return `{${entries.map(([key, value]) => `${JSON.stringify(key)}:${value}`).join(',')}}`
}

const optionName = fc.oneof(
  fc.constantFrom('size', 'color', 'Size', 'size ', '', '__proto__', 'constructor', 'toString'),
  fc.constantFrom(63, 64, 65).map((n) => 'k'.repeat(n)),
  oddString,
)

const optionValueText = fc.oneof(
  { weight: 4, arbitrary: oddString.map((s) => JSON.stringify(s)) },
  {
    weight: 1,
    arbitrary: fc.constantFrom(254, 255, 256).map((n) => JSON.stringify('v'.repeat(n))),
  },
  { weight: 1, arbitrary: wrongTypeText },
)

/** An options object: a few entries of odd names and values, or 49 to 51 plain ones. */
const optionsText = fc
  .oneof(
    { weight: 4, arbitrary: fc.array(fc.tuple(optionName, optionValueText), { maxLength: 5 }) },
    {
      weight: 1,
      arbitrary: fc
        .constantFrom(49, 50, 51)
        .map((n) => Array.from({ length: n }, (_, i): [string, string] => [`o${i}`, '"v"'])),
    },
  )
  .map(objectText)

const stringFieldText = fc.oneof(
  { weight: 5, arbitrary: oddString.map((s) => JSON.stringify(s)) },
  { weight: 1, arbitrary: wrongTypeText },
  { weight: 1, arbitrary: fc.constant('null') },
)
const numberFieldText = fc.oneof(
  { weight: 5, arbitrary: numberText },
  { weight: 1, arbitrary: wrongTypeText },
  { weight: 1, arbitrary: fc.constant('null') },
)

/** Tag lists: odd strings, at and past the bounds (250 tags, 255 characters), duplicates. */
const tagsText = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.array(oddString, { maxLength: 4 }).map((tags) => JSON.stringify(tags)),
  },
  fc.constantFrom(
    '[]',
    '["Sale","sale"," SALE ","Été","ÉTÉ"]',
    '[""]',
    '["  "]',
    '[1]',
    '[null]',
    '[["a"]]',
    JSON.stringify(['t'.repeat(255)]),
    JSON.stringify([' '.repeat(3) + 't'.repeat(255) + ' ']),
    JSON.stringify(['t'.repeat(256)]),
  ),
  fc
    .constantFrom(249, 250, 251)
    .map((n) => JSON.stringify(Array.from({ length: n }, (_, i) => `t${i}`))),
  { weight: 1, arbitrary: wrongTypeText },
  { weight: 1, arbitrary: fc.constant('null') },
)

/** One image: URLs right and wrong (scheme, relative, length 2,048), alt at and past 512. */
const imageText = fc
  .tuple(
    fc.constantFrom(
      '"https://example.com/a.png"',
      '"http://cdn.example.org/p/1.jpg?w=300#x"',
      JSON.stringify(`https://example.com/${'p'.repeat(2048 - 20)}`),
      JSON.stringify(`https://example.com/${'p'.repeat(2048 - 19)}`),
      '"ftp://example.com/a.png"',
      '"/relative.png"',
      '"example.com/a.png"',
      '"javascript:alert(1)"',
      '"data:image/png;base64,AAAA"',
      '""',
      'null',
      '42',
    ),
    fc.option(
      fc.oneof(
        fc.constantFrom(
          '"A red mug"',
          '""',
          'null',
          JSON.stringify('a'.repeat(512)),
          JSON.stringify('😀'.repeat(512)),
          JSON.stringify('a'.repeat(513)),
          '7',
        ),
        oddString.map((alt) => JSON.stringify(alt)),
      ),
      { nil: undefined },
    ),
  )
  .map(([url, alt]) => (alt === undefined ? `{"url":${url}}` : `{"url":${url},"alt":${alt}}`))

const imagesText = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.array(imageText, { maxLength: 3 }).map((items) => `[${items.join(',')}]`),
  },
  fc
    .constantFrom(250, 251)
    .map(
      (n) =>
        `[${Array.from({ length: n }, () => '{"url":"https://example.com/a.png"}').join(',')}]`,
    ),
  fc.constantFrom('[]', '[null]', '["https://example.com/a.png"]', '[{}]', '[{"alt":"x"}]'),
  { weight: 1, arbitrary: wrongTypeText },
  { weight: 1, arbitrary: fc.constant('null') },
)

const weightText = fc.oneof(
  fc.constantFrom('0', '-1', '1', '1000000000', '1000000001', '1e9', '250.5', '-0', '"250"'),
  numberFieldText,
)

/** Slugs for a PATCH: the format's edges (128 characters, single dashes, lowercase) and odd text. */
const slugText = fc.oneof(
  fc.constantFrom(
    '"fuzz-target"',
    '"fuzzed-slug"',
    '"a"',
    '"0-1-2"',
    JSON.stringify('a'.repeat(128)),
    JSON.stringify('a'.repeat(129)),
    JSON.stringify(`${'a'.repeat(63)}-${'b'.repeat(64)}`),
    '"A"',
    '"a--b"',
    '"-a"',
    '"a-"',
    '"a_b"',
    '"a b"',
    '"ß"',
    '""',
    'null',
  ),
  stringFieldText,
)

const FIELD_TEXT: Record<BodyKind, Record<string, fc.Arbitrary<string>>> = {
  product: {
    description: stringFieldText,
    status: fc.oneof(
      fc.constantFrom('"draft"', '"active"', '"archived"', '"Active"', '"deleted"', '""', 'null'),
      stringFieldText,
    ),
    price: numberFieldText,
    compare_at_price: numberFieldText,
    sku: stringFieldText,
    barcode: stringFieldText,
    tax_rate: numberFieldText,
    vendor: stringFieldText,
    product_type: stringFieldText,
    tags: tagsText,
    images: imagesText,
  },
  variant: {
    sku: stringFieldText,
    barcode: stringFieldText,
    price: numberFieldText,
    compare_at_price: numberFieldText,
    options: fc.oneof({ weight: 4, arbitrary: optionsText }, stringFieldText),
    position: numberFieldText,
    weight_grams: weightText,
  },
}

/** A PATCH takes the create fields plus `slug` on a product. */
const PATCH_FIELD_TEXT: Record<BodyKind, Record<string, fc.Arbitrary<string>>> = {
  product: { ...FIELD_TEXT.product, slug: slugText },
  variant: {
    ...FIELD_TEXT.variant,
    // A sku and an options set another variant holds (see the PATCH property of fuzz.test.ts).
    sku: fc.oneof(
      { weight: 4, arbitrary: FIELD_TEXT.variant.sku! },
      fc.constantFrom('"TAKEN"', '" TAKEN "'),
    ),
    options: fc.oneof(
      { weight: 4, arbitrary: FIELD_TEXT.variant.options! },
      fc.constantFrom('{"size":"M"}', '{"color":"red"}'),
    ),
  },
}

/** Fields no request defines; a body may carry them, and they must change nothing. */
const unknownField = fc.tuple(
  fc.constantFrom(
    'id',
    'store_id',
    'slug',
    'created_at',
    'updated_at',
    'product_id',
    'variants',
    'constructor',
    '__proto__',
    'toString',
  ),
  fc.oneof(wrongTypeText, stringFieldText),
)

/**
 * A body close to a valid one: a name (mostly), some of the endpoint's fields with values at,
 * inside and past their bounds or of the wrong type, and some fields the request does not
 * define, in any order.
 */
export function nearValidBody(kind: BodyKind): fc.Arbitrary<string> {
  return bodyOf(FIELD_TEXT[kind], 10)
}

/**
 * A merge patch close to a valid one: some of the endpoint's fields (any may be left out, the
 * name too) with values at, inside and past their bounds, null or of the wrong type, and some
 * fields the request does not define, in any order.
 */
export function nearValidPatch(kind: BodyKind): fc.Arbitrary<string> {
  return bodyOf(PATCH_FIELD_TEXT[kind], 2)
}

/**
 * Valid patches of the fields that conflict or transition: a status (archived to active is
 * refused), a slug another product holds (fuzz-target, patch-target), a sku another variant
 * holds (TAKEN) or an options set a sibling holds ({"size": "M"}), with their own values too.
 */
export function conflictingPatch(kind: BodyKind): fc.Arbitrary<string> {
  const fields: Record<string, fc.Arbitrary<string>> = kind === 'product'
    ? {
        status: fc.constantFrom('"draft"', '"active"', '"archived"'),
        slug: fc.constantFrom('"fuzz-target"', '"patch-target"', '"fresh-slug"'),
        name: fc.constantFrom('"Patch target"', '"Renamed"'),
      }
    : {
        sku: fc.constantFrom('"TAKEN"', '" TAKEN "', '"FREE"', 'null'),
        options: fc.constantFrom('{"size":"M"}', '{"M":"size"}', '{"color":"red"}', '{}', 'null'),
        name: fc.constantFrom('"Patched"', '"Renamed"'),
      }
  return fc
    .record(fields, { requiredKeys: [] })
    .map((record) => objectText(Object.entries(record) as [string, string][]))
}

/** Patches of every kind: JSON values, near-valid and conflicting objects, text and raw bytes. */
export function anyPatch(kind: BodyKind): fc.Arbitrary<string | Buffer> {
  return fc.oneof(
    { weight: 3, arbitrary: anyOf(nearValidPatch(kind)) },
    { weight: 1, arbitrary: conflictingPatch(kind) },
  )
}

function bodyOf(
  fieldText: Record<string, fc.Arbitrary<string>>,
  nameFreq: number,
): fc.Arbitrary<string> {
  const fieldEntries = Object.entries(fieldText).map(([field, text]) =>
    fc.option(
      text.map((value): [string, string] => [field, value]),
      { freq: 2, nil: undefined },
    ),
  )
  const name = fc.option(
    fc
      .oneof({ weight: 3, arbitrary: fc.constant('"Fuzzed thing"') }, stringFieldText)
      .map((value): [string, string] => ['name', value]),
    { freq: nameFreq, nil: undefined },
  )
  return fc
    .tuple(name, fc.tuple(...fieldEntries), fc.array(unknownField, { maxLength: 2 }))
    .chain(([nameEntry, fields, unknown]) =>
      fc.shuffledSubarray(
        [nameEntry, ...fields, ...unknown].filter((e) => e !== undefined),
        { minLength: 0 },
      ),
    )
    .map((entries) => objectText(entries as [string, string][]))
}

/** Bodies of every kind: JSON values, near-valid objects, text and raw bytes. */
export function anyBody(kind: BodyKind): fc.Arbitrary<string | Buffer> {
  return anyOf(nearValidBody(kind))
}

function anyOf(nearValid: fc.Arbitrary<string>): fc.Arbitrary<string | Buffer> {
  return fc.oneof(
    { weight: 4, arbitrary: nearValid },
    { weight: 2, arbitrary: fc.jsonValue().map((v) => JSON.stringify(v)) },
    { weight: 1, arbitrary: fc.string({ unit: oddCharacter, maxLength: 40 }) },
    { weight: 1, arbitrary: fc.uint8Array({ maxLength: 200 }).map((b) => Buffer.from(b)) },
    {
      weight: 1,
      // Valid bodies cut short or with a byte changed: almost JSON.
      arbitrary: fc
        .tuple(nearValid, fc.nat(), fc.integer({ min: 0, max: 255 }))
        .map(([text, at, byte]) => {
          const bytes = Buffer.from(text)
          if (bytes.length === 0) return bytes
          const index = at % bytes.length
          return at % 2 === 0
            ? bytes.subarray(0, index)
            : Buffer.from(bytes).fill(byte, index, index + 1)
        }),
    },
  )
}

/**
 * Text for the list's `q`: the search engines' own syntax (FTS5's quotes, stars, NEAR, OR,
 * column filters; tsquery's operators), punctuation, NUL, long runs, and any odd string. Each
 * must be searched as plain words or refused by name, never reach an engine as syntax.
 */
export const searchText = fc.oneof(
  fc.constantFrom(
    '"',
    '""',
    '"unterminated',
    '*',
    'a*',
    '*a',
    'NEAR',
    'NEAR(a b)',
    'near/3',
    'OR',
    'a OR b',
    'AND',
    'NOT a',
    '-a',
    'a -b',
    'name_words:a',
    '{name_words}: a',
    ':',
    'a:*',
    "'a':*A",
    'a & b | !c <-> d',
    '(',
    ')',
    '(a OR b)',
    "'",
    '^a',
    '+a',
    '\u0000',
    'a\u0000b',
    '!'.repeat(256),
    '.-'.repeat(128),
    'a'.repeat(256),
    'a'.repeat(257),
    `${'a '.repeat(127)}a`,
  ),
  fc
    .array(
      fc.constantFrom(
        '"',
        '*',
        '(',
        ')',
        ':',
        '-',
        '^',
        '+',
        "'",
        '&',
        '|',
        '!',
        '<',
        '>',
        'NEAR',
        'OR',
        'AND',
        'NOT',
        'a',
        'b1',
        ' ',
      ),
      { maxLength: 20 },
    )
    .map((parts) => parts.join('')),
  oddString,
)
