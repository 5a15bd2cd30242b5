import type { Executor } from '../../db/schema.js'
import { searchableTextsOfVariant } from '../../attributes/values/metafield-search-text.js'
import { appendVariantPart } from './added-variant-document.repository.js'
import { buildSearchDocument, variantPart, type DocumentVariant } from './search-document.js'
import type { StoredProduct } from './search-document.postgres.js'
import {
  refreshSearchDocuments,
  SEARCH_TEXT_SOURCES,
  writeSearchDocuments,
  writeStoredDocuments,
  type NewDocumentProduct,
} from './search-document.repository.js'

/** A variant just added, as its add answers it. */
export interface AddedVariant extends Omit<DocumentVariant, 'product_id'> {
  productId: string
  metafields: unknown
}

/**
 * What a write of products did, as their search documents need to know it; each kind takes
 * the cheapest way to the same document as a full rebuild (buildSearchDocument):
 * - `created`: one new product (no variants yet), built from what its create wrote, without
 *   reading it back;
 * - `added-variant`: a variant added last in its product's order (`last`: no position sent)
 *   and without searchable custom attributes has its part appended to the stored document,
 *   at a cost that does not grow with the product's variants (decision 0056); otherwise the
 *   document is rebuilt;
 * - `stored`: one product as the write's own statement read it after its row lock
 *   (PostgreSQL's one-statement PATCHes, decision 0034);
 * - `written`: products read back as they now stand (those gone lose their document);
 *   `locked`: the write locked, updated or inserted each product's row, so no lock is taken
 *   to read.
 */
export type DocumentChange =
  | { kind: 'created'; product: NewDocumentProduct }
  | { kind: 'added-variant'; variant: AddedVariant; last: boolean }
  | { kind: 'stored'; product: StoredProduct }
  | { kind: 'written'; ids: readonly string[]; locked: boolean }

/**
 * Brings the search documents of a write's products up to date, in its transaction, after
 * its rows are written: exact at commit, whatever the path.
 */
export async function writeDocuments(
  tx: Executor,
  storeId: string,
  change: DocumentChange,
): Promise<void> {
  switch (change.kind) {
    case 'created': {
      const extra: string[] = []
      for (const source of SEARCH_TEXT_SOURCES) {
        extra.push(...(await source.ofNewProduct(tx, storeId, change.product)))
      }
      const document = buildSearchDocument(change.product, [], extra)
      return writeSearchDocuments(tx, storeId, [change.product.id], [document], true)
    }
    case 'added-variant': {
      const { variant } = change
      const searchable = await searchableTextsOfVariant(tx, storeId, variant.metafields)
      if (change.last && searchable.length === 0) {
        return appendVariantPart(tx, storeId, variant.productId, variantPart(variant))
      }
      // The add updated its product's row: it is locked.
      return refreshSearchDocuments(tx, storeId, [variant.productId], true)
    }
    case 'stored':
      return writeStoredDocuments(tx, storeId, [change.product.id], [change.product])
    case 'written':
      return refreshSearchDocuments(tx, storeId, change.ids, change.locked)
  }
}
