import assert from 'node:assert/strict'
import { it } from 'node:test'
import { readFeed } from './event-helpers.js'
import {
  addVariant,
  buildTestApi,
  describeEachDialect,
  expectError,
  type TestApi,
} from './helpers.js'

const DEFS = '/metafield-definitions'

async function define(
  api: TestApi,
  key: string,
  type: string,
  extra: Record<string, unknown> = {},
): Promise<Record<string, any>> {
  const res = await api.post(DEFS, {
    owner: 'product',
    namespace: 'custom',
    key,
    type,
    name: key,
    ...extra,
  })
  assert.equal(res.statusCode, 200, res.body)
  return res.json().data
}

function expectInvalid(res: { statusCode: number; body: string }, field: string): void {
  const body = expectError(res, 400, 'validation_failed')
  assert.ok(
    body.details?.some((d) => d.field === field),
    `details should name ${field}: ${res.body}`,
  )
}

/** A good value of each type, as sent, and as answered. */
const GOOD: [type: string, sent: unknown, answered: unknown][] = [
  ['single_line_text_field', 'Cotton', 'Cotton'],
  ['multi_line_text_field', 'Wash cold\nDry flat', 'Wash cold\nDry flat'],
  ['number_integer', -9007199254740991, -9007199254740991],
  ['number_decimal', 12.123456789, 12.123456789],
  ['boolean', false, false],
  ['date', '2024-02-29', '2024-02-29'],
  ['date_time', '2026-11-30T10:15:30+02:00', '2026-11-30T08:15:30.000Z'],
  ['url', 'https://example.com/size-chart', 'https://example.com/size-chart'],
  ['color', '#FFAA00', '#ffaa00'],
  ['json', { sizes: [1, 2], note: null }, { sizes: [1, 2], note: null }],
  ['list.single_line_text_field', ['a', 'b'], ['a', 'b']],
  ['list.number_integer', [1, 2, 3], [1, 2, 3]],
]

/** Bad values of each type. */
const BAD: [type: string, values: unknown[]][] = [
  ['single_line_text_field', ['', 'two\nlines', 5, 'x'.repeat(5001), true]],
  ['multi_line_text_field', ['', 'x'.repeat(65536), 1]],
  ['number_integer', [1.5, 2 ** 53, '3', true]],
  ['number_decimal', [1.0000000001, '1.5', 'NaN', 1e-10]],
  ['boolean', ['true', 1, 0]],
  ['date', ['2023-02-29', '2024-13-01', '2024-1-1', '20240101', 20240101]],
  ['date_time', ['2026-11-30T10:15:30', '2026-11-30', '2026-11-31T10:00:00Z', 'now']],
  ['url', ['ftp://example.com', '/relative', 'https://', `https://e.com/${'x'.repeat(2040)}`]],
  ['color', ['#fff', 'red', '#gggggg', '#ffaa001']],
  ['list.single_line_text_field', [[], 'a', [1], ['a\nb'], Array(129).fill('a')]],
  ['list.number_integer', [[], [1.5], ['1'], Array(129).fill(1)]],
]

describeEachDialect('metafield values', (dialect) => {
  it('takes a good value of every type and answers it normalized; {} when none', async (t) => {
    const api = await buildTestApi(t, dialect)
    const plain = await api.createProduct({ name: 'Plain' })
    assert.deepEqual(plain.metafields, {})
    const sent: Record<string, unknown> = {}
    const answered: Record<string, unknown> = {}
    for (const [i, [type, value, out]] of GOOD.entries()) {
      await define(api, `k${i}`, type)
      sent[`custom.k${i}`] = value
      answered[`custom.k${i}`] = out
    }
    const product = await api.createProduct({ name: 'Full', metafields: sent })
    assert.deepEqual(product.metafields, answered)
    const read = (await api.get(`/products/${product.id}`)).json().data
    assert.deepEqual(read.metafields, answered)
    const list = (await api.get('/products')).json().data
    assert.deepEqual(list[0].metafields, answered)
  })

  it('refuses bad values of every type, naming metafields.<ns>.<key>', async (t) => {
    const api = await buildTestApi(t, dialect)
    for (const [i, [type, values]] of BAD.entries()) {
      await define(api, `k${i}`, type)
      for (const value of values) {
        const res = await api.post('/products', {
          name: 'Bad',
          metafields: { [`custom.k${i}`]: value },
        })
        expectInvalid(res, `metafields.custom.k${i}`)
      }
    }
    assert.equal((await api.get('/products')).json().data.length, 0)
  })

  it('names metafields.<ns>.<key> for a refused name or text inside a value (__proto__, NUL)', async (t) => {
    const api = await buildTestApi(t, dialect)
    await define(api, 'text', 'single_line_text_field')
    await define(api, 'doc', 'json')
    for (const [key, value] of [
      ['custom.text', JSON.parse('{"__proto__": ""}')],
      ['custom.doc', JSON.parse('{"a": [{"__proto__": 1}]}')],
      ['custom.doc', { a: 'x\u0000y' }],
      ['custom.doc', { 'x\u0000y': 1 }],
    ] as const) {
      const res = await api.post('/products', { name: 'Bad', metafields: { [key]: value } })
      expectInvalid(res, `metafields.${key}`)
    }
  })

  it('refuses a key without a definition, of another owner or a deleted one', async (t) => {
    const api = await buildTestApi(t, dialect)
    const res = await api.post('/products', { name: 'X', metafields: { 'custom.none': 'a' } })
    expectInvalid(res, 'metafields.custom.none')
    const variantDef = await api.post(DEFS, {
      owner: 'variant',
      namespace: 'custom',
      key: 'fit',
      type: 'single_line_text_field',
      name: 'Fit',
    })
    assert.equal(variantDef.statusCode, 200)
    expectInvalid(
      await api.post('/products', { name: 'X', metafields: { 'custom.fit': 'slim' } }),
      'metafields.custom.fit',
    )
    const def = await define(api, 'gone', 'boolean')
    await api.delete(`${DEFS}/${def.id}`)
    expectInvalid(
      await api.post('/products', { name: 'X', metafields: { 'custom.gone': true } }),
      'metafields.custom.gone',
    )
    const other = await api.newKey({ store: 'store-b' })
    const res2 = await api.post(
      '/products',
      { name: 'X', metafields: { 'custom.fit': 'a' } },
      other,
    )
    expectInvalid(res2, 'metafields.custom.fit')
  })

  it('applies validations: min, max, choices, regex; list bounds per item', async (t) => {
    const api = await buildTestApi(t, dialect)
    await define(api, 'len', 'single_line_text_field', { validations: { min: 2, max: 4 } })
    await define(api, 'num', 'number_integer', { validations: { min: 0, max: 10 } })
    await define(api, 'pick', 'single_line_text_field', { validations: { choices: ['S', 'M'] } })
    await define(api, 'code', 'single_line_text_field', { validations: { regex: '[A-Z]{2}\\d' } })
    await define(api, 'items', 'list.number_integer', { validations: { max: 5 } })
    const cases: [string, unknown, boolean][] = [
      ['len', 'ab', true],
      ['len', 'a', false],
      ['len', 'abcde', false],
      ['len', 'éé', true],
      ['num', 10, true],
      ['num', 11, false],
      ['num', -1, false],
      ['pick', 'M', true],
      ['pick', 'm', false],
      ['code', 'AB1', true],
      ['code', 'AB1x', false],
      ['code', 'xAB1', false],
      ['items', [1, 5], true],
      ['items', [1, 6], false],
    ]
    for (const [key, value, ok] of cases) {
      const res = await api.post('/products', {
        name: 'V',
        metafields: { [`custom.${key}`]: value },
      })
      if (ok) assert.equal(res.statusCode, 200, `${key}=${JSON.stringify(value)}: ${res.body}`)
      else expectInvalid(res, `metafields.custom.${key}`)
    }
  })

  it('takes a json value of 65,536 bytes and refuses one byte more', async (t) => {
    const api = await buildTestApi(t, dialect)
    await define(api, 'blob', 'json')
    const exact = 'x'.repeat(65_536 - 2)
    const ok = await api.post('/products', { name: 'J', metafields: { 'custom.blob': exact } })
    assert.equal(ok.statusCode, 200, ok.body.slice(0, 300))
    assert.equal(ok.json().data.metafields['custom.blob'], exact)
    expectInvalid(
      await api.post('/products', { name: 'J', metafields: { 'custom.blob': `${exact}x` } }),
      'metafields.custom.blob',
    )
  })

  it('runs a pattern that would backtrack in linear time: no request holds the loop > 50 ms', async (t) => {
    const api = await buildTestApi(t, dialect)
    await define(api, 'evil', 'multi_line_text_field', { validations: { regex: '(a+)+$' } })
    await define(api, 'evil2', 'multi_line_text_field', { validations: { regex: '(a|aa)*c' } })
    const value = `${'a'.repeat(65_534)}b`
    for (const key of ['evil', 'evil2']) {
      // Warm up the engine once, then time the request: in CPU time of this process, which a
      // busy machine (other test files run beside this one) does not stretch as it does wall
      // time. A backtracking engine would spend seconds on this value.
      await api.post('/products', { name: 'R', metafields: { [`custom.${key}`]: 'ab' } })
      const start = process.cpuUsage()
      const res = await api.post('/products', {
        name: 'R',
        metafields: { [`custom.${key}`]: value },
      })
      const { user, system } = process.cpuUsage(start)
      const tookMs = (user + system) / 1000
      expectInvalid(res, `metafields.custom.${key}`)
      assert.ok(tookMs < 250, `the request took ${tookMs} ms of CPU`)
    }
  })

  it('PATCH merges per key: a value sets, null removes, keys left out stay', async (t) => {
    const api = await buildTestApi(t, dialect)
    await define(api, 'aa', 'single_line_text_field')
    await define(api, 'bb', 'number_integer')
    await define(api, 'cc', 'boolean')
    const product = await api.createProduct({
      name: 'P',
      metafields: { 'custom.aa': 'one', 'custom.bb': 1 },
    })
    const res = await api.patch(`/products/${product.id}`, {
      metafields: { 'custom.aa': null, 'custom.cc': true },
    })
    assert.equal(res.statusCode, 200, res.body)
    assert.deepEqual(res.json().data.metafields, { 'custom.bb': 1, 'custom.cc': true })
    assert.equal(res.json().data.version, 2)
    const same = await api.patch(`/products/${product.id}`, { metafields: { 'custom.bb': 1 } })
    assert.equal(same.json().data.version, 2)
    expectInvalid(
      await api.patch(`/products/${product.id}`, { metafields: { 'custom.bb': 'x' } }),
      'metafields.custom.bb',
    )
    const cleared = await api.patch(`/products/${product.id}`, { metafields: null })
    assert.deepEqual(cleared.json().data.metafields, {})
    // Other fields patched without metafields keep them.
    await api.patch(`/products/${product.id}`, { metafields: { 'custom.aa': 'again' } })
    const renamed = await api.patch(`/products/${product.id}`, { name: 'Q' })
    assert.deepEqual(renamed.json().data.metafields, { 'custom.aa': 'again' })
    // Metafields patched with other fields: both are written.
    const both = await api.patch(`/products/${product.id}`, {
      price: 5,
      metafields: { 'custom.bb': 2 },
    })
    assert.equal(both.statusCode, 200, both.body)
    assert.deepEqual(both.json().data.metafields, { 'custom.aa': 'again', 'custom.bb': 2 })
    assert.equal(both.json().data.price, 5)
    const read = await api.get(`/products/${product.id}`)
    assert.deepEqual(read.json().data.metafields, { 'custom.aa': 'again', 'custom.bb': 2 })
  })

  it('update events hold previousAttributes.metafields: old values of changed keys, null when unset', async (t) => {
    const api = await buildTestApi(t, dialect)
    await define(api, 'aa', 'single_line_text_field')
    await define(api, 'bb', 'number_integer')
    await define(api, 'cc', 'boolean')
    const product = await api.createProduct({
      name: 'P',
      metafields: { 'custom.aa': 'one', 'custom.bb': 1 },
    })
    await api.patch(`/products/${product.id}`, {
      metafields: { 'custom.aa': 'two', 'custom.cc': true },
    })
    const events = await readFeed(api, { atLeast: 2 })
    const created = events.find((e) => e.type === 'product.created')!
    assert.deepEqual(created.data.object.metafields, { 'custom.aa': 'one', 'custom.bb': 1 })
    const updated = events.find((e) => e.type === 'product.updated')!
    assert.deepEqual(updated.data.object.metafields, {
      'custom.aa': 'two',
      'custom.bb': 1,
      'custom.cc': true,
    })
    assert.deepEqual(updated.data.previousAttributes, {
      metafields: { 'custom.aa': 'one', 'custom.cc': null },
    })
  })

  it('values stay when validations change; deleting a definition removes its values without events or version moves', async (t) => {
    const api = await buildTestApi(t, dialect)
    const def = await define(api, 'size', 'single_line_text_field')
    await define(api, 'keep', 'boolean')
    const product = await api.createProduct({
      name: 'P',
      metafields: { 'custom.size': 'XL', 'custom.keep': true },
    })
    const tightened = await api.patch(`${DEFS}/${def.id}`, { validations: { choices: ['S'] } })
    assert.equal(tightened.statusCode, 200, tightened.body)
    const read = (await api.get(`/products/${product.id}`)).json().data
    assert.equal(read.metafields['custom.size'], 'XL')
    expectInvalid(
      await api.patch(`/products/${product.id}`, { metafields: { 'custom.size': 'XL' } }),
      'metafields.custom.size',
    )
    const before = await readFeed(api, { atLeast: 1 })
    assert.equal((await api.delete(`${DEFS}/${def.id}`)).statusCode, 200)
    const after = (await api.get(`/products/${product.id}`)).json().data
    assert.deepEqual(after.metafields, { 'custom.keep': true })
    assert.equal(after.version, read.version)
    assert.equal(after.updatedAt, read.updatedAt)
    assert.equal((await readFeed(api)).length, before.length)
  })

  it('variants carry metafields of variant definitions: create, PATCH, events', async (t) => {
    const api = await buildTestApi(t, dialect)
    const res = await api.post(DEFS, {
      owner: 'variant',
      namespace: 'fit',
      key: 'cut',
      type: 'list.single_line_text_field',
      name: 'Cut',
      filterable: true,
    })
    assert.equal(res.statusCode, 200, res.body)
    const product = await api.createProduct({ name: 'P' })
    const variant = await addVariant(api, product.id, {
      name: 'M',
      metafields: { 'fit.cut': ['slim', 'long'] },
    })
    assert.deepEqual(variant.metafields, { 'fit.cut': ['slim', 'long'] })
    const plain = await addVariant(api, product.id, { name: 'L', sku: 'L' })
    assert.deepEqual(plain.metafields, {})
    expectInvalid(
      await api.post(`/products/${product.id}/variants`, {
        name: 'S',
        metafields: { 'fit.cut': 'slim' },
      }),
      'metafields.fit.cut',
    )
    const patched = await api.patch(`/products/${product.id}/variants/${variant.id}`, {
      metafields: { 'fit.cut': ['wide'] },
    })
    assert.equal(patched.statusCode, 200, patched.body)
    assert.deepEqual(patched.json().data.metafields, { 'fit.cut': ['wide'] })
    const events = await readFeed(api, { atLeast: 4 })
    const updated = events.find((e) => e.type === 'variant.updated')!
    assert.deepEqual(updated.data.previousAttributes, {
      metafields: { 'fit.cut': ['slim', 'long'] },
    })
    const read = (await api.get(`/products/${product.id}`)).json().data
    assert.deepEqual(read.variants[0].metafields, { 'fit.cut': ['wide'] })
  })

  it('keeps the filter index of filterable definitions: items per record, dropped with the record or the flag', async (t) => {
    const api = await buildTestApi(t, dialect)
    const color = await define(api, 'color', 'list.single_line_text_field', { filterable: true })
    const size = await define(api, 'size', 'number_integer')
    const indexed = async () =>
      (
        await api.database.kysely
          .selectFrom('metafield_values')
          .select(['definition_id', 'value', 'product_id'])
          .orderBy('value')
          .execute()
      ).map((row) => [row.definition_id, row.value, row.product_id])
    const product = await api.createProduct({
      name: 'P',
      metafields: { 'custom.color': ['red', 'blue', 'red'], 'custom.size': 4 },
    })
    assert.deepEqual(await indexed(), [
      [color.id, '"blue"', product.id],
      [color.id, '"red"', product.id],
    ])
    await api.patch(`/products/${product.id}`, { metafields: { 'custom.color': ['green'] } })
    assert.deepEqual(await indexed(), [[color.id, '"green"', product.id]])
    await api.patch(`${DEFS}/${size.id}`, { filterable: true })
    assert.deepEqual(await indexed(), [
      [color.id, '"green"', product.id],
      [size.id, '4', product.id],
    ])
    await api.patch(`${DEFS}/${color.id}`, { filterable: false })
    assert.deepEqual(await indexed(), [[size.id, '4', product.id]])
    await api.delete(`/products/${product.id}`)
    assert.deepEqual(await indexed(), [])
  })
})
