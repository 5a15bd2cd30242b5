import assert from 'node:assert/strict'
import { it } from 'node:test'
import { sql, type RawBuilder } from 'kysely'
import type { Database } from '../src/db/database.js'
import { metafieldFacetQuery } from '../src/attributes/metafield-filters.js'
import { withMetafields } from '../src/search/metafield-search.js'
import { matchingProductIds } from '../src/search/search-conditions.js'
import { readSearchRequest } from '../src/search/search-query.js'
import { facetQuery, sharedFacetsQuery } from '../src/search/search-facets.repository.js'
import { searchPageQuery } from '../src/search/search.repository.js'
import { filterKindOf } from '../src/search/search-filters.js'
import { refreshSearchDocuments } from '../src/search/documents/search-document.repository.js'
import { addVariant, buildTestApi, describeEachDialect } from './helpers.js'
import { newProductRow } from '../src/catalog/product-create-work.js'

/**
 * The planner serves the common shapes of a search from indexes: EXPLAIN (PostgreSQL, with
 * sequential scans priced out, since the test's tables are tiny) and EXPLAIN QUERY PLAN
 * (SQLite) of each name the index that must serve it.
 */
async function planOf(database: Database, query: RawBuilder<unknown>): Promise<string> {
  if (database.dialect === 'sqlite') {
    const plan = await sql<{ detail: string }>`explain query plan ${query}`.execute(database.kysely)
    return plan.rows.map((row) => row.detail).join('\n')
  }
  return database.kysely.transaction().execute(async (tx) => {
    await sql`set local enable_seqscan = off`.execute(tx)
    const plan = await sql<{ 'QUERY PLAN': string }>`explain ${query}`.execute(tx)
    return plan.rows.map((row) => row['QUERY PLAN']).join('\n')
  })
}

/**
 * A read of the products (`p`) other than the page's rows by their key: a search with `q` and
 * its facets read the documents alone (decision 0033).
 */
const READS_PRODUCTS = {
  sqlite:
    /SCAN p\b|SEARCH p USING (COVERING )?INDEX (?!sqlite_autoindex_products_1 \(store_id=\? AND id=\?\))/,
  postgres: /(?<!using products_pkey) on products p\b/,
}

const SHAPES: {
  query: Record<string, unknown>
  facet?: string
  uses: Record<string, RegExp>
  documentsOnly?: boolean
}[] = [
  {
    query: { q: 'blue shi' },
    uses: { sqlite: /VIRTUAL TABLE INDEX/, postgres: /product_search_words/ },
    documentsOnly: true,
  },
  {
    query: { q: 'blue', sort: 'price' },
    uses: { sqlite: /VIRTUAL TABLE INDEX/, postgres: /product_search_words/ },
    documentsOnly: true,
  },
  {
    // Filters on the document's fields: its matches from the word or from the tag's rows.
    query: { q: 'blue', sort: 'updated', status: 'active', tag: 'sale', price_max: '10' },
    uses: { sqlite: /VIRTUAL TABLE INDEX/, postgres: /on product_search s\b/ },
    documentsOnly: true,
  },
  {
    query: { sort: 'price' },
    uses: { sqlite: /products_by_price/, postgres: /products_by_price/ },
  },
  {
    query: { sort: '-price', status: 'draft' },
    uses: { sqlite: /products_by_price/, postgres: /products_by_price/ },
  },
  {
    query: { sort: 'updated' },
    uses: { sqlite: /products_by_updated/, postgres: /products_by_updated/ },
  },
  {
    query: { sort: 'oldest' },
    uses: { sqlite: /products_oldest/, postgres: /products_oldest/ },
  },
  {
    query: { 'option.Color': 'blue', tag: 'sale' },
    uses: { sqlite: /search_facets/, postgres: /search_facets_pkey/ },
  },
  {
    query: { q: 'blue', vendor: 'Acme' },
    facet: 'vendor',
    uses: { sqlite: /VIRTUAL TABLE INDEX/, postgres: /product_search_words/ },
    documentsOnly: true,
  },
  {
    query: { q: 'blue' },
    facet: 'option.Color',
    uses: { sqlite: /search_facets/, postgres: /search_facets_pkey/ },
    documentsOnly: true,
  },
  {
    query: { vendor: 'Acme' },
    facet: 'tag',
    uses: { sqlite: /product_search_by_vendor/, postgres: /product_search_by_vendor/ },
    documentsOnly: true,
  },
]

/** `count` products that match none of the shapes' words: the store is no longer tiny. */
async function addOthers(database: Database, count: number): Promise<void> {
  const db = database.kysely
  const now = Date.now()
  for (let start = 0; start < count; start += 250) {
    const rows = Array.from({ length: Math.min(250, count - start) }, (_, i) => {
      const n = start + i
      return newProductRow(
        'store-a',
        { name: `Red pants ${n}`, price: n % 100, vendor: `Vendor ${n % 50}` },
        [],
        new Date(now - n * 1000).toISOString(),
      )
    })
    await db
      .insertInto('products')
      .values(rows.map((row, i) => ({ ...row, slug: `red-pants-${start + i}` })))
      .execute()
    await refreshSearchDocuments(
      db,
      'store-a',
      rows.map((row) => row.id),
    )
  }
}

describeEachDialect('search plans', (dialect) => {
  it('serves the common shapes of a search from indexes', async (t) => {
    const api = await buildTestApi(t, dialect)
    for (let i = 0; i < 20; i++) {
      const product = await api.createProduct({
        name: `Blue shirt ${i}`,
        vendor: i % 2 ? 'Acme' : 'Globex',
        tags: ['sale'],
        price: i,
      })
      await addVariant(api, product.id, { name: 'v', options: { Color: 'Blue' } })
    }
    const { database } = api
    await addOthers(database, 3000)
    if (dialect === 'postgres') await sql`analyze`.execute(database.kysely)
    for (const shape of SHAPES) {
      const request = readSearchRequest(shape.query)
      const query = shape.facet
        ? facetQuery(
            database.kysely,
            'store-a',
            request,
            shape.facet,
            filterKindOf(shape.facet)!.facet!(shape.facet),
          )
        : searchPageQuery(database.kysely, 'store-a', request, undefined, 51)
      const plan = await planOf(database, query)
      assert.match(plan, shape.uses[dialect]!, `${JSON.stringify(shape)}:\n${plan}`)
      if (shape.documentsOnly)
        assert.doesNotMatch(plan, READS_PRODUCTS[dialect], `${JSON.stringify(shape)}:\n${plan}`)
    }
    // Facets counted together: the matches read once, their values found by an index.
    const facets = ['vendor', 'tag', 'option.Color'].map((name) => ({
      name,
      source: filterKindOf(name)!.facet!(name),
    }))
    const shared = sharedFacetsQuery(database.kysely, 'store-a', readSearchRequest({ q: 'blue' }), [
      ...facets,
      { name: 'price' },
    ])
    const plan = await planOf(database, shared)
    assert.match(
      plan,
      /SEARCH f USING (COVERING )?INDEX|Index (Only )?Scan using search_facets/,
      plan,
    )
    assert.doesNotMatch(plan, /SCAN f\b|Seq Scan on search_facets/, plan)
    assert.doesNotMatch(plan, READS_PRODUCTS[dialect], plan)
    assert.match(plan, dialect === 'sqlite' ? /VIRTUAL TABLE INDEX/ : /product_search_words/, plan)
  })
  it('prices parallel workers for counts over many rows, not for a page (PostgreSQL)', async (t) => {
    if (dialect !== 'postgres') return
    const api = await buildTestApi(t, dialect)
    // Every statement of the service's pool runs in a session that priced workers so (a page
    // with them ran 5 to 15 times slower at 1,000,000 products, decision 0057).
    const settings = await Promise.all(
      Array.from({ length: 3 }, () =>
        sql<{ cost: string }>`select current_setting('parallel_setup_cost') as cost`.execute(
          api.database.kysely,
        ),
      ),
    )
    for (const { rows } of settings) assert.equal(rows[0]!.cost, '10000')
  })

  it('serves metafield filters and facets from the filter index', async (t) => {
    const api = await buildTestApi(t, dialect)
    const res = await api.post('/metafield-definitions', {
      owner: 'product',
      namespace: 'custom',
      key: 'material',
      type: 'single_line_text_field',
      name: 'Material',
      filterable: true,
    })
    assert.equal(res.statusCode, 200, res.body)
    const definitionId = res.json().data.id as string
    for (let i = 0; i < 20; i++) {
      await api.createProduct({
        name: `Blue shirt ${i}`,
        metafields: { 'custom.material': i % 2 ? 'wool' : 'linen' },
      })
    }
    const { database } = api
    const db = database.kysely
    await addOthers(database, 3000)
    // The others hold one of 20 materials each: the definition has thousands of rows.
    const others = await db
      .selectFrom('products')
      .select('id')
      .where('name', 'like', 'Red pants%')
      .execute()
    for (let start = 0; start < others.length; start += 250) {
      await db
        .insertInto('metafield_values')
        .values(
          others.slice(start, start + 250).map(({ id }, i) => ({
            store_id: 'store-a',
            definition_id: definitionId,
            value: JSON.stringify(`material ${(start + i) % 20}`),
            product_id: id,
            record_id: id,
          })),
        )
        .execute()
    }
    if (dialect === 'postgres') await sql`analyze`.execute(db)
    const requestOf = (query: Record<string, unknown>) =>
      withMetafields(db, 'store-a', query, readSearchRequest(query))

    // A filter: one probe of an index (definition, value and product) per candidate.
    for (const query of [
      { 'metafield.custom.material': 'wool' },
      { q: 'blue', 'metafield.custom.material': 'wool' },
    ]) {
      const page = searchPageQuery(db, 'store-a', await requestOf(query), undefined, 51)
      const plan = await planOf(database, page)
      assert.match(
        plan,
        dialect === 'sqlite'
          ? /SEARCH mv .*INDEX \w+ \(store_id=\? AND definition_id=\? AND (value=\? AND product_id=\?|product_id=\? AND value=\?)\)/
          : /Index (Only )?Scan (Backward )?using metafield_values_(pkey|by_product)/,
        `${JSON.stringify(query)}:\n${plan}`,
      )
      assert.doesNotMatch(plan, /SCAN mv\b|Seq Scan on metafield_values/, plan)
    }

    // A facet over a search's matches: each match's values by one probe, not the definition's.
    const name = 'metafield.custom.material'
    for (const query of [{ q: 'blue' }, { q: 'blue', [name]: 'wool' }]) {
      const request = await requestOf(query)
      const matching = matchingProductIds(db, 'store-a', request, name)
      const plan = await planOf(
        database,
        metafieldFacetQuery('store-a', definitionId, matching, 20, 'product'),
      )
      assert.match(
        plan,
        dialect === 'sqlite'
          ? /SEARCH mv USING COVERING INDEX metafield_values_by_product \(store_id=\? AND definition_id=\? AND product_id=\?\)/
          : /Index Only Scan (Backward )?using metafield_values_by_product/,
        `${JSON.stringify(query)}:\n${plan}`,
      )
      assert.match(
        plan,
        dialect === 'sqlite' ? /VIRTUAL TABLE INDEX/ : /product_search_words/,
        plan,
      )
    }
    // The facet over every product of the store reads the definition's rows alone.
    assert.equal(
      matchingProductIds(db, 'store-a', await requestOf({ [name]: 'wool' }), name),
      undefined,
    )
    const every = await planOf(
      database,
      metafieldFacetQuery('store-a', definitionId, undefined, 20, 'product'),
    )
    assert.doesNotMatch(every, /product_search|products/, every)
    assert.doesNotMatch(every, /SCAN mv\b|Seq Scan on metafield_values/, every)
  })
})
