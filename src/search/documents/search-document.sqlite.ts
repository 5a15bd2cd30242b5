import { sql, type Compilable } from 'kysely'
import type { Executor } from '../../db/schema.js'
import { statement } from '../../db/statements.js'
import type { DocumentProduct, DocumentVariant, SearchDocument } from './search-document.js'

/**
 * The search documents' reads and writes on SQLite (decision 0033): statements of fixed
 * shape (statements.ts), compiled and prepared once, whatever the number of products: the
 * lists go as one JSON parameter (json_each). Building the query each time cost more than
 * SQLite takes to run it (decision 0017). The text stays folded in JavaScript
 * (search-document.ts).
 */

/** Raw SQL as a statement's query (its `db` compiles it). */
const raw = (db: Executor, query: ReturnType<typeof sql>): Compilable<unknown> => ({
  compile: () => query.compile(db),
})

const DOCUMENT_COLUMNS = [
  'id',
  'name',
  'slug',
  'description',
  'vendor',
  'product_type',
  'sku',
  'barcode',
  'tags',
] as const

/** The products of `ids` (a JSON array) that exist. */
const productsOf = statement((db: Executor, storeId: string, ids: string) =>
  db
    .selectFrom('products')
    .select(DOCUMENT_COLUMNS)
    .where('store_id', '=', storeId)
    .where(sql<boolean>`id in (select value from json_each(${ids}))`),
)

/** productsOf for one product: the shape of every single write. */
const productOf = statement((db: Executor, storeId: string, id: string) =>
  db
    .selectFrom('products')
    .select(DOCUMENT_COLUMNS)
    .where('store_id', '=', storeId)
    .where('id', '=', id),
)

/** The variants of the products of `ids` (a JSON array), by product, position, creation. */
const variantsOf = statement((db: Executor, storeId: string, ids: string) =>
  db
    .selectFrom('variants')
    .select(['product_id', 'name', 'sku', 'barcode', 'options'])
    .where('store_id', '=', storeId)
    .where(sql<boolean>`product_id in (select value from json_each(${ids}))`)
    .orderBy('product_id')
    .orderBy('position')
    .orderBy('created_at'),
)

/** variantsOf for one product. */
const variantsOfOne = statement((db: Executor, storeId: string, id: string) =>
  db
    .selectFrom('variants')
    .select(['product_id', 'name', 'sku', 'barcode', 'options'])
    .where('store_id', '=', storeId)
    .where('product_id', '=', id)
    .orderBy('position')
    .orderBy('created_at'),
)

/** The products of `ids` that exist, and their variants (by position, then creation). */
export async function readDocumentSources(
  db: Executor,
  storeId: string,
  ids: readonly string[],
): Promise<{ products: DocumentProduct[]; variants: DocumentVariant[] }> {
  if (ids.length === 1) {
    const id = ids[0]!
    return {
      products: await productOf(db, storeId, id),
      variants: await variantsOfOne(db, storeId, id),
    }
  }
  const json = JSON.stringify(ids)
  return {
    products: await productsOf(db, storeId, json),
    variants: await variantsOf(db, storeId, json),
  }
}

const deleteDocuments = statement((db: Executor, storeId: string, ids: string) =>
  db
    .deleteFrom('product_search')
    .where('store_id', '=', storeId)
    .where(sql<boolean>`product_id in (select value from json_each(${ids}))`),
)

/**
 * A document already there takes the new text, and keeps its row (`doc`, which the FTS index is
 * kept by); when the text is unchanged it is not written at all (its FTS entry would be).
 */
const REPLACE_CHANGED_TEXT = sql`on conflict (store_id, product_id) do update set
  name_words = excluded.name_words, other_words = excluded.other_words,
  name_key = excluded.name_key, codes = excluded.codes
  where (product_search.name_words, product_search.other_words, product_search.name_key,
    product_search.codes) <> (excluded.name_words, excluded.other_words, excluded.name_key,
    excluded.codes)`

/**
 * Inserts (or replaces) documents, given as a JSON array of [product, name_words,
 * other_words, name_key, codes], with their product's search keys (decision 0033), read from
 * the product's row in the statement: no write path passes them, none can forget them. An
 * existing document keeps its row (`doc`), as the FTS index is kept by it, and is not written
 * when unchanged (its FTS entry would be rewritten). `where true`: without a WHERE, SQLite
 * cannot tell an upsert's ON from a join's.
 */
const upsertDocuments = statement((db: Executor, storeId: string, documents: string) =>
  raw(
    db,
    sql`
      insert into product_search (store_id, product_id, name_words, other_words, name_key, codes,
        status, vendor, product_type, price_e4, created_at, updated_at)
      select p.store_id, p.id, d.value ->> 1, d.value ->> 2, d.value ->> 3, d.value ->> 4,
        p.status, p.vendor, p.product_type, p.price_e4, p.created_at, p.updated_at
      from json_each(${documents}) d
      cross join products p on p.store_id = ${storeId} and p.id = d.value ->> 0
      where true
      ${REPLACE_CHANGED_TEXT}`,
  ),
)

/** upsertDocuments for one document: its values as parameters. */
const upsertDocument = statement(
  (
    db: Executor,
    storeId: string,
    productId: string,
    nameWords: string,
    otherWords: string,
    nameKey: string,
    codes: string,
  ) =>
    raw(
      db,
      sql`
      insert into product_search (store_id, product_id, name_words, other_words, name_key, codes,
        status, vendor, product_type, price_e4, created_at, updated_at)
      select p.store_id, p.id, ${nameWords}, ${otherWords}, ${nameKey}, ${codes},
        p.status, p.vendor, p.product_type, p.price_e4, p.created_at, p.updated_at
      from products p where p.store_id = ${storeId} and p.id = ${productId}
      ${REPLACE_CHANGED_TEXT}`,
    ),
)

/**
 * The facet rows of the products of `facets` (a JSON object: product id -> [kind, name_key,
 * value_key, value] rows) that are no longer among them: those that stay are left in place.
 * Without its index named, SQLite's planner may read the store's rows through the primary
 * key (its store_id prefix), as it did for metafield_values (metafield-value.repository.ts).
 */
const deleteGoneFacets = statement((db: Executor, storeId: string, facets: string) =>
  raw(
    db,
    sql`
      delete from search_facets indexed by search_facets_by_product
      where store_id = ${storeId}
        and product_id in (select key from json_each(${facets}))
        and not exists (
          select 1 from json_each(${facets}, '$."' || search_facets.product_id || '"') f
          where f.value ->> 0 = search_facets.kind and f.value ->> 1 = search_facets.name_key
            and f.value ->> 2 = search_facets.value_key)`,
  ),
)

/**
 * Inserts the facet rows of `facets` (as deleteGoneFacets) not there yet; one there already
 * takes the value as written (its case may have changed).
 */
const upsertFacets = statement((db: Executor, storeId: string, facets: string) =>
  raw(
    db,
    sql`
      insert into search_facets (store_id, product_id, kind, name_key, value_key, value)
      select ${storeId}, p.key, f.value ->> 0, f.value ->> 1, f.value ->> 2, f.value ->> 3
      from json_each(${facets}) p, json_each(p.value) f
      where true
      on conflict (store_id, kind, name_key, value_key, product_id) do update set
        value = excluded.value
        where search_facets.value <> excluded.value`,
  ),
)

/**
 * Replaces the documents of `ids` by `documents` (those of ids without one are removed), and
 * their facet rows: those that stay are left, those gone deleted, the new ones inserted.
 * `fresh`: the products are new, with nothing to replace (a create).
 */
export async function writeDocumentsSqlite(
  db: Executor,
  storeId: string,
  ids: readonly string[],
  documents: readonly SearchDocument[],
  fresh: boolean,
): Promise<void> {
  const kept = new Set(documents.map((document) => document.productId))
  const gone = ids.filter((id) => !kept.has(id))
  if (gone.length > 0) await deleteDocuments(db, storeId, JSON.stringify(gone))
  if (documents.length === 1) {
    const d = documents[0]!
    await upsertDocument(db, storeId, d.productId, d.nameWords, d.otherWords, d.nameKey, d.codes)
  } else if (documents.length > 1) {
    const rows = documents.map((d) => [d.productId, d.nameWords, d.otherWords, d.nameKey, d.codes])
    await upsertDocuments(db, storeId, JSON.stringify(rows))
  }
  // Every product of `ids`: those without a document (gone) lose all their facet rows.
  const facets: Record<string, [string, string, string, string][]> = {}
  for (const id of ids) facets[id] = []
  let anyFacet = false
  for (const document of documents) {
    facets[document.productId] = document.facetValues.map((facet) => {
      anyFacet = true
      return [facet.kind, facet.nameKey, facet.valueKey, facet.value]
    })
  }
  const json = JSON.stringify(facets)
  if (!fresh) await deleteGoneFacets(db, storeId, json)
  if (anyFacet) await upsertFacets(db, storeId, json)
}
