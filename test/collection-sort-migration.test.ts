import assert from 'node:assert/strict'
import { it } from 'node:test'
import * as postgresSortIndexes from '../src/db/migrations/postgres/2026-11-30T06-collection-sort-indexes.js'
import * as sqliteSortIndexes from '../src/db/migrations/sqlite/2026-11-30T06-collection-sort-indexes.js'
import { buildTestApi, describeEachDialect, type TestApi } from './helpers.js'

/**
 * Migration 2026-11-30T06 (decision 0055) on a store that already has members: each row goes
 * to the sort index of its collection's order, so every collection still lists its products.
 */

const MIGRATION = { sqlite: sqliteSortIndexes, postgres: postgresSortIndexes }

async function names(api: TestApi, id: string): Promise<string[]> {
  const res = await api.get(`/collections/${id}/products?limit=50`)
  assert.equal(res.statusCode, 200, res.body)
  return res.json().data.map((p: { name: string }) => p.name)
}

describeEachDialect('migration 2026-11-30T06: sorted_by of existing members', (dialect) => {
  it('rows written before it are listed in each collection order after it', async (t) => {
    const api = await buildTestApi(t, dialect)
    const made = []
    for (const [name, price] of [
      ['b', 2],
      ['C', 1],
      ['a', 3],
    ] as const) {
      made.push(await api.createProduct({ name, price, tags: ['x'] }))
    }
    const create = async (body: Record<string, unknown>) => {
      const res = await api.post('/collections', body)
      assert.equal(res.statusCode, 200, res.body)
      return res.json().data.id as string
    }
    const rules = [{ field: 'tag', relation: 'equals', value: 'x' }]
    const byName = await create({ title: 'By name', rules, sort_order: 'name' })
    const newest = await create({ title: 'Newest', rules })
    const byHand = await create({ title: 'By hand' })
    const byPrice = await create({ title: 'By price', sort_order: '-price' })
    for (const id of [byHand, byPrice]) {
      const ids = [made[1]!.id, made[0]!.id, made[2]!.id]
      const res = await api.post(`/collections/${id}/products`, { product_ids: ids })
      assert.equal(res.statusCode, 200, res.body)
    }
    const expected = {
      [byName]: ['a', 'b', 'C'],
      [newest]: ['a', 'C', 'b'],
      [byHand]: ['C', 'b', 'a'],
      [byPrice]: ['a', 'b', 'C'],
    }
    for (const [id, order] of Object.entries(expected))
      assert.deepEqual(await names(api, id), order)
    // Back to the rows as they were before the migration (no sorted_by), then up again.
    const migration = MIGRATION[dialect]
    await migration.down(api.database.kysely)
    await migration.up(api.database.kysely)
    for (const [id, order] of Object.entries(expected))
      assert.deepEqual(await names(api, id), order)
  })
})
