import { inTransaction } from '../../db/transactions.js'
import type { Executor } from '../../db/schema.js'
import { searchableTextsOfVariant } from '../../attributes/values/metafield-search-text.js'
import { appendVariantPart } from './added-variant-document.repository.js'
import { buildSearchDocument, variantPart, type DocumentVariant } from './search-document.js'
import {
  refreshSearchDocuments,
  SEARCH_TEXT_SOURCES,
  writeSearchDocuments,
  type NewDocumentProduct,
} from './search-document.repository.js'

/**
 * A write's unit of work with the search documents of the products it changed written in the
 * same transaction, after it (`productIds` of its result): up to date at commit. On
 * PostgreSQL a unit that was one statement now runs in a transaction of its own. `locked`:
 * the work locks (or updates) the row of every product it answers, so the documents' read
 * needs no lock of its own (refreshSearchDocuments).
 */
export function withSearchDocuments<T>(
  storeId: string,
  productIds: (result: T) => readonly string[],
  work: (db: Executor) => Promise<T>,
  locked = false,
): (db: Executor) => Promise<T> {
  return (db) =>
    inTransaction(db, async (tx) => {
      const result = await work(tx)
      await refreshSearchDocuments(tx, storeId, productIds(result), locked)
      return result
    })
}

/**
 * A create's unit of work with its new product's document, built from the product it
 * answers (no variants yet) and the text sources' texts of it: written without reading the
 * product back.
 */
export function withNewProductDocument<T>(
  storeId: string,
  documentProduct: (result: T) => NewDocumentProduct,
  work: (db: Executor) => Promise<T>,
): (db: Executor) => Promise<T> {
  return (db) =>
    inTransaction(db, async (tx) => {
      const result = await work(tx)
      const product = documentProduct(result)
      const extra: string[] = []
      for (const source of SEARCH_TEXT_SOURCES) {
        extra.push(...(await source.ofNewProduct(tx, storeId, product)))
      }
      await writeSearchDocuments(
        tx,
        storeId,
        [product.id],
        [buildSearchDocument(product, [], extra)],
        true,
      )
      return result
    })
}

/** A variant just added, as its add answers it. */
export interface AddedVariant extends Omit<DocumentVariant, 'product_id'> {
  productId: string
  metafields: unknown
}

/**
 * An add's unit of work with its product's document brought up to date: when the variant
 * went last in its product's order (`last`: no position sent, so one more than the highest)
 * and has no searchable custom attribute, its part is appended to the stored document
 * (appendVariantPart), the same document as a full rebuild (buildSearchDocument puts the
 * variants last), at a cost that does not grow with the product's variants. Otherwise the
 * document is rebuilt (refreshSearchDocuments): a variant placed before others, or one whose
 * searchable texts go among the extra texts, before the variants' (decision 0056). The add
 * updated the product's row: it is locked.
 */
export function withAddedVariantDocument<T>(
  storeId: string,
  added: (result: T) => AddedVariant,
  last: boolean,
  work: (db: Executor) => Promise<T>,
): (db: Executor) => Promise<T> {
  return (db) =>
    inTransaction(db, async (tx) => {
      const result = await work(tx)
      const variant = added(result)
      if (last && (await searchableTextsOfVariant(tx, storeId, variant.metafields)).length === 0) {
        await appendVariantPart(tx, storeId, variant.productId, variantPart(variant))
      } else {
        await refreshSearchDocuments(tx, storeId, [variant.productId], true)
      }
      return result
    })
}
