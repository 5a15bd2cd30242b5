import assert from 'node:assert/strict'
import { it } from 'node:test'
import {
  addVariant,
  buildTestApi,
  describeEachDialect,
  expectError,
  type TestApi,
} from './helpers.js'
import { readFeed } from './event-helpers.js'

/** Collections (part 4): the records, their kinds, rules, handles, members and events. */

async function createCollection(api: TestApi, body: Record<string, unknown>) {
  const res = await api.post('/collections', body)
  assert.equal(res.statusCode, 200, res.body)
  return res.json().data
}

async function memberIds(api: TestApi, id: string, query = ''): Promise<string[]> {
  const ids: string[] = []
  let cursor: string | null = null
  do {
    const res = await api.get(
      `/collections/${id}/products?limit=2${query}${cursor ? `&cursor=${cursor}` : ''}`,
    )
    assert.equal(res.statusCode, 200, res.body)
    const body = res.json()
    ids.push(...body.data.map((p: { id: string }) => p.id))
    cursor = body.nextCursor
  } while (cursor !== null)
  return ids
}

/**
 * The store's events of `type`, at least `count` of them: readFeed waits for those that
 * PostgreSQL's feed holds back while an older transaction (of any test on the server) runs.
 */
async function eventsOf(api: TestApi, type: string, count: number) {
  return (await readFeed(api, { query: `type=${type}&limit=500`, atLeast: count })) as {
    type: string
    data: { object: any; previousAttributes?: any }
  }[]
}

describeEachDialect('collections', (dialect) => {
  it('creates a manual collection with a handle from its title, and answers it', async (t) => {
    const api = await buildTestApi(t, dialect)
    const created = await createCollection(api, { title: '  Summer Sale ' })
    assert.equal(created.title, 'Summer Sale')
    assert.equal(created.handle, 'summer-sale')
    assert.equal(created.kind, 'manual')
    assert.equal(created.rules, null)
    assert.equal(created.disjunctive, false)
    assert.equal(created.sortOrder, 'manual')
    assert.equal(created.productsCount, 0)
    assert.equal(created.version, 1)
    assert.equal(created.description, null)
    const again = await createCollection(api, { title: 'Summer sale' })
    assert.equal(again.handle, 'summer-sale-2')
    const read = await api.get(`/collections/${created.id}`)
    assert.equal(read.statusCode, 200)
    assert.deepEqual(read.json().data, created)
    assert.equal(read.headers.etag, '"1"')
    const notModified = await api.request('GET', `/collections/${created.id}`, {
      headers: { 'if-none-match': '"1"' },
    })
    assert.equal(notModified.statusCode, 304)
    const [event] = await eventsOf(api, 'collection.created', 1)
    assert.deepEqual(event!.data.object, created)
  })

  it('refuses a hand-set handle another collection has, but not a product slug', async (t) => {
    const api = await buildTestApi(t, dialect)
    await api.createProduct({ name: 'Shoes' })
    const shoes = await createCollection(api, { title: 'Shoes', handle: 'shoes' })
    assert.equal(shoes.handle, 'shoes')
    expectError(
      await api.post('/collections', { title: 'X', handle: 'shoes' }),
      409,
      'duplicate_handle',
    )
    const other = await createCollection(api, { title: 'Other' })
    expectError(
      await api.patch(`/collections/${other.id}`, { handle: 'shoes' }),
      409,
      'duplicate_handle',
    )
    // A generated handle never takes one set by hand.
    const generated = await createCollection(api, { title: 'Shoes' })
    assert.equal(generated.handle, 'shoes-2')
  })

  it('keeps the kind of a collection and the sort orders each kind takes', async (t) => {
    const api = await buildTestApi(t, dialect)
    const rules = [{ field: 'vendor', relation: 'equals', value: 'Acme' }]
    const body = expectError(
      await api.post('/collections', { title: 'S', rules: [] }),
      400,
      'validation_failed',
    )
    assert.equal(body.details![0]!.field, 'rules')
    const manualOnSmart = expectError(
      await api.post('/collections', { title: 'S', rules, sort_order: 'manual' }),
      400,
      'validation_failed',
    )
    assert.equal(manualOnSmart.details![0]!.field, 'sort_order')
    const smart = await createCollection(api, { title: 'S', rules })
    assert.equal(smart.kind, 'smart')
    assert.equal(smart.sortOrder, 'newest')
    assert.deepEqual(smart.rules, rules)
    const manual = await createCollection(api, { title: 'M', rules: null })
    assert.equal(manual.kind, 'manual')
    for (const patch of [{ rules: null }, { rules: [] }, { sort_order: 'manual' }]) {
      expectError(await api.patch(`/collections/${smart.id}`, patch), 400, 'validation_failed')
    }
    const rulesOnManual = expectError(
      await api.patch(`/collections/${manual.id}`, { rules }),
      400,
      'validation_failed',
    )
    assert.equal(rulesOnManual.details![0]!.field, 'rules')
    const sorted = await api.patch(`/collections/${manual.id}`, { sort_order: '-price' })
    assert.equal(sorted.statusCode, 200, sorted.body)
    assert.equal(sorted.json().data.sortOrder, '-price')
    assert.equal(sorted.json().data.version, 2)
  })

  it('names each bad rule part as rules[i].field, relation or value', async (t) => {
    const api = await buildTestApi(t, dialect)
    const cases: [unknown, string][] = [
      [{ field: 'colour', relation: 'equals', value: 'x' }, 'rules[1].field'],
      [{ field: 'tag', relation: 'contains', value: 'x' }, 'rules[1].relation'],
      [{ field: 'price', relation: 'equals', value: '10' }, 'rules[1].value'],
      [{ field: 'price', relation: 'contains', value: 10 }, 'rules[1].relation'],
      [{ field: 'status', relation: 'equals', value: 'gone' }, 'rules[1].value'],
      [{ field: 'name', relation: 'greater_than', value: 'a' }, 'rules[1].relation'],
      [{ field: 'vendor', relation: 'equals', value: 3 }, 'rules[1].value'],
      [{ field: 'vendor', relation: 'equals', value: '   ' }, 'rules[1].value'],
      [{ field: 'option.Size', relation: 'not_equals', value: 'M' }, 'rules[1].relation'],
      [{ field: 'option.', relation: 'equals', value: 'M' }, 'rules[1].field'],
      [{ field: 'metafield.custom.material', relation: 'equals', value: 'wool' }, 'rules[1].field'],
      ['vendor', 'rules[1]'],
      [{ relation: 'equals', value: 'x' }, 'rules[1].field'],
    ]
    const good = { field: 'vendor', relation: 'equals', value: 'Acme' }
    for (const [rule, field] of cases) {
      const body = expectError(
        await api.post('/collections', { title: 'S', rules: [good, rule] }),
        400,
        'validation_failed',
      )
      assert.deepEqual(
        body.details!.map((d) => d.field),
        [field],
        `${JSON.stringify(rule)}: ${JSON.stringify(body.details)}`,
      )
    }
    const many = Array.from({ length: 61 }, () => good)
    const tooMany = expectError(
      await api.post('/collections', { title: 'S', rules: many }),
      400,
      'validation_failed',
    )
    assert.equal(tooMany.details![0]!.field, 'rules')
    assert.equal(
      (await createCollection(api, { title: 'S', rules: many.slice(1) })).rules.length,
      60,
    )
    const list = await api.get('/collections')
    assert.equal(list.json().data.length, 1, 'nothing half written by the refused creates')
  })

  it('matches every rule field and relation, text without case, null fields in not_*', async (t) => {
    const api = await buildTestApi(t, dialect)
    const tee = await api.createProduct({
      name: 'Crème T-Shirt',
      vendor: 'ACME',
      product_type: 'Shirts',
      tags: ['Summer', 'cotton'],
      price: 19.99,
      status: 'active',
    })
    const mug = await api.createProduct({ name: 'Mug', price: 20, tags: ['kitchen'] })
    await addVariant(api, tee.id, { name: 'M / Blue', options: { Size: 'M', Color: 'Blue' } })
    await addVariant(api, mug.id, { name: 'Big', options: { Size: 'XL' } })
    const cases: [Record<string, unknown>, string[]][] = [
      [{ field: 'name', relation: 'equals', value: 'CRÈME t-shirt' }, [tee.id]],
      [{ field: 'name', relation: 'not_equals', value: 'mug' }, [tee.id]],
      [{ field: 'name', relation: 'contains', value: 'ME T' }, [tee.id]],
      [{ field: 'name', relation: 'not_contains', value: 'shirt' }, [mug.id]],
      [{ field: 'name', relation: 'starts_with', value: 'crème' }, [tee.id]],
      [{ field: 'name', relation: 'ends_with', value: 'UG' }, [mug.id]],
      [{ field: 'name', relation: 'contains', value: '%' }, []],
      [{ field: 'vendor', relation: 'equals', value: 'acme' }, [tee.id]],
      [{ field: 'vendor', relation: 'not_equals', value: 'acme' }, [mug.id]],
      [{ field: 'vendor', relation: 'not_contains', value: 'zzz' }, [tee.id, mug.id]],
      [{ field: 'vendor', relation: 'starts_with', value: 'a' }, [tee.id]],
      [{ field: 'product_type', relation: 'ends_with', value: 'IRTS' }, [tee.id]],
      [{ field: 'product_type', relation: 'not_equals', value: 'shirts' }, [mug.id]],
      [{ field: 'tag', relation: 'equals', value: 'summer' }, [tee.id]],
      [{ field: 'tag', relation: 'not_equals', value: 'SUMMER' }, [mug.id]],
      [{ field: 'price', relation: 'equals', value: 20 }, [mug.id]],
      [{ field: 'price', relation: 'less_than', value: 20 }, [tee.id]],
      [{ field: 'price', relation: 'greater_than', value: 19.99 }, [mug.id]],
      [{ field: 'price', relation: 'greater_than', value: 20 }, []],
      [{ field: 'status', relation: 'equals', value: 'draft' }, [mug.id]],
      [{ field: 'status', relation: 'not_equals', value: 'draft' }, [tee.id]],
      [{ field: 'option.color', relation: 'equals', value: 'blue' }, [tee.id]],
      [{ field: 'option.SIZE', relation: 'equals', value: 'xl' }, [mug.id]],
      [{ field: 'option.Size', relation: 'equals', value: 'S' }, []],
    ]
    for (const [rule, expected] of cases) {
      const collection = await createCollection(api, { title: 'Rule', rules: [rule] })
      assert.deepEqual(
        (await memberIds(api, collection.id)).sort(),
        [...expected].sort(),
        JSON.stringify(rule),
      )
      assert.equal(collection.productsCount, expected.length, JSON.stringify(rule))
    }
    const all = [
      { field: 'price', relation: 'less_than', value: 100 },
      { field: 'tag', relation: 'equals', value: 'kitchen' },
    ]
    const and = await createCollection(api, { title: 'And', rules: all })
    assert.deepEqual(await memberIds(api, and.id), [mug.id])
    const any = [
      { field: 'tag', relation: 'equals', value: 'kitchen' },
      { field: 'vendor', relation: 'equals', value: 'acme' },
    ]
    const or = await createCollection(api, { title: 'Or', rules: any, disjunctive: true })
    assert.deepEqual((await memberIds(api, or.id)).sort(), [tee.id, mug.id].sort())
  })

  it('keeps smart members exact at every product and variant write, with events', async (t) => {
    const api = await buildTestApi(t, dialect)
    const blue = await createCollection(api, {
      title: 'Blue',
      rules: [{ field: 'option.Color', relation: 'equals', value: 'blue' }],
    })
    const cheap = await createCollection(api, {
      title: 'Cheap',
      rules: [{ field: 'price', relation: 'less_than', value: 10 }],
    })
    const product = await api.createProduct({ name: 'Hat', price: 5 })
    assert.deepEqual(await memberIds(api, cheap.id), [product.id])
    assert.deepEqual(await memberIds(api, blue.id), [])
    const variant = await addVariant(api, product.id, { name: 'Blue', options: { Color: 'Blue' } })
    assert.deepEqual(await memberIds(api, blue.id), [product.id])
    const repainted = await api.patch(`/products/${product.id}/variants/${variant.id}`, {
      options: { Color: 'Red' },
    })
    assert.equal(repainted.statusCode, 200, repainted.body)
    assert.deepEqual(await memberIds(api, blue.id), [])
    await api.patch(`/products/${product.id}/variants/${variant.id}`, {
      options: { Color: 'BLUE' },
    })
    assert.deepEqual(await memberIds(api, blue.id), [product.id])
    const dearer = await api.patch(`/products/${product.id}`, { price: 12 })
    assert.equal(dearer.statusCode, 200, dearer.body)
    assert.deepEqual(await memberIds(api, cheap.id), [])
    const gone = await api.delete(`/products/${product.id}/variants/${variant.id}`)
    assert.equal(gone.statusCode, 200, gone.body)
    assert.deepEqual(await memberIds(api, blue.id), [])
    const changes = (await eventsOf(api, 'collection.products_changed', 6)).map(
      (e) => e.data.object,
    )
    assert.deepEqual(changes, [
      { collectionId: cheap.id, added: [product.id], removed: [] },
      { collectionId: blue.id, added: [product.id], removed: [] },
      { collectionId: blue.id, added: [], removed: [product.id] },
      { collectionId: blue.id, added: [product.id], removed: [] },
      { collectionId: cheap.id, added: [], removed: [product.id] },
      { collectionId: blue.id, added: [], removed: [product.id] },
    ])
    // A rules change recomputes; the collection's version moves, its members are not a field.
    const patched = await api.patch(`/collections/${cheap.id}`, {
      rules: [{ field: 'price', relation: 'greater_than', value: 10 }],
    })
    assert.equal(patched.statusCode, 200, patched.body)
    assert.equal(patched.json().data.productsCount, 1)
    assert.equal(patched.json().data.version, 2)
    const last = (await eventsOf(api, 'collection.products_changed', 7)).at(-1)!
    assert.deepEqual(last.data.object, { collectionId: cheap.id, added: [product.id], removed: [] })
    const [updated] = await eventsOf(api, 'collection.updated', 1)
    assert.deepEqual(updated!.data.previousAttributes, {
      rules: [{ field: 'price', relation: 'less_than', value: 10 }],
    })
    // A deleted product leaves every collection, with an event for each.
    await api.delete(`/products/${product.id}`)
    assert.deepEqual(await memberIds(api, cheap.id), [])
    assert.deepEqual((await eventsOf(api, 'collection.products_changed', 8)).at(-1)!.data.object, {
      collectionId: cheap.id,
      added: [],
      removed: [product.id],
    })
  })

  it('adds, moves and removes products of a manual collection', async (t) => {
    const api = await buildTestApi(t, dialect)
    const [a, b, c, d] = [
      await api.createProduct({ name: 'A' }),
      await api.createProduct({ name: 'B' }),
      await api.createProduct({ name: 'C' }),
      await api.createProduct({ name: 'D' }),
    ]
    const collection = await createCollection(api, { title: 'Picks' })
    const add = await api.post(`/collections/${collection.id}/products`, {
      product_ids: [c!.id, a!.id, c!.id],
    })
    assert.equal(add.statusCode, 200, add.body)
    assert.equal(add.json().data.productsCount, 2)
    assert.equal(add.json().data.version, 1)
    await api.post(`/collections/${collection.id}/products`, { product_ids: [b!.id, a!.id, d!.id] })
    assert.deepEqual(await memberIds(api, collection.id), [c!.id, a!.id, b!.id, d!.id])
    const moved = await api.patch(`/collections/${collection.id}/products/${d!.id}`, {
      position: 1,
    })
    assert.equal(moved.statusCode, 200, moved.body)
    assert.deepEqual(await memberIds(api, collection.id), [d!.id, c!.id, a!.id, b!.id])
    await api.patch(`/collections/${collection.id}/products/${d!.id}`, { position: 99 })
    assert.deepEqual(await memberIds(api, collection.id), [c!.id, a!.id, b!.id, d!.id])
    await api.patch(`/collections/${collection.id}/products/${b!.id}`, { position: 2 })
    assert.deepEqual(await memberIds(api, collection.id), [c!.id, b!.id, a!.id, d!.id])
    const removed = await api.delete(`/collections/${collection.id}/products/${b!.id}`)
    assert.equal(removed.statusCode, 200, removed.body)
    assert.equal(removed.json().data.productsCount, 3)
    await api.delete(`/products/${c!.id}`)
    assert.deepEqual(await memberIds(api, collection.id), [a!.id, d!.id])
    await api.patch(`/collections/${collection.id}/products/${d!.id}`, { position: 1 })
    assert.deepEqual(await memberIds(api, collection.id), [d!.id, a!.id])
    expectError(
      await api.delete(`/collections/${collection.id}/products/${b!.id}`),
      404,
      'not_found',
    )
    const changes = (await eventsOf(api, 'collection.products_changed', 4)).map(
      (e) => e.data.object,
    )
    assert.deepEqual(changes, [
      { collectionId: collection.id, added: [c!.id, a!.id], removed: [] },
      { collectionId: collection.id, added: [b!.id, d!.id], removed: [] },
      { collectionId: collection.id, added: [], removed: [b!.id] },
      { collectionId: collection.id, added: [], removed: [c!.id] },
    ])
  })

  it('refuses bad product ids by index, another store s products, and smart collections', async (t) => {
    const api = await buildTestApi(t, dialect)
    const mine = await api.createProduct({ name: 'Mine' })
    const otherKey = await api.newKey({ store: 'store-b' })
    const theirs = await api.createProduct({ name: 'Theirs' }, otherKey)
    const collection = await createCollection(api, { title: 'Picks' })
    const body = expectError(
      await api.post(`/collections/${collection.id}/products`, {
        product_ids: [mine.id, theirs.id, 'nope', 7],
      }),
      400,
      'validation_failed',
    )
    assert.deepEqual(
      body.details!.map((d) => d.field),
      ['product_ids[1]', 'product_ids[2]', 'product_ids[3]'],
    )
    assert.equal((await api.get(`/collections/${collection.id}`)).json().data.productsCount, 0)
    const tooMany = Array.from({ length: 251 }, () => mine.id)
    expectError(
      await api.post(`/collections/${collection.id}/products`, { product_ids: tooMany }),
      400,
      'validation_failed',
    )
    expectError(
      await api.post(`/collections/${collection.id}/products`, { product_ids: [] }),
      400,
      'validation_failed',
    )
    const smart = await createCollection(api, {
      title: 'Smart',
      rules: [{ field: 'name', relation: 'contains', value: 'i' }],
    })
    expectError(
      await api.post(`/collections/${smart.id}/products`, { product_ids: [mine.id] }),
      409,
      'smart_collection',
    )
    expectError(
      await api.patch(`/collections/${smart.id}/products/${mine.id}`, { position: 1 }),
      409,
      'smart_collection',
    )
    expectError(
      await api.delete(`/collections/${smart.id}/products/${mine.id}`),
      409,
      'smart_collection',
    )
    expectError(await api.get(`/collections/${collection.id}`, otherKey), 404, 'not_found')
  })

  it('pages products in each sort order, with the status filter', async (t) => {
    const api = await buildTestApi(t, dialect)
    const specs = [
      { name: 'banana', price: 3, status: 'active' },
      { name: 'Apple', price: 5, status: 'draft' },
      { name: 'cherry', price: 1, status: 'active' },
      { name: 'apple', price: 5, status: 'active' },
      { name: 'Date', price: 3, status: 'archived' },
    ]
    const products = []
    for (const spec of specs) products.push(await api.createProduct(spec))
    const collection = await createCollection(api, {
      title: 'All',
      rules: [{ field: 'price', relation: 'greater_than', value: 0 }],
    })
    const byId = new Map(products.map((p) => [p.id, p]))
    const newestFirst = [...products].reverse()
    const expected: Record<string, typeof products> = {
      newest: newestFirst,
      oldest: [...products],
      name: [...newestFirst].sort((x, y) =>
        x.name.toLowerCase() < y.name.toLowerCase()
          ? -1
          : x.name.toLowerCase() > y.name.toLowerCase()
            ? 1
            : 0,
      ),
      '-name': [...newestFirst].sort((x, y) =>
        x.name.toLowerCase() > y.name.toLowerCase()
          ? -1
          : x.name.toLowerCase() < y.name.toLowerCase()
            ? 1
            : 0,
      ),
      price: [...newestFirst].sort((x, y) => x.price - y.price),
      '-price': [...newestFirst].sort((x, y) => y.price - x.price),
    }
    for (const [sort, order] of Object.entries(expected)) {
      const res = await api.patch(`/collections/${collection.id}`, { sort_order: sort })
      assert.equal(res.statusCode, 200, res.body)
      assert.deepEqual(
        (await memberIds(api, collection.id)).map((id) => byId.get(id)!.name),
        order.map((p) => p.name),
        sort,
      )
      assert.deepEqual(
        (await memberIds(api, collection.id, '&status=active')).map((id) => byId.get(id)!.name),
        order.filter((p) => p.status === 'active').map((p) => p.name),
        `${sort} active`,
      )
    }
    // A cursor of another sort order is refused.
    await api.patch(`/collections/${collection.id}`, { sort_order: 'name' })
    const first = (await api.get(`/collections/${collection.id}/products?limit=1`)).json()
    await api.patch(`/collections/${collection.id}`, { sort_order: 'price' })
    expectError(
      await api.get(`/collections/${collection.id}/products?cursor=${first.nextCursor}`),
      400,
      'validation_failed',
    )
    // The copied sort keys follow the product.
    await api.patch(`/products/${products[2]!.id}`, { name: 'Aardvark', price: 9 })
    assert.equal(byId.get((await memberIds(api, collection.id)).at(-1)!)!.id, products[2]!.id)
  })

  it('lists collections newest first with a cursor and the handle filter; deletes keep products', async (t) => {
    const api = await buildTestApi(t, dialect)
    const made = []
    for (const title of ['One', 'Two', 'Three']) made.push(await createCollection(api, { title }))
    const page = await api.get('/collections?limit=2')
    assert.deepEqual(
      page.json().data.map((c: { title: string }) => c.title),
      ['Three', 'Two'],
    )
    const next = await api.get(`/collections?limit=2&cursor=${page.json().nextCursor}`)
    assert.deepEqual(
      next.json().data.map((c: { title: string }) => c.title),
      ['One'],
    )
    assert.equal(next.json().nextCursor, null)
    const byHandle = await api.get('/collections?handle=two')
    assert.deepEqual(
      byHandle.json().data.map((c: { id: string }) => c.id),
      [made[1]!.id],
    )
    const product = await api.createProduct({ name: 'Kept' })
    await api.post(`/collections/${made[0]!.id}/products`, { product_ids: [product.id] })
    expectError(
      await api.delete(`/collections/${made[0]!.id}`, { headers: { 'if-match': '"2"' } }),
      412,
      'precondition_failed',
    )
    const deleted = await api.delete(`/collections/${made[0]!.id}`, {
      headers: { 'if-match': '"1"' },
    })
    assert.equal(deleted.statusCode, 200, deleted.body)
    expectError(await api.get(`/collections/${made[0]!.id}`), 404, 'not_found')
    assert.equal((await api.get(`/products/${product.id}`)).statusCode, 200)
    // Waits for the event that PostgreSQL's feed holds back while another test's transaction runs.
    assert.equal((await eventsOf(api, 'collection.deleted', 1)).length, 1)
    const types = (await readFeed(api, { query: 'limit=500' })).map((e) => e.type as string)
    assert.equal(types.at(-1), 'collection.deleted')
    const stale = await api.patch(
      `/collections/${made[1]!.id}`,
      { title: 'Deux' },
      {
        headers: { 'if-match': '"7"' },
      },
    )
    expectError(stale, 412, 'precondition_failed')
  })

  it('webhook endpoints subscribe to the collection events', async (t) => {
    const api = await buildTestApi(t, dialect, { webhooks: { allowPrivate: true } })
    const events = [
      'collection.created',
      'collection.updated',
      'collection.deleted',
      'collection.products_changed',
    ]
    const res = await api.post('/webhook-endpoints', { url: 'https://hooks.example.com/c', events })
    assert.equal(res.statusCode, 200, res.body)
    assert.deepEqual(res.json().data.events, events)
  })

  it('replays a create with its Idempotency-Key', async (t) => {
    const api = await buildTestApi(t, dialect)
    const send = () =>
      api.request('POST', '/collections', {
        body: { title: 'Once' },
        headers: { 'idempotency-key': 'collection-once' },
      })
    const first = await send()
    const second = await send()
    assert.equal(first.statusCode, 200, first.body)
    assert.equal(second.headers['idempotent-replayed'], 'true')
    assert.deepEqual(second.json(), first.json())
    assert.equal((await api.get('/collections')).json().data.length, 1)
  })
})
