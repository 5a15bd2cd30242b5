import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import { before, describe, it, type TestContext } from 'node:test'
import { Validator } from '@seriousme/openapi-schema-validator'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import { buildApp } from '../src/app.js'
import type { Database } from '../src/db/database.js'
import { ERROR_STATUS } from '../src/errors.js'
import { pruneEvents } from '../src/events/pruning.js'
import { generateOpenApiDocument, OPENAPI_FILE, renderOpenApiFile } from '../scripts/openapi.js'
import {
  COLLECTION_UNREACHABLE,
  exerciseCollections,
  exerciseCollectionsGone,
} from './collection-openapi.js'
import { API, buildTestApi, describeEachDialect } from './helpers.js'
import {
  ConformanceChecker,
  documentSchemaCompiler,
  JSON_MEDIA,
  operationsOf,
  type Document,
} from './openapi-conformance.js'

/** Every Schema Object of the document, with where it is. */
function* schemasOf(document: Document): Generator<[string, object]> {
  for (const [name, schema] of Object.entries<object>(document.components.schemas)) {
    yield [`components.schemas.${name}`, schema]
  }
  for (const [label, operation] of operationsOf(document)) {
    for (const parameter of operation.parameters ?? []) {
      yield [`${label} parameter ${parameter.name}`, parameter.schema]
    }
    const body = operation.requestBody?.content?.[JSON_MEDIA]
    if (body) yield [`${label} request body`, body.schema]
    for (const [status, response] of Object.entries<Record<string, any>>(operation.responses)) {
      const media = response.content?.[JSON_MEDIA]
      if (media) yield [`${label} ${status}`, media.schema]
    }
  }
}

/** Every example of the document's media objects, with the schema it illustrates. */
function* examplesOf(document: Document): Generator<[string, object, unknown]> {
  for (const [label, operation] of operationsOf(document)) {
    const media: [string, Record<string, any>][] = []
    const body = operation.requestBody?.content?.[JSON_MEDIA]
    if (body) media.push([`${label} request body`, body])
    for (const [status, response] of Object.entries<Record<string, any>>(operation.responses)) {
      if (response.content?.[JSON_MEDIA])
        media.push([`${label} ${status}`, response.content[JSON_MEDIA]])
    }
    for (const [where, { schema, example, examples }] of media) {
      if (example !== undefined) yield [where, schema, example]
      for (const [name, { value }] of Object.entries<{ value: unknown }>(examples ?? {})) {
        yield [`${where} example ${name}`, schema, value]
      }
    }
  }
}

let document: Document
before(async () => {
  document = await generateOpenApiDocument()
})

describe('the OpenAPI document', () => {
  it('is a valid OpenAPI 3.1 document', async () => {
    const validator = new Validator()
    const result = await validator.validate(document)
    assert.equal(validator.version, '3.1')
    assert.deepEqual(result, { valid: true })
  })

  it('holds only valid JSON Schema 2020-12, with no keyword or format unknown to it', () => {
    const compile = documentSchemaCompiler(document)
    let count = 0
    for (const [where, schema] of schemasOf(document)) {
      assert.doesNotThrow(() => compile(schema), where)
      count++
    }
    assert.ok(count > 20, `only ${count} schemas`)
  })

  it('has request and response examples that match their schemas', () => {
    const compile = documentSchemaCompiler(document)
    const illustrated = new Set<string>()
    for (const [where, schema, example] of examplesOf(document)) {
      const validate = compile(schema)
      assert.ok(validate(example), `${where}: ${JSON.stringify(validate.errors)}`)
      illustrated.add(where.replace(/ example .*/, ''))
    }
    // Every JSON request body and every JSON response, of every operation, has an example
    // (CSV bodies, of imports and exports, are text).
    for (const [label, operation] of operationsOf(document)) {
      if (operation.requestBody?.content?.[JSON_MEDIA])
        assert.ok(illustrated.has(`${label} request body`), label)
      for (const [status, response] of Object.entries<Record<string, any>>(operation.responses)) {
        if (response.content?.[JSON_MEDIA] === undefined) continue
        assert.ok(illustrated.has(`${label} ${status}`), `${label} ${status} has no example`)
      }
    }
  })

  it('lists every route of the catalogue, with the scopes each needs; health is public', () => {
    const write = [{ bearerAuth: ['write'] }]
    const read = [{ bearerAuth: ['read'] }, { bearerAuth: ['write'] }]
    const expected: Record<string, unknown> = {
      [`POST ${API}/products`]: write,
      [`PATCH ${API}/products/{id}`]: write,
      [`DELETE ${API}/products/{id}`]: write,
      [`POST ${API}/products/{id}/variants`]: write,
      [`PATCH ${API}/products/{id}/variants/{variantId}`]: write,
      [`DELETE ${API}/products/{id}/variants/{variantId}`]: write,
      [`GET ${API}/products/{id}`]: read,
      [`GET ${API}/products/{id}/variants`]: read,
      [`GET ${API}/products/{id}/variants/{variantId}`]: read,
      [`GET ${API}/products`]: read,
      [`GET ${API}/variants`]: read,
      [`GET ${API}/events`]: read,
      [`GET ${API}/me`]: read,
      [`POST ${API}/webhook-endpoints`]: write,
      [`GET ${API}/webhook-endpoints`]: write,
      [`GET ${API}/webhook-endpoints/{id}`]: write,
      [`PATCH ${API}/webhook-endpoints/{id}`]: write,
      [`DELETE ${API}/webhook-endpoints/{id}`]: write,
      [`POST ${API}/imports`]: write,
      [`GET ${API}/imports`]: read,
      [`GET ${API}/imports/{id}`]: read,
      [`GET ${API}/exports/products.csv`]: read,
      [`POST ${API}/metafield-definitions`]: write,
      [`GET ${API}/metafield-definitions`]: read,
      [`GET ${API}/metafield-definitions/{id}`]: read,
      [`PATCH ${API}/metafield-definitions/{id}`]: write,
      [`DELETE ${API}/metafield-definitions/{id}`]: write,
      [`GET ${API}/webhook-endpoints/{id}/deliveries`]: write,
      [`POST ${API}/webhook-endpoints/{id}/deliveries/{deliveryId}/retry`]: write,
      [`POST ${API}/collections`]: write,
      [`POST ${API}/collections/preview`]: read,
      [`GET ${API}/collections`]: read,
      [`GET ${API}/collections/{id}`]: read,
      [`PATCH ${API}/collections/{id}`]: write,
      [`DELETE ${API}/collections/{id}`]: write,
      [`GET ${API}/collections/{id}/products`]: read,
      [`POST ${API}/collections/{id}/products`]: write,
      [`PATCH ${API}/collections/{id}/products/{productId}`]: write,
      [`DELETE ${API}/collections/{id}/products/{productId}`]: write,
      'GET /healthz': [],
      'GET /readyz': [],
      'GET /metrics': [{}, { metricsToken: [] }],
      'GET /admin': [],
      'GET /admin/assets/{file}': [],
      'GET /': [],
      'GET /openapi.json': [],
      'GET /docs': [],
    }
    const operations = operationsOf(document)
    assert.deepEqual([...operations.keys()].sort(), Object.keys(expected).sort())
    for (const [label, operation] of operations) {
      assert.deepEqual(operation.security, expected[label], label)
      assert.ok(operation.summary && operation.operationId, `${label} has a summary and an id`)
      const scopeSentence = label.includes(API)
        ? /Needs an API key with scope `/
        : label === 'GET /metrics'
          ? /Open unless the service was started with `METRICS_TOKEN`/
          : /Public/
      assert.match(operation.description, scopeSentence, label)
    }
    assert.deepEqual(document.components.securitySchemes.bearerAuth, {
      type: 'http',
      scheme: 'bearer',
      description: document.components.securitySchemes.bearerAuth.description,
    })
  })

  it("declares each route's error statuses of the contract, each with the error body and an example per code", () => {
    const operations = operationsOf(document)
    const common = ['200', '401', '403', '500', '503']
    const expected: Record<string, string[]> = {
      [`POST ${API}/products`]: [...common, '400', '409', '413', '415'],
      [`POST ${API}/products/{id}/variants`]: [...common, '400', '404', '409', '413', '415'],
      [`GET ${API}/products/{id}`]: [...common, '404'],
      [`GET ${API}/products/{id}/variants`]: [...common, '404'],
      [`GET ${API}/products`]: [...common, '400'],
      [`PATCH ${API}/products/{id}`]: [...common, '400', '404', '409', '412', '413', '415'],
      [`DELETE ${API}/products/{id}`]: [...common, '404', '412'],
      [`PATCH ${API}/products/{id}/variants/{variantId}`]: [
        ...common,
        ...['400', '404', '409', '412', '413', '415'],
      ],
      [`DELETE ${API}/products/{id}/variants/{variantId}`]: [...common, '404', '412'],
      [`GET ${API}/products/{id}/variants/{variantId}`]: [...common, '404'],
      [`GET ${API}/variants`]: [...common, '400'],
      [`GET ${API}/events`]: [...common, '400', '410'],
      [`POST ${API}/webhook-endpoints`]: [...common, '400', '409', '413', '415'],
      [`GET ${API}/webhook-endpoints`]: common,
      [`GET ${API}/webhook-endpoints/{id}`]: [...common, '404'],
      [`PATCH ${API}/webhook-endpoints/{id}`]: [...common, '400', '404', '409', '413', '415'],
      [`DELETE ${API}/webhook-endpoints/{id}`]: [...common, '404'],
      [`POST ${API}/imports`]: ['202', '400', '401', '403', '409', '413', '415', '500', '503'],
      [`GET ${API}/imports`]: [...common, '400'],
      [`GET ${API}/imports/{id}`]: [...common, '404'],
      [`GET ${API}/exports/products.csv`]: common,
      [`POST ${API}/metafield-definitions`]: [...common, '400', '409', '413', '415'],
      [`GET ${API}/metafield-definitions`]: [...common, '400'],
      [`GET ${API}/metafield-definitions/{id}`]: [...common, '404'],
      [`PATCH ${API}/metafield-definitions/{id}`]: [...common, '400', '404', '412', '413', '415'],
      [`DELETE ${API}/metafield-definitions/{id}`]: [...common, '404', '412'],
      [`GET ${API}/webhook-endpoints/{id}/deliveries`]: [...common, '400', '404'],
      [`POST ${API}/webhook-endpoints/{id}/deliveries/{deliveryId}/retry`]: [...common, '404'],
    }
    for (const [label, statuses] of Object.entries(expected)) {
      const responses = operations.get(label)!.responses
      // Statuses other features add (429, 422) may come on top; these must be there.
      for (const status of statuses) assert.ok(responses[status], `${label} lacks ${status}`)
      for (const [status, response] of Object.entries<Record<string, any>>(responses)) {
        if (Number(status) < 400) continue
        const media = response.content[JSON_MEDIA]
        assert.deepEqual(media.schema, { $ref: '#/components/schemas/ErrorBody' }, label)
        const codes = Object.entries(ERROR_STATUS)
          .filter(([, code]) => String(code) === status)
          .map(([name]) => name)
        assert.deepEqual(Object.keys(media.examples), codes, `${label} ${status}`)
        for (const code of codes) {
          assert.equal(media.examples[code].value.error, code)
          assert.match(response.description, new RegExp(`\`${code}\``))
        }
      }
    }
  })

  it('is served at /openapi.json without a key; the docs page and its assets at /docs', async (t) => {
    const { app } = await buildTestApi(t, 'sqlite')
    const served = await app.inject({ url: '/openapi.json' })
    assert.equal(served.statusCode, 200)
    assert.match(String(served.headers['content-type']), /^application\/json/)
    assert.deepEqual(served.json(), document)
    const page = await app.inject({ url: '/docs' })
    assert.equal(page.statusCode, 200)
    assert.match(String(page.headers['content-type']), /^text\/html/)
    const assets = [...page.body.matchAll(/(?:src|href)="([^"]+)"/g)].map((match) => match[1]!)
    assert.ok(assets.length >= 4, page.body)
    for (const asset of assets) {
      assert.doesNotMatch(asset, /^(https?:)?\/\//, 'nothing is fetched from elsewhere')
      assert.equal((await app.inject({ url: asset })).statusCode, 200, asset)
    }
    const initializer = await app.inject({ url: '/docs/static/swagger-initializer.js' })
    assert.match(initializer.body, /validatorUrl: null/)
  })

  it("documents every route the app serves but HEAD, Swagger UI's own files and /admin/", async (t) => {
    const { database } = await buildTestApi(t, 'sqlite')
    const app = buildApp({ database })
    t.after(() => app.close())
    const served: string[] = []
    app.addHook('onRoute', (route) => {
      for (const method of [route.method].flat()) served.push(`${method} ${route.url}`)
    })
    await app.ready()
    const documented = new Set(operationsOf(document).keys())
    const asDocumented = (label: string) =>
      label.replace(/:(\w+)/g, '{$1}').replace(/\/\*$/, '/{file}')
    const left = served.filter(
      (label) =>
        !label.startsWith('HEAD ') &&
        !label.startsWith('GET /docs/') &&
        label !== 'GET /admin/' &&
        !documented.has(asDocumented(label)),
    )
    assert.deepEqual(left, [])
    // Those registered before the hook was added.
    for (const label of ['GET /openapi.json', 'GET /docs']) assert.ok(documented.has(label), label)
  })

  it('is committed as openapi.json, up to date (npm run openapi rewrites it)', async () => {
    const committed = await readFile(OPENAPI_FILE, 'utf8')
    assert.ok(committed === (await renderOpenApiFile()), 'openapi.json is stale: npm run openapi')
  })
})

/** A second app on the same database whose writes fail unexpectedly: for the 500 answers. */
async function buildBrokenWriteApp(t: TestContext, database: Database): Promise<FastifyInstance> {
  const fail = async (): Promise<never> => {
    throw new Error('unexpected')
  }
  const app = buildApp({ database: { ...database, write: fail, writeAtomic: fail } })
  t.after(() => app.close())
  return app
}

describe('the check of answers against the document', () => {
  const label = `GET ${API}/products/{id}`
  const example = () =>
    structuredClone(
      document.paths[`${API}/products/{id}`].get.responses['200'].content[JSON_MEDIA].example,
    )
  const answer = (statusCode: number, body: unknown) =>
    ({
      statusCode,
      headers: { 'content-type': JSON_MEDIA },
      body: JSON.stringify(body),
      json: () => body,
    }) as unknown as LightMyRequestResponse

  it('passes the documented example, and refuses a field the document does not declare', () => {
    const checker = new ConformanceChecker(document)
    checker.check(label, answer(200, example()))
    const extraOnProduct = example()
    extraOnProduct.data.store_id = 'default'
    assert.throws(() => checker.check(label, answer(200, extraOnProduct)), /store_id/)
    const extraOnVariant = example()
    extraOnVariant.data.variants[0].options_key = 'size=M'
    assert.throws(() => checker.check(label, answer(200, extraOnVariant)), /options_key/)
    const extraOnError = { error: 'not_found', message: 'No such product.', stack: 'at x' }
    assert.throws(() => checker.check(label, answer(404, extraOnError)), /stack/)
    // Options are the client's own keys: any is allowed.
    const moreOptions = example()
    moreOptions.data.variants[0].options.fabric = 'linen'
    checker.check(label, answer(200, moreOptions))
  })
})

const MERGE_PATCH = 'application/merge-patch+json'
const stale = { headers: { 'if-match': '"999"' } }
const ifNoneMatch = (value: string) => ({ headers: { 'if-none-match': value } })

describeEachDialect('answers conform to the OpenAPI document', (dialect) => {
  it('every route, every status it declares: the status is declared and the body matches its schema', async (t) => {
    const api = await buildTestApi(t, dialect)
    const checker = new ConformanceChecker(document)
    const readKey = await api.newKey({ scopes: ['read'] })
    const otherStore = await api.newKey({ store: 'store-b' })
    const unknownKey = `ck_${'A'.repeat(43)}`
    const send = (
      method: 'GET' | 'POST' | 'PATCH' | 'DELETE',
      url: string,
      options: {
        key?: string | null
        payload?: string
        contentType?: string
        headers?: Record<string, string>
      } = {},
    ) =>
      api.app.inject({
        method,
        url,
        headers: {
          ...(options.key === null ? {} : { authorization: `Bearer ${options.key ?? api.key}` }),
          ...(options.payload === undefined
            ? {}
            : { 'content-type': options.contentType ?? JSON_MEDIA }),
          ...options.headers,
        },
        ...(options.payload === undefined ? {} : { payload: options.payload }),
      })
    const check = async (label: string, response: Promise<LightMyRequestResponse>) =>
      checker.check(label, await response)

    const products = `${API}/products`
    const createLabel = `POST ${API}/products`
    const product = await api.createProduct({
      name: 'Crème Brûlée T-Shirt',
      price: 19.99,
      compare_at_price: 24.99,
      sku: 'TEE',
      description: 'Soft',
      barcode: '4006381333931',
      tax_rate: 20,
      status: 'active',
    })
    const json = (body: unknown) => ({ payload: JSON.stringify(body) })
    await check(createLabel, send('POST', products, json({ name: 'Mug' })))
    await check(createLabel, send('POST', products, json({ name: 'Cup', price: null, sku: null })))
    await check(createLabel, send('POST', products, { payload: '{"name": ' }))
    await check(createLabel, send('POST', products, { payload: '' }))
    await check(createLabel, send('POST', products, json({ name: 7, price: -1 })))
    await check(createLabel, send('POST', products, { ...json({ name: 'Mug' }), key: null }))
    await check(createLabel, send('POST', products, { ...json({ name: 'Mug' }), key: unknownKey }))
    await check(createLabel, send('POST', products, { ...json({ name: 'Mug' }), key: readKey }))
    await check(
      createLabel,
      send('POST', products, json({ name: 'x', description: 'x'.repeat(300 * 1024) })),
    )
    await check(
      createLabel,
      send('POST', products, { payload: 'name=Mug', contentType: 'text/plain' }),
    )

    const variants = `${API}/products/${product.id}/variants`
    const addLabel = `POST ${API}/products/{id}/variants`
    const red = { name: 'M / Red', sku: 'TEE-M-RED', options: { size: 'M', color: 'red' } }
    await check(addLabel, send('POST', variants, json(red)))
    await check(addLabel, send('POST', variants, json({ name: 'Plain', position: null })))
    await check(addLabel, send('POST', variants, json({ ...red, options: { size: 'L' } })))
    await check(addLabel, send('POST', variants, json({ ...red, sku: 'TEE-OTHER' })))
    await check(addLabel, send('POST', variants, { payload: '[' }))
    await check(addLabel, send('POST', variants, json({ name: '', options: { size: 3 } })))
    await check(addLabel, send('POST', variants, { ...json(red), key: null }))
    await check(addLabel, send('POST', variants, { ...json(red), key: readKey }))
    await check(addLabel, send('POST', `${API}/products/${randomUUID()}/variants`, json(red)))
    await check(addLabel, send('POST', variants, { ...json(red), key: otherStore }))
    await check(
      addLabel,
      send('POST', variants, json({ name: 'Big', options: { note: 'x'.repeat(300 * 1024) } })),
    )
    await check(
      addLabel,
      send('POST', variants, { payload: '<v/>', contentType: 'application/xml' }),
    )

    const getLabel = `GET ${API}/products/{id}`
    await check(getLabel, send('GET', `${API}/products/${product.id}`))
    await check(getLabel, send('GET', `${API}/products/${product.id}`, { key: readKey }))
    await check(getLabel, send('GET', `${API}/products/${randomUUID()}`))
    await check(getLabel, send('GET', `${API}/products/not-a-uuid`))
    await check(
      getLabel,
      send('GET', `${API}/products/${product.id}`, { headers: { 'if-none-match': '3' } }),
    )
    await check(getLabel, send('GET', `${API}/products/${product.id}`, { key: null }))

    const listVariantsLabel = `GET ${API}/products/{id}/variants`
    await check(listVariantsLabel, send('GET', variants))
    await check(listVariantsLabel, send('GET', variants, { key: otherStore }))
    await check(listVariantsLabel, send('GET', variants, { key: unknownKey }))

    const listLabel = `GET ${API}/products`
    const page = await send('GET', `${products}?limit=1`)
    checker.check(listLabel, page)
    await check(listLabel, send('GET', `${products}?cursor=${page.json().nextCursor}&limit=1`))
    await check(listLabel, send('GET', `${products}?status=archived`))
    await check(listLabel, send('GET', `${products}?limit=0`))
    await check(listLabel, send('GET', `${products}?cursor=nonsense`))
    await check(listLabel, send('GET', products, { key: null }))

    await check(listLabel, send('GET', `${products}?tag=x&vendor=y&product_type=z&slug=a`))

    await check(getLabel, send('GET', `${API}/products/${product.id}`, ifNoneMatch('*')))

    const patchLabel = `PATCH ${API}/products/{id}`
    const archived = await api.createProduct({ name: 'Old', status: 'archived' })
    const archivedUrl = `${API}/products/${archived.id}`
    const unknownProduct = `${API}/products/${randomUUID()}`
    const huge = json({ description: 'x'.repeat(300 * 1024) })
    await check(patchLabel, send('PATCH', archivedUrl, json({ tags: ['Old'], vendor: 'Acme' })))
    await check(
      patchLabel,
      send('PATCH', archivedUrl, { ...json({ sku: null }), contentType: MERGE_PATCH }),
    )
    await check(patchLabel, send('PATCH', archivedUrl, json({ name: null })))
    await check(patchLabel, send('PATCH', unknownProduct, json({})))
    await check(patchLabel, send('PATCH', archivedUrl, json({ status: 'active' })))
    await check(patchLabel, send('PATCH', archivedUrl, json({ slug: product.slug })))
    await check(patchLabel, send('PATCH', archivedUrl, { ...json({ name: 'New' }), ...stale }))
    await check(patchLabel, send('PATCH', archivedUrl, { ...json({ name: 'New' }), key: null }))
    await check(patchLabel, send('PATCH', archivedUrl, { ...json({ name: 'New' }), key: readKey }))
    await check(patchLabel, send('PATCH', archivedUrl, huge))
    await check(patchLabel, send('PATCH', archivedUrl, { payload: 'x', contentType: 'text/plain' }))

    const variant = (await send('GET', variants)).json().data[0]
    const variantUrl = `${variants}/${variant.id}`
    const variantLabel = `GET ${API}/products/{id}/variants/{variantId}`
    await check(variantLabel, send('GET', variantUrl))
    await check(variantLabel, send('GET', variantUrl, { headers: { 'if-none-match': '1' } }))
    await check(variantLabel, send('GET', variantUrl, ifNoneMatch(`"${variant.version}"`)))
    await check(variantLabel, send('GET', `${variants}/${randomUUID()}`))
    await check(variantLabel, send('GET', variantUrl, { key: null }))

    const patchVariantLabel = `PATCH ${API}/products/{id}/variants/{variantId}`
    await check(patchVariantLabel, send('PATCH', variantUrl, json({ weight_grams: 250 })))
    await check(patchVariantLabel, send('PATCH', variantUrl, json({ price: null })))
    await check(patchVariantLabel, send('PATCH', `${variants}/${randomUUID()}`, json({})))
    await check(patchVariantLabel, send('PATCH', variantUrl, { ...json({ name: 'L' }), ...stale }))
    await check(patchVariantLabel, send('PATCH', variantUrl, { ...json({}), key: null }))
    await check(patchVariantLabel, send('PATCH', variantUrl, { ...json({}), key: readKey }))
    await check(patchVariantLabel, send('PATCH', variantUrl, huge))
    await check(
      patchVariantLabel,
      send('PATCH', variantUrl, { payload: '<v/>', contentType: 'text/xml' }),
    )
    const plain = (await send('POST', variants, json({ name: 'Plain 2', sku: 'TEE-P2' }))).json()
    await check(
      patchVariantLabel,
      send('PATCH', `${variants}/${plain.data.id}`, json({ sku: variant.sku })),
    )

    const findLabel = `GET ${API}/variants`
    await check(findLabel, send('GET', `${API}/variants?sku=${variant.sku}`))
    await check(findLabel, send('GET', `${API}/variants`))
    await check(findLabel, send('GET', `${API}/variants?sku=x`, { key: null }))

    const deleteVariantLabel = `DELETE ${API}/products/{id}/variants/{variantId}`
    const plainUrl = `${variants}/${plain.data.id}`
    await check(deleteVariantLabel, send('DELETE', plainUrl, stale))
    await check(deleteVariantLabel, send('DELETE', plainUrl, { key: null }))
    await check(deleteVariantLabel, send('DELETE', plainUrl, { key: readKey }))
    await check(deleteVariantLabel, send('DELETE', plainUrl, { payload: '{' }))
    await check(deleteVariantLabel, send('DELETE', plainUrl, huge))
    await check(
      deleteVariantLabel,
      send('DELETE', plainUrl, { payload: 'x', contentType: 'text/plain' }),
    )
    await check(deleteVariantLabel, send('DELETE', plainUrl))
    await check(deleteVariantLabel, send('DELETE', plainUrl))

    const deleteLabel = `DELETE ${API}/products/{id}`
    await check(deleteLabel, send('DELETE', archivedUrl, stale))
    await check(deleteLabel, send('DELETE', archivedUrl, { key: null }))
    await check(deleteLabel, send('DELETE', archivedUrl, { key: readKey }))
    await check(deleteLabel, send('DELETE', archivedUrl, { payload: '{' }))
    await check(deleteLabel, send('DELETE', archivedUrl, huge))
    await check(
      deleteLabel,
      send('DELETE', archivedUrl, { payload: 'x', contentType: 'text/plain' }),
    )
    await check(deleteLabel, send('DELETE', archivedUrl))
    await check(deleteLabel, send('DELETE', archivedUrl))

    await check('GET /healthz', send('GET', '/healthz', { key: null }))
    const meLabel = `GET ${API}/me`
    await check(meLabel, send('GET', `${API}/me`, { key: readKey }))
    await check(meLabel, send('GET', `${API}/me`, { key: unknownKey }))
    await check('GET /', send('GET', '/', { key: null }))
    await check('GET /readyz', send('GET', '/readyz', { key: null }))

    const writeOnly = await api.newKey({ scopes: ['write'] })
    await check(listLabel, send('GET', products, { key: writeOnly }))

    // Webhook endpoints; a public IP address as host, which needs no resolver.
    const hooks = `${API}/webhook-endpoints`
    const hookBody = json({ url: 'https://93.184.215.14/hooks', events: ['*'] })
    const createHookLabel = `POST ${API}/webhook-endpoints`
    const created = await send('POST', hooks, hookBody)
    checker.check(createHookLabel, created)
    const hookUrl = `${hooks}/${created.json().data.id}`
    await check(createHookLabel, send('POST', hooks, json({ url: 'http://10.0.0.1/', events: [] })))
    await check(createHookLabel, send('POST', hooks, { ...hookBody, key: null }))
    await check(createHookLabel, send('POST', hooks, { ...hookBody, key: readKey }))
    await check(createHookLabel, send('POST', hooks, huge))
    await check(createHookLabel, send('POST', hooks, { payload: 'x', contentType: 'text/plain' }))
    const listHooksLabel = `GET ${API}/webhook-endpoints`
    await check(listHooksLabel, send('GET', hooks))
    await check(listHooksLabel, send('GET', hooks, { key: readKey }))
    await check(listHooksLabel, send('GET', hooks, { key: null }))
    const getHookLabel = `GET ${API}/webhook-endpoints/{id}`
    await check(getHookLabel, send('GET', hookUrl))
    await check(getHookLabel, send('GET', hookUrl, { key: otherStore }))
    await check(getHookLabel, send('GET', hookUrl, { key: readKey }))
    await check(getHookLabel, send('GET', hookUrl, { key: null }))
    const patchHookLabel = `PATCH ${API}/webhook-endpoints/{id}`
    await check(patchHookLabel, send('PATCH', hookUrl, json({ enabled: false })))
    await check(
      patchHookLabel,
      send('PATCH', hookUrl, { ...json({ description: null }), contentType: MERGE_PATCH }),
    )
    await check(patchHookLabel, send('PATCH', hookUrl, json({ url: 'https://127.0.0.1/' })))
    await check(patchHookLabel, send('PATCH', `${hooks}/${randomUUID()}`, json({})))
    await check(patchHookLabel, send('PATCH', hookUrl, { ...json({}), key: null }))
    await check(patchHookLabel, send('PATCH', hookUrl, { ...json({}), key: readKey }))
    await check(patchHookLabel, send('PATCH', hookUrl, huge))
    await check(patchHookLabel, send('PATCH', hookUrl, { payload: 'x', contentType: 'text/xml' }))
    const deleteHookLabel = `DELETE ${API}/webhook-endpoints/{id}`
    await check(deleteHookLabel, send('DELETE', hookUrl, { key: null }))
    await check(deleteHookLabel, send('DELETE', hookUrl, { key: readKey }))
    await check(deleteHookLabel, send('DELETE', hookUrl, { payload: '{' }))
    await check(deleteHookLabel, send('DELETE', hookUrl, huge))
    await check(
      deleteHookLabel,
      send('DELETE', hookUrl, { payload: 'x', contentType: 'text/plain' }),
    )
    await check(deleteHookLabel, send('DELETE', hookUrl))
    await check(deleteHookLabel, send('DELETE', hookUrl))
    const liveHook = (await send('POST', hooks, hookBody)).json().data
    // Imports and exports: a CSV body, a CSV answer.
    const importLabel = `POST ${API}/imports`
    const importUrl = `${API}/imports`
    const importGetLabel = `GET ${API}/imports/{id}`
    const exportLabel = `GET ${API}/exports/products.csv`
    const exportUrl = `${API}/exports/products.csv`
    const csvBody = { payload: 'Handle,Title\r\nmug,Mug\r\n', contentType: 'text/csv' }
    const accepted = await send('POST', importUrl, csvBody)
    checker.check(importLabel, accepted)
    const importId = accepted.json().data.id
    await check(importLabel, send('POST', importUrl, { ...csvBody, key: null }))
    await check(importLabel, send('POST', importUrl, { ...csvBody, key: readKey }))
    await check(importLabel, send('POST', importUrl, json({ name: 'Mug' })))
    const badKey = { 'idempotency-key': ' padded ' }
    await check(importLabel, send('POST', importUrl, { ...csvBody, headers: badKey }))
    await check(importGetLabel, send('GET', `${API}/imports/${importId}`))
    await check(importGetLabel, send('GET', `${API}/imports/${importId}`, { key: otherStore }))
    await check(importGetLabel, send('GET', `${API}/imports/${importId}`, { key: null }))
    const importsLabel = `GET ${API}/imports`
    await check(importsLabel, send('GET', importUrl))
    await check(importsLabel, send('GET', `${importUrl}?limit=0`))
    await check(importsLabel, send('GET', importUrl, { key: null }))
    await check(exportLabel, send('GET', exportUrl))
    await check(exportLabel, send('GET', exportUrl, { key: null }))
    const liveHookUrl = `${hooks}/${liveHook.id}`
    const deliveriesLabel = `GET ${API}/webhook-endpoints/{id}/deliveries`
    await check(deliveriesLabel, send('GET', `${liveHookUrl}/deliveries`))
    await check(deliveriesLabel, send('GET', `${liveHookUrl}/deliveries?cursor=x`))
    await check(deliveriesLabel, send('GET', `${hooks}/${randomUUID()}/deliveries`))
    await check(deliveriesLabel, send('GET', `${liveHookUrl}/deliveries`, { key: readKey }))
    await check(deliveriesLabel, send('GET', `${liveHookUrl}/deliveries`, { key: null }))
    await send('POST', products, json({ name: 'Delivered' }))
    const delivery = (await send('GET', `${liveHookUrl}/deliveries`)).json().data[0]
    const retryLabel = `POST ${API}/webhook-endpoints/{id}/deliveries/{deliveryId}/retry`
    const retryUrl = `${liveHookUrl}/deliveries/${delivery.id}/retry`
    await check(retryLabel, send('POST', retryUrl))
    await check(retryLabel, send('POST', `${liveHookUrl}/deliveries/${randomUUID()}/retry`))
    await check(retryLabel, send('POST', retryUrl, { key: readKey }))
    await check(retryLabel, send('POST', retryUrl, { key: null }))
    await check(retryLabel, send('POST', retryUrl, { payload: '{' }))
    await check(retryLabel, send('POST', retryUrl, huge))
    await check(retryLabel, send('POST', retryUrl, { payload: 'x', contentType: 'text/plain' }))

    // The operators' and the documents' routes.
    await check('GET /metrics', send('GET', '/metrics', { key: null }))
    const guarded = buildApp({ database: api.database, metricsToken: 'a-metrics-token' })
    t.after(() => guarded.close())
    await check('GET /metrics', guarded.inject({ url: '/metrics' }))
    const adminPage = await send('GET', '/admin', { key: null })
    checker.check('GET /admin', adminPage)
    const etag = String(adminPage.headers.etag)
    await check(
      'GET /admin',
      send('GET', '/admin', { key: null, headers: { 'if-none-match': etag } }),
    )
    const assetUrl = /src="([^"]+\.js)"/.exec(adminPage.body)![1]!
    const assetLabel = 'GET /admin/assets/{file}'
    const asset = await send('GET', assetUrl, { key: null })
    checker.check(assetLabel, asset)
    const assetTag = String(asset.headers.etag)
    await check(
      assetLabel,
      send('GET', assetUrl, { key: null, headers: { 'if-none-match': assetTag } }),
    )
    await check(assetLabel, send('GET', '/admin/assets/none.js', { key: null }))
    await check('GET /openapi.json', send('GET', '/openapi.json', { key: null }))
    await check('GET /docs', send('GET', '/docs', { key: null }))

    // Custom attribute definitions: every status of each route.
    const defs = `${API}/metafield-definitions`
    const createDefLabel = `POST ${API}/metafield-definitions`
    const listDefsLabel = `GET ${API}/metafield-definitions`
    const getDefLabel = `GET ${API}/metafield-definitions/{id}`
    const patchDefLabel = `PATCH ${API}/metafield-definitions/{id}`
    const deleteDefLabel = `DELETE ${API}/metafield-definitions/{id}`
    const defBody = {
      owner: 'product',
      namespace: 'custom',
      key: 'material',
      type: 'single_line_text_field',
      name: 'Material',
    }
    const defCreated = await send('POST', defs, json(defBody))
    checker.check(createDefLabel, defCreated)
    const def = defCreated.json().data
    const defUrl = `${defs}/${def.id}`
    const unknownDef = `${defs}/${randomUUID()}`
    await check(createDefLabel, send('POST', defs, json(defBody)))
    await check(createDefLabel, send('POST', defs, json({ ...defBody, owner: 'order' })))
    await check(createDefLabel, send('POST', defs, { ...json(defBody), key: null }))
    await check(createDefLabel, send('POST', defs, { ...json(defBody), key: readKey }))
    await check(createDefLabel, send('POST', defs, huge))
    await check(createDefLabel, send('POST', defs, { payload: 'x', contentType: 'text/plain' }))
    await check(listDefsLabel, send('GET', `${defs}?owner=product&limit=1`))
    await check(listDefsLabel, send('GET', `${defs}?cursor=nonsense`))
    await check(listDefsLabel, send('GET', defs, { key: null }))
    await check(getDefLabel, send('GET', defUrl))
    await check(getDefLabel, send('GET', defUrl, ifNoneMatch('"1"')))
    await check(getDefLabel, send('GET', defUrl, ifNoneMatch('3')))
    await check(getDefLabel, send('GET', unknownDef))
    await check(getDefLabel, send('GET', defUrl, { key: null }))
    await check(patchDefLabel, send('PATCH', defUrl, json({ name: 'Fabric', filterable: true })))
    await check(patchDefLabel, send('PATCH', defUrl, json({ type: 'json' })))
    await check(patchDefLabel, send('PATCH', unknownDef, json({ name: 'X' })))
    await check(patchDefLabel, send('PATCH', defUrl, { ...json({ name: 'X' }), ...stale }))
    await check(patchDefLabel, send('PATCH', defUrl, { ...json({ name: 'X' }), key: null }))
    await check(patchDefLabel, send('PATCH', defUrl, { ...json({ name: 'X' }), key: readKey }))
    await check(patchDefLabel, send('PATCH', defUrl, huge))
    await check(patchDefLabel, send('PATCH', defUrl, { payload: 'x', contentType: 'text/plain' }))
    await check(deleteDefLabel, send('DELETE', defUrl, stale))
    await check(deleteDefLabel, send('DELETE', defUrl, { key: null }))
    await check(deleteDefLabel, send('DELETE', defUrl, { key: readKey }))
    await check(deleteDefLabel, send('DELETE', defUrl, { payload: '{' }))
    await check(deleteDefLabel, send('DELETE', defUrl, huge))
    await check(deleteDefLabel, send('DELETE', defUrl, { payload: 'x', contentType: 'text/plain' }))
    await check(deleteDefLabel, send('DELETE', defUrl))
    await check(deleteDefLabel, send('DELETE', defUrl))

    // Unexpected failures: 500, with the error body.
    const broken = await buildBrokenWriteApp(t, api.database)
    for (const [label, url] of [
      [createLabel, products],
      [addLabel, variants],
      [patchLabel, `${API}/products/${product.id}`],
      [patchVariantLabel, variantUrl],
      [deleteVariantLabel, variantUrl],
      [deleteLabel, `${API}/products/${product.id}`],
      [createHookLabel, hooks],
      [patchHookLabel, `${hooks}/${liveHook.id}`],
      [deleteHookLabel, `${hooks}/${liveHook.id}`],
      [`POST ${API}/imports`, `${API}/imports`],
      [createDefLabel, defs],
      [patchDefLabel, unknownDef],
      [deleteDefLabel, unknownDef],
      [retryLabel, `${hooks}/${liveHook.id}/deliveries/${randomUUID()}/retry`],
    ] as const) {
      const response = await broken.inject({
        method: label.split(' ', 1)[0] as 'POST',
        url,
        headers: {
          authorization: `Bearer ${api.key}`,
          'content-type': label.endsWith('imports') ? 'text/csv' : JSON_MEDIA,
        },
        payload: label.endsWith('imports')
          ? 'Handle\r\ndoomed\r\n'
          : JSON.stringify({
              name: 'Doomed',
              ...(url.startsWith(hooks) && { url: 'https://93.184.215.14/', events: ['*'] }),
              ...(url.startsWith(defs) && defBody),
            }),
      })
      checker.check(label, response)
    }

    const collectionUrls = await exerciseCollections(
      check,
      send,
      { read: readKey, otherStore },
      product.id,
      broken,
      api.key,
    )

    // The event feed: a page, a bad limit, no key, and a cursor before pruned events.
    const eventsLabel = `GET ${API}/events`
    const events = `${API}/events`
    await check(eventsLabel, send('GET', events))
    await check(eventsLabel, send('GET', `${events}?limit=0`))
    await check(eventsLabel, send('GET', events, { key: null }))
    // The position before every event, as the feed of an empty store hands it out.
    const start = Buffer.from('e1.0.0').toString('base64url')
    await pruneEvents(api.database, new Date(Date.now() + 31 * 24 * 3600 * 1000), {
      retentionDays: 30,
      batchSize: 100,
    })
    await check(eventsLabel, send('GET', `${events}?after=${start}`))

    // The database gone: 503 everywhere that needs it.
    await api.database.close()
    await exerciseCollectionsGone(check, send, collectionUrls, product.id)
    await check(createLabel, send('POST', products, json({ name: 'Mug' })))
    await check(addLabel, send('POST', variants, json({ name: 'Blue' })))
    await check(getLabel, send('GET', `${API}/products/${product.id}`))
    await check(listVariantsLabel, send('GET', variants))
    await check(listLabel, send('GET', products))
    await check(patchLabel, send('PATCH', `${API}/products/${product.id}`, json({ name: 'X' })))
    await check(deleteLabel, send('DELETE', `${API}/products/${product.id}`))
    await check(variantLabel, send('GET', variantUrl))
    await check(createDefLabel, send('POST', defs, json(defBody)))
    await check(listDefsLabel, send('GET', defs))
    await check(getDefLabel, send('GET', unknownDef))
    await check(patchDefLabel, send('PATCH', unknownDef, json({ name: 'X' })))
    await check(deleteDefLabel, send('DELETE', unknownDef))
    await check(
      `POST ${API}/imports`,
      send('POST', `${API}/imports`, {
        payload: 'Handle\r\nx\r\n',
        contentType: 'text/csv',
      }),
    )
    await check(`GET ${API}/imports`, send('GET', `${API}/imports`))
    await check(`GET ${API}/imports/{id}`, send('GET', `${API}/imports/${product.id}`))
    await check(`GET ${API}/exports/products.csv`, send('GET', `${API}/exports/products.csv`))
    await check(patchVariantLabel, send('PATCH', variantUrl, json({ name: 'X' })))
    await check(deleteVariantLabel, send('DELETE', variantUrl))
    await check(findLabel, send('GET', `${API}/variants?sku=x`))
    await check(eventsLabel, send('GET', events))
    await check(createHookLabel, send('POST', hooks, hookBody))
    await check(listHooksLabel, send('GET', hooks))
    await check(getHookLabel, send('GET', `${hooks}/${liveHook.id}`))
    await check(patchHookLabel, send('PATCH', `${hooks}/${liveHook.id}`, json({ enabled: true })))
    await check(deliveriesLabel, send('GET', `${liveHookUrl}/deliveries`))
    await check(retryLabel, send('POST', retryUrl))
    await check(deleteHookLabel, send('DELETE', `${hooks}/${liveHook.id}`))
    await check('GET /readyz', send('GET', '/readyz', { key: null }))

    // Each declared status of the contract was seen, except those no request here can cause:
    // 403 on reads (every key has read or write, and reads take either), 500 on reads (nothing
    // to break without reaching into the queries), 503 on /healthz (only while shutting down;
    // see the restart tests), 409 on product creation (none of its conflicts exists yet), and
    // statuses of other features (429, 422), checked by their own tests.
    // The same goes for 409 on deletes (an Idempotency-Key still running: see its own tests).
    const unreachable = new Set([
      // A body over IMPORT_MAX_BYTES (64 MiB here): see the import tests, with a small limit.
      `POST ${API}/imports 413`,
      ...[
        listDefsLabel,
        getDefLabel,
        getLabel,
        listVariantsLabel,
        listLabel,
        variantLabel,
        findLabel,
        eventsLabel,
        `GET ${API}/imports`,
        `GET ${API}/imports/{id}`,
        `GET ${API}/exports/products.csv`,
      ].flatMap((label) => [`${label} 403`, `${label} 500`]),
      'GET /healthz 503',
      // Every valid key may ask who it is: no scope refuses it. Its 503 is the key lookup's
      // on a database that is gone, which errors.test.ts checks for every route.
      `GET ${API}/me 403`,
      `GET ${API}/me 500`,
      `GET ${API}/me 503`,
      // Only before `npm run build` has built the page, as the tests run after it.
      'GET /admin 404',
      `${listHooksLabel} 500`,
      `${getHookLabel} 500`,
      `${createLabel} 409`,
      `${createHookLabel} 409`,
      `${patchHookLabel} 409`,
      `${deleteHookLabel} 409`,
      `${deliveriesLabel} 500`,
      `${retryLabel} 409`,
      `${importLabel} 409`,
      `${deleteLabel} 409`,
      `${deleteVariantLabel} 409`,
      ...COLLECTION_UNREACHABLE,
      `${patchDefLabel} 409`,
      `${deleteDefLabel} 409`,
    ])
    const contractStatuses = new Set([
      '200',
      '304',
      '410',
      '412',
      '400',
      '401',
      '403',
      '404',
      '409',
      '413',
      '415',
      '500',
      '503',
    ])
    const missing: string[] = []
    for (const [label, operation] of operationsOf(document)) {
      for (const status of Object.keys(operation.responses)) {
        const key = `${label} ${status}`
        if (contractStatuses.has(status) && !unreachable.has(key) && !checker.seen.has(key)) {
          missing.push(key)
        }
      }
    }
    assert.deepEqual(missing, [], 'declared statuses no request exercised')
  })
})
