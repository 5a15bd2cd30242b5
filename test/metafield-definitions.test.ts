import assert from 'node:assert/strict'
import { it } from 'node:test'
import { buildTestApi, describeEachDialect, expectError, type TestApi } from './helpers.js'

const DEFS = '/metafield-definitions'

function definition(overrides: Record<string, unknown> = {}) {
  return {
    owner: 'product',
    namespace: 'custom',
    key: 'material',
    type: 'single_line_text_field',
    name: 'Material',
    ...overrides,
  }
}

async function define(api: TestApi, overrides: Record<string, unknown> = {}) {
  const res = await api.post(DEFS, definition(overrides))
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

describeEachDialect('metafield definitions', (dialect) => {
  it('creates a definition and answers every field, with an ETag; GET reads it', async (t) => {
    const api = await buildTestApi(t, dialect)
    const res = await api.post(
      DEFS,
      definition({ validations: { choices: ['cotton', 'wool'] }, filterable: true }),
    )
    assert.equal(res.statusCode, 200, res.body)
    const created = res.json().data
    assert.deepEqual(Object.keys(created).sort(), [
      'createdAt',
      'description',
      'filterable',
      'id',
      'key',
      'name',
      'namespace',
      'owner',
      'searchable',
      'type',
      'updatedAt',
      'validations',
      'version',
    ])
    assert.equal(created.filterable, true)
    assert.equal(created.searchable, false)
    assert.equal(created.description, null)
    assert.deepEqual(created.validations, { choices: ['cotton', 'wool'] })
    assert.equal(created.version, 1)
    assert.equal(res.headers.etag, '"1"')
    const read = await api.get(`${DEFS}/${created.id}`)
    assert.equal(read.statusCode, 200)
    assert.deepEqual(read.json().data, created)
    const again = await api.request('GET', `${DEFS}/${created.id}`, {
      headers: { 'if-none-match': '"1"' },
    })
    assert.equal(again.statusCode, 304)
  })

  it('is 409 duplicate_definition for a taken owner, namespace and key; another owner is free', async (t) => {
    const api = await buildTestApi(t, dialect)
    await define(api)
    expectError(await api.post(DEFS, definition({ name: 'Other' })), 409, 'duplicate_definition')
    await define(api, { owner: 'variant' })
    const other = await api.newKey({ store: 'store-b' })
    assert.equal((await api.post(DEFS, definition(), other)).statusCode, 200)
  })

  it('refuses bad owners, namespaces, keys, types and names, naming the field', async (t) => {
    const api = await buildTestApi(t, dialect)
    expectInvalid(await api.post(DEFS, definition({ owner: 'order' })), 'owner')
    expectInvalid(await api.post(DEFS, definition({ namespace: 'a' })), 'namespace')
    expectInvalid(await api.post(DEFS, definition({ namespace: 'x'.repeat(65) })), 'namespace')
    expectInvalid(await api.post(DEFS, definition({ key: 'Has.Dot' })), 'key')
    expectInvalid(await api.post(DEFS, definition({ type: 'rating' })), 'type')
    expectInvalid(await api.post(DEFS, definition({ name: '' })), 'name')
    expectInvalid(await api.post(DEFS, definition({ name: 'n'.repeat(256) })), 'name')
    assert.equal((await api.post(DEFS, definition({ key: 'a-b_9' }))).statusCode, 200)
  })

  it('refuses a validation that does not fit the type', async (t) => {
    const api = await buildTestApi(t, dialect)
    const cases: [string, Record<string, unknown>, string][] = [
      ['boolean', { min: 1 }, 'validations.min'],
      ['date', { regex: 'a' }, 'validations.regex'],
      ['number_integer', { choices: ['a'] }, 'validations.choices'],
      ['multi_line_text_field', { choices: ['a'] }, 'validations.choices'],
      ['json', { max: 3 }, 'validations.max'],
      ['single_line_text_field', { min: 5, max: 2 }, 'validations.min'],
      ['single_line_text_field', { min: 1.5 }, 'validations.min'],
    ]
    for (const [type, validations, field] of cases) {
      expectInvalid(await api.post(DEFS, definition({ type, validations })), field)
    }
    expectInvalid(
      await api.post(DEFS, definition({ validations: { choices: [] } })),
      'validations.choices',
    )
    expectInvalid(
      await api.post(DEFS, definition({ validations: { regex: 'a'.repeat(257) } })),
      'validations.regex',
    )
    expectInvalid(await api.post(DEFS, definition({ validations: { size: 3 } })), 'validations')
  })

  it('refuses regex patterns that need backtracking; takes RE2 ones', async (t) => {
    const api = await buildTestApi(t, dialect)
    for (const regex of ['(a)\\1', '(?=a)a', 'a(?!b)', '(?<=a)b', '[']) {
      expectInvalid(
        await api.post(DEFS, definition({ validations: { regex } })),
        'validations.regex',
      )
    }
    await define(api, { validations: { regex: '(a+)+$' } })
    await define(api, { key: 'code', validations: { regex: '[A-Z]{3}-\\d+' } })
  })

  it('lists newest first with cursor paging and owner and namespace filters', async (t) => {
    const api = await buildTestApi(t, dialect)
    const a = await define(api, { key: 'aa' })
    const b = await define(api, { key: 'bb', owner: 'variant' })
    const c = await define(api, { key: 'cc', namespace: 'other' })
    const first = await api.get(`${DEFS}?limit=2`)
    assert.equal(first.statusCode, 200, first.body)
    assert.deepEqual(
      first.json().data.map((d: { id: string }) => d.id),
      [c.id, b.id],
    )
    const cursor = first.json().nextCursor
    assert.ok(cursor)
    const second = await api.get(`${DEFS}?limit=2&cursor=${cursor}`)
    assert.deepEqual(
      second.json().data.map((d: { id: string }) => d.id),
      [a.id],
    )
    assert.equal(second.json().nextCursor, null)
    const variants = await api.get(`${DEFS}?owner=variant`)
    assert.deepEqual(
      variants.json().data.map((d: { id: string }) => d.id),
      [b.id],
    )
    const other = await api.get(`${DEFS}?namespace=other`)
    assert.deepEqual(
      other.json().data.map((d: { id: string }) => d.id),
      [c.id],
    )
    expectInvalid(await api.get(`${DEFS}?cursor=nope`), 'cursor')
    expectInvalid(await api.get(`${DEFS}?owner=order`), 'owner')
  })

  it('PATCH changes name, description, validations, filterable and searchable; not the identity', async (t) => {
    const api = await buildTestApi(t, dialect)
    const created = await define(api, { validations: { max: 10 } })
    const res = await api.patch(`${DEFS}/${created.id}`, {
      name: 'Fabric',
      description: 'What it is made of',
      validations: { choices: ['cotton'] },
      filterable: true,
      searchable: true,
      owner: 'product',
    })
    assert.equal(res.statusCode, 200, res.body)
    const updated = res.json().data
    assert.equal(updated.name, 'Fabric')
    assert.equal(updated.description, 'What it is made of')
    assert.deepEqual(updated.validations, { choices: ['cotton'] })
    assert.equal(updated.filterable, true)
    assert.equal(updated.searchable, true)
    assert.equal(updated.version, 2)
    assert.equal(res.headers.etag, '"2"')
    for (const [field, value] of [
      ['owner', 'variant'],
      ['namespace', 'other'],
      ['key', 'other'],
      ['type', 'json'],
    ]) {
      expectInvalid(await api.patch(`${DEFS}/${created.id}`, { [field!]: value }), field!)
    }
    expectInvalid(
      await api.patch(`${DEFS}/${created.id}`, { validations: { regex: '(x)\\1' } }),
      'validations.regex',
    )
    const same = await api.patch(`${DEFS}/${created.id}`, { name: 'Fabric' })
    assert.equal(same.json().data.version, 2)
    const stale = await api.patch(
      `${DEFS}/${created.id}`,
      { name: 'Stale' },
      { headers: { 'if-match': '"1"' } },
    )
    expectError(stale, 412, 'precondition_failed')
  })

  it('DELETE removes it; reads are 404; If-Match is honoured', async (t) => {
    const api = await buildTestApi(t, dialect)
    const created = await define(api)
    expectError(
      await api.delete(`${DEFS}/${created.id}`, { headers: { 'if-match': '"7"' } }),
      412,
      'precondition_failed',
    )
    const res = await api.delete(`${DEFS}/${created.id}`)
    assert.equal(res.statusCode, 200, res.body)
    assert.deepEqual(res.json().data, { id: created.id, deleted: true })
    expectError(await api.get(`${DEFS}/${created.id}`), 404, 'not_found')
    expectError(await api.delete(`${DEFS}/${created.id}`), 404, 'not_found')
    expectError(await api.get(`${DEFS}/not-a-uuid`), 404, 'not_found')
    // The key is free again.
    await define(api)
  })

  it('keeps to 200 definitions per owner per store: the 201st is 400', async (t) => {
    const api = await buildTestApi(t, dialect)
    for (let i = 0; i < 200; i++) await define(api, { key: `k${String(i).padStart(3, '0')}` })
    expectInvalid(await api.post(DEFS, definition({ key: 'one-more' })), 'owner')
    await define(api, { owner: 'variant', key: 'one-more' })
    const first = (await api.get(`${DEFS}?owner=product&limit=1`)).json().data[0]
    assert.equal((await api.delete(`${DEFS}/${first.id}`)).statusCode, 200)
    await define(api, { key: 'one-more' })
  })

  it('needs scope write to write; read reads; stores are isolated', async (t) => {
    const api = await buildTestApi(t, dialect)
    const created = await define(api)
    const readOnly = await api.newKey({ scopes: ['read'] })
    expectError(await api.post(DEFS, definition({ key: 'xx' }), readOnly), 403, 'forbidden')
    assert.equal((await api.get(`${DEFS}/${created.id}`, readOnly)).statusCode, 200)
    const other = await api.newKey({ store: 'store-b' })
    expectError(await api.get(`${DEFS}/${created.id}`, other), 404, 'not_found')
  })

  it('replays a create under the same Idempotency-Key', async (t) => {
    const api = await buildTestApi(t, dialect)
    const send = () =>
      api.request('POST', DEFS, { body: definition(), headers: { 'idempotency-key': 'def-1' } })
    const first = await send()
    const second = await send()
    assert.equal(second.statusCode, 200)
    assert.equal(second.headers['idempotent-replayed'], 'true')
    assert.deepEqual(second.json(), first.json())
  })
})
