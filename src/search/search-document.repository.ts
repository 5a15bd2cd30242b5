import {
  searchableMetafieldTexts,
  searchableMetafieldTextsOf,
} from '../attributes/metafield-search-text.js'
import { sql } from 'kysely'
import { dialectOf } from '../db/dialect.js'
import type { Executor } from '../db/schema.js'
import { inList, inPieces } from '../db/values.js'
import { searchableTextOf, type MetafieldValues } from '../attributes/metafield-values.js'
import {
  buildSearchDocument,
  type DocumentProduct,
  type SearchDocument,
} from './search-document.js'
import {
  readDocumentProducts,
  writeDocumentsInOneStatement,
  type StoredProduct,
} from './search-document.postgres.js'

/**
 * More text of the products to search (the searchable custom attributes). A source answers
 * the texts of those of `productIds` that have any, as they now stand; and those of a
 * product just created (no variants yet) from what its create wrote, without reading it
 * back. Sources add themselves to SEARCH_TEXT_SOURCES.
 */
export interface SearchTextSource {
  ofProducts(
    db: Executor,
    storeId: string,
    productIds: readonly string[],
  ): Promise<Map<string, string[]>>
  ofNewProduct(db: Executor, storeId: string, product: NewDocumentProduct): Promise<string[]>
  /** The same as ofProducts, from the products' rows and their variants' already read. */
  ofStoredProducts(
    db: Executor,
    storeId: string,
    products: readonly StoredProduct[],
  ): Promise<Map<string, string[]>>
}

/** A product just created, as its create answers it: its fields and its custom attributes. */
export interface NewDocumentProduct extends DocumentProduct {
  metafields: MetafieldValues
}

export const SEARCH_TEXT_SOURCES: SearchTextSource[] = [
  {
    ofProducts: searchableMetafieldTexts,
    ofStoredProducts: searchableMetafieldTextsOf,
    ofNewProduct: async (db, storeId, product) => {
      const text = await searchableTextOf(db, storeId, 'product', product.metafields)
      return text === '' ? [] : [text]
    },
  },
]

/**
 * Writes the search documents of the store's `productIds` as the products and their variants
 * now stand (and removes those of products that are gone): called by every write that
 * touches them, in its transaction, after its changes. On PostgreSQL the products are locked
 * first, and read after the lock, so that of two transactions changing one product the later
 * writes the document with both changes; `locked`: the write has locked them already (it
 * updated or locked each product's row), so they are read at once.
 */
export async function refreshSearchDocuments(
  db: Executor,
  storeId: string,
  productIds: readonly string[],
  locked = false,
): Promise<void> {
  if (productIds.length === 0) return
  const ids = [...new Set(productIds)]
  if (dialectOf(db).concurrentWriters && !locked) {
    await dialectOf(db)
      .forUpdate(
        db
          .selectFrom('products')
          .select('id')
          .where('store_id', '=', storeId)
          .where(inList(db, 'id', 'uuid', ids)),
      )
      .execute()
  }
  if (dialectOf(db).oneStatementWrites) {
    await refreshInTwoStatements(db, storeId, ids)
    return
  }
  const products = await db
    .selectFrom('products')
    .select([
      'id',
      'name',
      'slug',
      'description',
      'vendor',
      'product_type',
      'sku',
      'barcode',
      'tags',
    ])
    .where('store_id', '=', storeId)
    .where(inList(db, 'id', 'uuid', ids))
    .execute()
  const variants = await db
    .selectFrom('variants')
    .select(['product_id', 'name', 'sku', 'barcode', 'options'])
    .where('store_id', '=', storeId)
    .where(inList(db, 'product_id', 'uuid', ids))
    .orderBy('product_id')
    .orderBy('position')
    .orderBy('created_at')
    .execute()
  const extras = await Promise.all(
    SEARCH_TEXT_SOURCES.map((source) => source.ofProducts(db, storeId, ids)),
  )
  const byProduct = new Map<string, typeof variants>()
  for (const variant of variants) {
    const list = byProduct.get(variant.product_id)
    if (list) list.push(variant)
    else byProduct.set(variant.product_id, [variant])
  }
  const documents = products.map((product) =>
    buildSearchDocument(
      product,
      byProduct.get(product.id) ?? [],
      extras.flatMap((extra) => extra.get(product.id) ?? []),
    ),
  )
  await writeSearchDocuments(db, storeId, ids, documents)
}

/**
 * PostgreSQL's refresh (the products locked): one statement reads the products, their
 * variants and the definition stamp, the documents are built here, one statement writes
 * them (writeStoredDocuments).
 */
async function refreshInTwoStatements(
  db: Executor,
  storeId: string,
  ids: readonly string[],
): Promise<void> {
  await writeStoredDocuments(db, storeId, ids, await readDocumentProducts(db, storeId, ids))
}

/**
 * PostgreSQL: replaces the documents of `ids` by those of `products`, as read after their
 * lock (readDocumentProducts, or a write's own statement that read them so): the text sources
 * take their texts from the rows read; one statement writes them.
 */
export async function writeStoredDocuments(
  db: Executor,
  storeId: string,
  ids: readonly string[],
  products: readonly StoredProduct[],
): Promise<void> {
  const extras = await Promise.all(
    SEARCH_TEXT_SOURCES.map((source) => source.ofStoredProducts(db, storeId, products)),
  )
  const documents = products.map((product) =>
    buildSearchDocument(
      product,
      product.variants.map((variant) => ({ ...variant, product_id: product.id })),
      extras.flatMap((extra) => extra.get(product.id) ?? []),
    ),
  )
  await writeDocumentsInOneStatement(db, storeId, ids, documents)
}

/**
 * Inserts (or replaces) SQLite documents with their product's search keys (decision 0033),
 * read from the product's row in the statement: no write path passes them, none can forget
 * them. One statement per piece; an existing document keeps its row (`doc`), as the FTS
 * index is kept by it, and is not written when unchanged (its FTS entry would be rewritten).
 */
async function insertDocuments(
  db: Executor,
  storeId: string,
  documents: readonly SearchDocument[],
): Promise<void> {
  const values = documents.map(
    (d) => sql`(${d.productId}, ${d.nameWords}, ${d.otherWords}, ${d.nameKey}, ${d.codes})`,
  )
  // `where true`: without a WHERE, SQLite cannot tell an upsert's ON from a join's.
  await sql`
    insert into product_search (store_id, product_id, name_words, other_words, name_key, codes,
      status, vendor, product_type, price_e4, created_at, updated_at)
    select p.store_id, p.id, d.column2, d.column3, d.column4, d.column5,
      p.status, p.vendor, p.product_type, p.price_e4, p.created_at, p.updated_at
    from (values ${sql.join(values)}) d
    join products p on p.store_id = ${storeId} and p.id = d.column1
    where true
    on conflict (store_id, product_id) do update set
      name_words = excluded.name_words, other_words = excluded.other_words,
      name_key = excluded.name_key, codes = excluded.codes
      where (product_search.name_words, product_search.other_words, product_search.name_key,
        product_search.codes) <> (excluded.name_words, excluded.other_words, excluded.name_key,
        excluded.codes)
  `.execute(db)
}

/**
 * Replaces the documents of `ids` by `documents` (those of ids without one are removed).
 * `fresh`: the products are new, with nothing to replace (a create). On PostgreSQL, one
 * statement (search-document.postgres.ts).
 */
export async function writeSearchDocuments(
  db: Executor,
  storeId: string,
  ids: readonly string[],
  documents: readonly SearchDocument[],
  fresh = false,
): Promise<void> {
  if (dialectOf(db).oneStatementWrites) {
    await writeDocumentsInOneStatement(db, storeId, ids, documents)
    return
  }
  const kept = new Set(documents.map((document) => document.productId))
  const gone = ids.filter((id) => !kept.has(id))
  if (gone.length > 0) {
    await db
      .deleteFrom('product_search')
      .where('store_id', '=', storeId)
      .where(inList(db, 'product_id', 'uuid', gone))
      .execute()
  }
  if (!fresh) {
    await db
      .deleteFrom('search_facets')
      .where('store_id', '=', storeId)
      .where(inList(db, 'product_id', 'uuid', ids))
      .execute()
  }
  for (const piece of inPieces(documents, 5)) await insertDocuments(db, storeId, piece)
  const facetRows = documents.flatMap((document) =>
    document.facetValues.map((facet) => ({
      store_id: storeId,
      product_id: document.productId,
      kind: facet.kind,
      name_key: facet.nameKey,
      value_key: facet.valueKey,
      value: facet.value,
    })),
  )
  for (const piece of inPieces(facetRows, 6)) {
    await db.insertInto('search_facets').values(piece).execute()
  }
}
