import assert from 'node:assert/strict'
import { it } from 'node:test'
import { csv, importText } from './import-helpers.js'
import { addVariant, buildTestApi, describeEachDialect, type TestApi } from './helpers.js'

/**
 * The fields a search with `q` sorts, filters and counts on are its documents' copies of the
 * products' (decision 0033): every kind of write is seen in them at commit.
 */

type Json = Record<string, any>

async function list(api: TestApi, query: string): Promise<Json> {
  const res = await api.get(`/products?${query}`)
  assert.equal(res.statusCode, 200, `?${query} answered ${res.statusCode}: ${res.body}`)
  return res.json()
}

const names = async (api: TestApi, query: string) =>
  (await list(api, query)).data.map((product: Json) => product.name)

const counts = (facet: { value: string; count: number }[]) =>
  Object.fromEntries(facet.map(({ value, count }) => [value, count]))

describeEachDialect(
  'search with q: the documents keep the fields it sorts and filters on',
  (dialect) => {
    it('sees every kind of write at commit, in sorts, filters and facets', async (t) => {
      const api = await buildTestApi(t, dialect)
      const acme = await api.createProduct({
        name: 'Acme lamp',
        price: 10,
        vendor: 'Acme',
        product_type: 'Light',
        status: 'active',
      })
      const bolt = await api.createProduct({
        name: 'Bolt lamp',
        price: 20,
        vendor: 'Globex',
        product_type: 'Light',
        status: 'draft',
      })
      const cove = await api.createProduct({
        name: 'Cove lamp',
        price: 30,
        vendor: 'Acme',
        status: 'active',
      })
      await api.createProduct({ name: 'Desk', price: 1, vendor: 'Acme', status: 'active' })
      // A create: its fields as written.
      assert.deepEqual(await names(api, 'q=lamp&sort=price'), [
        'Acme lamp',
        'Bolt lamp',
        'Cove lamp',
      ])
      assert.deepEqual(await names(api, 'q=lamp&sort=oldest'), [
        'Acme lamp',
        'Bolt lamp',
        'Cove lamp',
      ])
      assert.deepEqual(await names(api, 'q=lamp&status=draft'), ['Bolt lamp'])
      assert.deepEqual(await names(api, 'q=lamp&product_type=Light&sort=-price'), [
        'Bolt lamp',
        'Acme lamp',
      ])

      // A PATCH of the price: the sort, the bounds and the price facet.
      assert.equal((await api.patch(`/products/${bolt.id}`, { price: 5 })).statusCode, 200)
      assert.deepEqual(await names(api, 'q=lamp&sort=price'), [
        'Bolt lamp',
        'Acme lamp',
        'Cove lamp',
      ])
      assert.deepEqual(await names(api, 'q=lamp&price_max=6'), ['Bolt lamp'])
      let answer = await list(api, 'q=lamp&facets=price,vendor,status')
      assert.deepEqual(answer.facets.price, { min: 5, max: 30 })

      // A PATCH of the vendor and of the product type: filters and facets.
      await api.patch(`/products/${acme.id}`, { vendor: 'Globex', product_type: 'Desk light' })
      assert.deepEqual(await names(api, 'q=lamp&vendor=Acme'), ['Cove lamp'])
      assert.deepEqual(await names(api, 'q=lamp&product_type=Desk%20light'), ['Acme lamp'])
      answer = await list(api, 'q=lamp&facets=vendor,product_type&vendor=Globex')
      assert.deepEqual(counts(answer.facets.vendor), { Globex: 2, Acme: 1 })
      assert.deepEqual(counts(answer.facets.product_type), { Light: 1, 'Desk light': 1 })

      // A status transition: the filter and the facet.
      await api.patch(`/products/${bolt.id}`, { status: 'active' })
      await api.patch(`/products/${cove.id}`, { status: 'archived' })
      assert.deepEqual(await names(api, 'q=lamp&status=active&sort=name'), [
        'Acme lamp',
        'Bolt lamp',
      ])
      answer = await list(api, 'q=lamp&facets=status')
      assert.deepEqual(counts(answer.facets.status), { active: 2, archived: 1 })

      // A PATCH of the name: the name sorts.
      await api.patch(`/products/${cove.id}`, { name: 'Aardvark lamp' })
      assert.deepEqual(await names(api, 'q=lamp&sort=name'), [
        'Aardvark lamp',
        'Acme lamp',
        'Bolt lamp',
      ])

      // A variant added: the product's updatedAt moves (the updated sort) and its options count.
      await addVariant(api, bolt.id, { name: 'Red', options: { Color: 'Red' } })
      assert.deepEqual((await names(api, 'q=lamp&sort=updated'))[0], 'Bolt lamp')
      answer = await list(api, 'q=lamp&facets=option.Color')
      assert.deepEqual(counts(answer.facets['option.Color']), { Red: 1 })
      await api.patch(`/products/${acme.id}`, { description: 'Brass' })
      assert.deepEqual((await names(api, 'q=lamp&sort=updated'))[0], 'Acme lamp')

      // An import's update: its vendor and status, by handle.
      const summary = await importText(
        api.database,
        'store-a',
        csv('Handle,Title,Vendor,Status', `${bolt.slug},Bolt lamp,Initech,ARCHIVED`),
      )
      assert.equal(summary.errors?.length ?? 0, 0, JSON.stringify(summary))
      assert.deepEqual(await names(api, 'q=lamp&vendor=Initech'), ['Bolt lamp'])
      assert.deepEqual(await names(api, 'q=lamp&status=archived&sort=name'), [
        'Aardvark lamp',
        'Bolt lamp',
      ])
      assert.deepEqual((await names(api, 'q=lamp&sort=updated'))[0], 'Bolt lamp')
      answer = await list(api, 'q=lamp&facets=vendor')
      assert.deepEqual(counts(answer.facets.vendor), { Acme: 1, Globex: 1, Initech: 1 })

      // An import's create: its fields as written, with or without a variant.
      const created = await importText(
        api.database,
        'store-a',
        csv(
          'Handle,Title,Vendor,Type,Status,Variant Price',
          'eel-lamp,Eel lamp,Umbrella,Light,ACTIVE,',
          'fen-lamp,Fen lamp,Umbrella,,DRAFT,2',
        ),
      )
      assert.equal(created.errors?.length ?? 0, 0, JSON.stringify(created))
      assert.deepEqual(await names(api, 'q=lamp&vendor=Umbrella&sort=-name'), [
        'Fen lamp',
        'Eel lamp',
      ])
      assert.deepEqual(await names(api, 'q=lamp&product_type=Light&status=active'), ['Eel lamp'])
      // Created last, at one time (ties newest first).
      assert.deepEqual((await names(api, 'q=lamp&sort=oldest')).slice(-2), ['Fen lamp', 'Eel lamp'])
      answer = await list(api, 'q=lamp&vendor=Umbrella&facets=status')
      assert.deepEqual(counts(answer.facets.status), { active: 1, draft: 1 })
      await api.delete(`/products/${(await list(api, 'q=lamp&vendor=Umbrella')).data[0].id}`)
      await api.delete(`/products/${(await list(api, 'q=lamp&vendor=Umbrella')).data[0].id}`)

      // A filter only the products hold (slug) reads them: same answers.
      assert.deepEqual(await names(api, `q=lamp&slug=${acme.slug}&facets=vendor`), ['Acme lamp'])

      // A delete: gone from every sort and count.
      await api.delete(`/products/${acme.id}`)
      assert.deepEqual(await names(api, 'q=lamp&sort=price'), ['Bolt lamp', 'Aardvark lamp'])
      answer = await list(api, 'q=lamp&facets=vendor')
      assert.deepEqual(counts(answer.facets.vendor), { Acme: 1, Initech: 1 })
    })
  },
)
