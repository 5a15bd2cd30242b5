/**
 * Shared pieces of the update tests (test/product-updates.test.ts, test/variant-updates.test.ts):
 * the contract's field rules of part 2 written out as samples (values that are accepted, of the
 * wrong type, out of bounds), and a runner that turns one field's samples into JSON Merge Patch
 * cases, each a subtest of its own with a label that says which rule it checks.
 */
import assert from 'node:assert/strict'
import type { TestContext } from 'node:test'
import type { LightMyRequestResponse } from 'fastify'
import { expectError } from './helpers.js'

export type Answer = LightMyRequestResponse
export type Json = Record<string, any>

/** The fields of a product record after issue 14 (create and PATCH answers; GET adds variants). */
export const PRODUCT_FIELDS = [
  'barcode',
  'compareAtPrice',
  'createdAt',
  'description',
  'id',
  'images',
  'metafields',
  'name',
  'price',
  'productType',
  'sku',
  'slug',
  'status',
  'tags',
  'taxRate',
  'updatedAt',
  'vendor',
  'version',
]

/** The fields of a variant record after issue 14. */
export const VARIANT_FIELDS = [
  'barcode',
  'compareAtPrice',
  'createdAt',
  'id',
  'metafields',
  'name',
  'options',
  'position',
  'price',
  'productId',
  'sku',
  'updatedAt',
  'version',
  'weightGrams',
]

/**
 * Waits a few milliseconds, so that a change made afterwards has an `updatedAt` (milliseconds)
 * that can be told from the one before.
 */
export const pause = (ms = 3) => new Promise((resolve) => setTimeout(resolve, ms))

/** Asserts a 400 validation_failed whose details name `field` (or a path under it). */
export function expectInvalid(res: Answer, field: string, label = ''): void {
  let body
  try {
    body = expectError(res, 400, 'validation_failed')
  } catch (cause) {
    throw new Error(`${label}: ${(cause as Error).message}`)
  }
  const fields = (body.details ?? []).map((detail) => detail.field)
  assert.ok(
    fields.some((f) => f === field || f.startsWith(`${field}.`) || f.startsWith(`${field}[`)),
    `${label}: details ${JSON.stringify(fields)} do not name ${field}`,
  )
  // One entry per problem: a wrong value is one, even when it breaks two rules of the schema.
  assert.equal(new Set(fields).size, fields.length, `${label}: details ${JSON.stringify(fields)}`)
}

/** A value sent in a request, with the label its case is reported under. */
export interface Sample {
  label: string
  value: unknown
}

/** A value the service accepts, and what the record then shows. */
export interface Accepted extends Sample {
  out: unknown
}

const describeValue = (value: unknown): string => {
  const text = JSON.stringify(value)
  return text.length > 40 ? `${text.slice(0, 37)}...` : text
}

/** A sample labelled by its JSON (shortened), unless a label is given. */
export const sample = (value: unknown, label = describeValue(value)): Sample => ({ label, value })

/** An accepted sample: `out` is what the record shows (the value itself unless given). */
export const accepted = (value: unknown, out: unknown = value, label?: string): Accepted => ({
  ...sample(value, label),
  out,
})

/** One request field's rules, as samples. */
export interface FieldSpec {
  /** The request's (snake_case) name. */
  field: string
  /** The record's (camelCase) name. */
  out: string
  /** What the record shows for the value the subject was created with. */
  initialOut: unknown
  /** Values that replace the stored one, in bounds at the edges included. */
  replace: Accepted[]
  /** `null`: clears the field (the record then shows `clearsTo`), or is refused with 400. */
  null: { clearsTo: unknown } | 'refused'
  wrongType: Sample[]
  outOfBounds: Sample[]
  /** Values equal to the stored one once the field's rules are applied: no change. */
  same: Sample[]
}

/** A record made for one case, in a store of its own, and how to patch and read it. */
export interface Subject {
  /** The record as its creation answered it. */
  record: Json
  patch(body: unknown, headers?: Record<string, string>): Promise<Answer>
  /** The record as a GET shows it now (a product without `variants`). */
  read(): Promise<Json>
}

/** Asserts a 200 whose record is the subject's after one change: version +1, updatedAt later. */
export async function expectChanged(subject: Subject, res: Answer, label: string): Promise<Json> {
  assert.equal(res.statusCode, 200, `${label}: ${res.body}`)
  const after = res.json().data
  assert.equal(after.id, subject.record.id, `${label}: id`)
  assert.equal(after.version, subject.record.version + 1, `${label}: version moves by one`)
  assert.ok(
    after.updatedAt > subject.record.updatedAt,
    `${label}: updatedAt ${after.updatedAt} should be after ${subject.record.updatedAt}`,
  )
  assert.equal(after.createdAt, subject.record.createdAt, `${label}: createdAt`)
  assert.deepEqual(await subject.read(), after, `${label}: a GET shows what PATCH answered`)
  return after
}

/** Asserts a 200 that changed nothing: the record as created, same version and updatedAt. */
export async function expectNoChange(subject: Subject, res: Answer, label: string): Promise<void> {
  assert.equal(res.statusCode, 200, `${label}: ${res.body}`)
  assert.deepEqual(res.json().data, subject.record, `${label}: the answer is the stored record`)
  assert.deepEqual(await subject.read(), subject.record, `${label}: the stored record is as it was`)
}

/** Asserts that a refused request left the record as it was. */
export async function expectUntouched(subject: Subject, label: string): Promise<void> {
  assert.deepEqual(await subject.read(), subject.record, `${label}: the record is as it was`)
}

/**
 * Runs one field's merge-patch cases, each as a subtest on a fresh subject:
 * left out (another field changes, this one does not), each accepted value, null (clears or is
 * refused), each wrong type and each out-of-bounds value (400 naming the field, nothing
 * changed), each value equal to the stored one (no change at all), and null again once cleared.
 */
export async function runFieldCases(
  t: TestContext,
  make: () => Promise<Subject>,
  spec: FieldSpec,
  otherChange: Record<string, unknown>,
): Promise<void> {
  const { field, out } = spec
  const fresh = async () => {
    const subject = await make()
    assert.deepEqual(subject.record[out], spec.initialOut, `${field} as created`)
    await pause()
    return subject
  }

  await t.test(
    `${field} left out: unchanged while ${Object.keys(otherChange)} changes`,
    async () => {
      const subject = await fresh()
      const label = `PATCH ${JSON.stringify(otherChange)}`
      const after = await expectChanged(subject, await subject.patch(otherChange), label)
      assert.deepEqual(after[out], spec.initialOut, `${label}: ${out} is unchanged`)
    },
  )

  for (const value of spec.replace) {
    await t.test(`${field} = ${value.label}: replaces the stored value`, async () => {
      const subject = await fresh()
      const label = `PATCH ${field} = ${value.label}`
      const after = await expectChanged(
        subject,
        await subject.patch({ [field]: value.value }),
        label,
      )
      assert.deepEqual(after[out], value.out, `${label}: ${out}`)
    })
  }

  const nullRule = spec.null
  if (nullRule === 'refused') {
    await t.test(`${field} = null: 400 validation_failed naming ${field}`, async () => {
      const subject = await fresh()
      const label = `PATCH ${field} = null`
      expectInvalid(await subject.patch({ [field]: null }), field, label)
      await expectUntouched(subject, label)
    })
  } else {
    await t.test(
      `${field} = null: clears it to ${JSON.stringify(nullRule.clearsTo)}, and null again changes nothing`,
      async () => {
        const subject = await fresh()
        const label = `PATCH ${field} = null`
        const after = await expectChanged(subject, await subject.patch({ [field]: null }), label)
        assert.deepEqual(after[out], nullRule.clearsTo, `${label}: ${out}`)
        await pause()
        const cleared: Subject = { ...subject, record: after }
        await expectNoChange(cleared, await subject.patch({ [field]: null }), `${label} again`)
      },
    )
  }

  for (const [kind, samples] of [
    ['wrong type', spec.wrongType],
    ['out of bounds', spec.outOfBounds],
  ] as const) {
    for (const value of samples) {
      await t.test(`${field} = ${value.label} (${kind}): 400 validation_failed`, async () => {
        const subject = await fresh()
        const label = `PATCH ${field} = ${value.label}`
        expectInvalid(await subject.patch({ [field]: value.value }), field, label)
        await expectUntouched(subject, label)
      })
    }
  }

  for (const value of spec.same) {
    await t.test(`${field} = ${value.label} (as stored): no change`, async () => {
      const subject = await fresh()
      const label = `PATCH ${field} = ${value.label}`
      await expectNoChange(subject, await subject.patch({ [field]: value.value }), label)
    })
  }
}

/** Runs the create-time bounds of one field: accepted values as shown, refused ones 400. */
export async function runCreateCases(
  t: TestContext,
  create: (value: unknown) => Promise<Answer>,
  spec: Pick<FieldSpec, 'field' | 'out' | 'replace' | 'wrongType' | 'outOfBounds'>,
): Promise<void> {
  const { field, out } = spec
  for (const value of spec.replace) {
    await t.test(`${field} = ${value.label} is accepted on create`, async () => {
      const res = await create(value.value)
      assert.equal(res.statusCode, 200, `create with ${field} = ${value.label}: ${res.body}`)
      assert.deepEqual(res.json().data[out], value.out, `create with ${field} = ${value.label}`)
    })
  }
  for (const [kind, samples] of [
    ['wrong type', spec.wrongType],
    ['out of bounds', spec.outOfBounds],
  ] as const) {
    for (const value of samples) {
      await t.test(`${field} = ${value.label} (${kind}) is 400 on create`, async () => {
        expectInvalid(await create(value.value), field, `create with ${field} = ${value.label}`)
      })
    }
  }
}

// ---------------------------------------------------------------------------------------------
// The samples, from CONTRACT.md's field rules (part 1) and "The records grow" (part 2).

export const text = (length: number, char = 'x') => char.repeat(length)
const URL_BASE = 'https://cdn.example.com/'
/** An absolute https URL of exactly `length` characters. */
export const urlOfLength = (length: number) => URL_BASE + text(length - URL_BASE.length, 'a')

/** Distinct tags `tag-0`, `tag-1`, ... */
export const manyTags = (count: number) => Array.from({ length: count }, (_, i) => `tag-${i}`)
/** Distinct images with alt text. */
export const manyImages = (count: number) =>
  Array.from({ length: count }, (_, i) => ({ url: `${URL_BASE}${i}.jpg`, alt: `Image ${i}` }))

export const WRONG_FOR_STRING = [sample(123), sample(true), sample(['a']), sample({ a: 'b' })]
export const WRONG_FOR_NUMBER = [sample('12'), sample(true), sample([1]), sample({ n: 1 })]

/** A trimmed string of 1 to `max` characters; null clears it unless `required`. */
export function trimmedString(
  field: string,
  out: string,
  stored: string,
  max: number,
  required = false,
): FieldSpec {
  return {
    field,
    out,
    initialOut: stored,
    replace: [
      accepted('Replaced value'),
      accepted('  Padded value  ', 'Padded value', '"  Padded value  " (trimmed)'),
      accepted('y', 'y', '1 character'),
      accepted(text(max, 'y'), text(max, 'y'), `${max} characters`),
      accepted(`  ${text(max, 'y')}  `, text(max, 'y'), `${max} characters with spaces around`),
    ],
    null: required ? 'refused' : { clearsTo: null },
    wrongType: WRONG_FOR_STRING,
    outOfBounds: [
      sample('', 'empty string'),
      sample('   ', 'only spaces'),
      sample(text(max + 1, 'y'), `${max + 1} characters`),
    ],
    same: [sample(stored), sample(` ${stored}  `, `"${stored}" with spaces around`)],
  }
}

/** A money amount: 0 to 1e9, at most 4 decimal places. */
export function money(field: string, out: string, stored: number, required: boolean): FieldSpec {
  return {
    field,
    out,
    initialOut: stored,
    replace: [
      accepted(12.3456),
      accepted(0),
      accepted(1_000_000_000),
      accepted(19.9, 19.9, '19.9 (returned exactly)'),
    ],
    null: required ? 'refused' : { clearsTo: null },
    wrongType: WRONG_FOR_NUMBER,
    outOfBounds: [sample(-0.01), sample(1_000_000_001), sample(1.23456, '1.23456 (5 decimals)')],
    same: [sample(stored)],
  }
}

/** An integer from 0 to `max`. */
export function integer(
  field: string,
  out: string,
  stored: number,
  max: number,
  required: boolean,
): FieldSpec {
  return {
    field,
    out,
    initialOut: stored,
    replace: [accepted(0), accepted(7), accepted(max)],
    null: required ? 'refused' : { clearsTo: null },
    wrongType: [sample(String(stored + 1)), sample(true), sample([1]), sample({ n: 1 })],
    outOfBounds: [sample(-1), sample(max + 1), sample(1.5, '1.5 (not an integer)')],
    same: [sample(stored)],
  }
}

export const STORED_TAGS = ['summer', 'linen']
export const STORED_IMAGES = [{ url: 'https://cdn.example.com/front.jpg', alt: 'Front' }]

export const TAGS: FieldSpec = {
  field: 'tags',
  out: 'tags',
  initialOut: STORED_TAGS,
  replace: [
    accepted(['cotton'], ['cotton'], '["cotton"] (replaces the list whole)'),
    accepted(['b', 'a', 'c'], ['b', 'a', 'c'], '["b","a","c"] (order kept)'),
    accepted([], [], '[] (empties it)'),
    accepted(
      [' Sale ', 'sale', 'New', 'SALE', 'new ', 'Linen'],
      ['Sale', 'New', 'Linen'],
      'trimmed, case-insensitive duplicates kept once with the first spelling and order',
    ),
    accepted(['Summer', 'LINEN'], ['Summer', 'LINEN'], 'the stored tags spelled otherwise'),
    accepted([text(255, 't')], [text(255, 't')], 'a tag of 255 characters'),
    accepted(manyTags(250), manyTags(250), '250 tags'),
  ],
  null: { clearsTo: [] },
  wrongType: [
    sample('summer', '"summer" (a string, not an array)'),
    sample({ 0: 'summer' }),
    sample([1]),
    sample([null]),
    sample([['summer']]),
  ],
  outOfBounds: [
    sample([''], 'an empty tag'),
    sample(['  '], 'a tag of spaces'),
    sample([text(256, 't')], 'a tag of 256 characters'),
    sample(manyTags(251), '251 tags'),
  ],
  same: [
    sample(STORED_TAGS),
    sample(
      [' summer', 'linen ', 'LINEN', 'Summer'],
      'the same tags after trimming and deduplication',
    ),
  ],
}

const THREE_IMAGES = [...manyImages(2), ...STORED_IMAGES]

export const IMAGES: FieldSpec = {
  field: 'images',
  out: 'images',
  initialOut: STORED_IMAGES,
  replace: [
    accepted(
      [{ url: 'http://img.example.org/b.png', alt: 'Back' }],
      [{ url: 'http://img.example.org/b.png', alt: 'Back' }],
      'one http image (replaces the list whole)',
    ),
    accepted(
      [{ url: 'https://cdn.example.com/c.jpg', alt: null }],
      [{ url: 'https://cdn.example.com/c.jpg', alt: null }],
      'alt null',
    ),
    accepted(
      [{ url: 'https://cdn.example.com/d.jpg' }],
      [{ url: 'https://cdn.example.com/d.jpg', alt: null }],
      'alt left out (shown as null)',
    ),
    accepted(THREE_IMAGES, THREE_IMAGES, 'three images, in order'),
    accepted([], [], '[] (empties it)'),
    accepted(
      [{ url: urlOfLength(2048), alt: text(512, 'a') }],
      [{ url: urlOfLength(2048), alt: text(512, 'a') }],
      'url of 2,048 characters and alt of 512',
    ),
    accepted([{ url: URL_BASE, alt: '' }], [{ url: URL_BASE, alt: '' }], 'alt empty string'),
    accepted(manyImages(250), manyImages(250), '250 images'),
  ],
  null: { clearsTo: [] },
  wrongType: [
    sample('https://cdn.example.com/a.jpg', 'a URL string, not an array'),
    sample({ url: 'https://cdn.example.com/a.jpg' }, 'an image object, not an array'),
    sample(['https://cdn.example.com/a.jpg'], 'an array of URL strings'),
    sample([{ url: 5 }], 'url a number'),
    sample([{ alt: 'No url' }], 'url missing'),
    sample([{ url: 'https://cdn.example.com/a.jpg', alt: 5 }], 'alt a number'),
    sample([null], '[null]'),
  ],
  outOfBounds: [
    sample([{ url: 'ftp://cdn.example.com/a.jpg' }], 'an ftp URL'),
    sample([{ url: '/images/a.jpg' }], 'a relative URL'),
    sample([{ url: 'cdn.example.com/a.jpg' }], 'a URL without scheme'),
    sample([{ url: 'javascript:alert(1)' }], 'a javascript: URL'),
    sample([{ url: '' }], 'an empty url'),
    sample([{ url: 'http://' }], 'http:// alone'),
    sample([{ url: 'http://:80/a.jpg' }], 'a port but no host'),
    sample([{ url: 'http:///a.jpg' }], 'an empty authority (http:///a.jpg)'),
    sample([{ url: 'https://[::1/a.jpg' }], 'an unclosed IPv6 host'),
    sample([{ url: 'https://cdn.example.com\\a.jpg' }], 'a backslash'),
    sample([{ url: 'https://cdn.example.com/a\u0001.jpg' }], 'a control character'),
    sample([{ url: 'https://cdn.example.com/a b.jpg' }], 'a space'),
    sample([{ url: urlOfLength(2049) }], 'a url of 2,049 characters'),
    sample([{ url: URL_BASE, alt: text(513, 'a') }], 'an alt of 513 characters'),
    sample(manyImages(251), '251 images'),
  ],
  same: [sample(STORED_IMAGES)],
}

export const STORED_OPTIONS = { color: 'Red' }

const manyOptions = (count: number) =>
  Object.fromEntries(Array.from({ length: count }, (_, i) => [`option ${i}`, `value ${i}`]))

export const OPTIONS: FieldSpec = {
  field: 'options',
  out: 'options',
  initialOut: STORED_OPTIONS,
  replace: [
    accepted({ size: 'M' }, { size: 'M' }, '{"size":"M"} (replaces the object whole)'),
    accepted(
      { color: 'Blue', size: 'L' },
      { color: 'Blue', size: 'L' },
      '{"color":"Blue","size":"L"}',
    ),
    accepted({}, {}, '{} (empties it)'),
    accepted(
      { [text(64, 'k')]: text(255, 'v') },
      { [text(64, 'k')]: text(255, 'v') },
      'a key of 64 characters with a value of 255',
    ),
    accepted(manyOptions(50), manyOptions(50), '50 entries'),
  ],
  null: { clearsTo: {} },
  wrongType: [
    sample('Red', '"Red" (a string, not an object)'),
    sample(['Red'], 'an array'),
    sample({ color: 5 }, 'a value that is a number'),
    sample({ color: null }, 'a value that is null'),
    sample({ color: ['Red'] }, 'a value that is an array'),
  ],
  outOfBounds: [
    sample({ '': 'Red' }, 'an empty key'),
    sample({ color: '' }, 'an empty value'),
    sample({ [text(65, 'k')]: 'v' }, 'a key of 65 characters'),
    sample({ color: text(256, 'v') }, 'a value of 256 characters'),
    sample(manyOptions(51), '51 entries'),
  ],
  same: [sample(STORED_OPTIONS)],
}

const DASHED_255 = `${text(127, 'a')}-${text(127, 'b')}`

/** Slugs set by PATCH: lowercase a-z, 0-9 and single '-' between them, 1 to 255 characters. */
export function slugSpec(stored: string): FieldSpec {
  return {
    field: 'slug',
    out: 'slug',
    initialOut: stored,
    replace: [
      accepted('summer-linen'),
      accepted('a'),
      accepted('7'),
      accepted('2026'),
      accepted('a1-b2-c3'),
      accepted(text(255, 's'), text(255, 's'), '255 characters'),
      accepted(DASHED_255, DASHED_255, '255 characters with a dash'),
    ],
    null: 'refused',
    wrongType: [sample(5), sample(true), sample(['summer']), sample({ slug: 'summer' })],
    outOfBounds: [
      sample('', 'empty'),
      sample('Summer-Linen', 'uppercase'),
      sample('summer linen', 'a space'),
      sample('-summer', "a leading '-'"),
      sample('summer-', "a trailing '-'"),
      sample('summer--linen', "a double '-'"),
      sample('-', "only '-'"),
      sample('summer_linen', "an '_'"),
      sample('summer.linen', "a '.'"),
      sample('café', 'a non-ASCII letter'),
      sample('summer/linen', "a '/'"),
      sample(text(256, 's'), '256 characters'),
    ],
    same: [sample(stored)],
  }
}
