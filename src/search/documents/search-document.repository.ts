import {
  searchableMetafieldTexts,
  searchableMetafieldTextsOf,
} from '../../attributes/values/metafield-search-text.js'
import { dialectOf } from '../../db/dialect.js'
import type { Executor } from '../../db/schema.js'
import { inList } from '../../db/values.js'
import { searchableTextOf, type MetafieldValues } from '../../attributes/values/metafield-values.js'
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
import { readDocumentSources, writeDocumentsSqlite } from './search-document.sqlite.js'

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
  const { products, variants } = await readDocumentSources(db, storeId, ids)
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
 * Replaces the documents of `ids` by `documents` (those of ids without one are removed).
 * `fresh`: the products are new, with nothing to replace (a create). On PostgreSQL, one
 * statement (search-document.postgres.ts); on SQLite, a few of fixed shape
 * (search-document.sqlite.ts).
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
  await writeDocumentsSqlite(db, storeId, ids, documents, fresh)
}
