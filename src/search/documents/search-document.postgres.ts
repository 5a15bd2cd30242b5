import { sql } from 'kysely'
import type { Executor } from '../../db/schema.js'
import { sqlStatement } from '../../db/statements.js'
import type { DocumentProduct, DocumentVariant, SearchDocument } from './search-document.js'

/**
 * The search documents' reads and writes on PostgreSQL, one statement each (decision 0034):
 * round trips are what a write pays there. The text stays folded in JavaScript
 * (search-document.ts); these only carry rows in and documents out.
 */

/** A variant as the read answers it: what its document needs, and its custom attributes. */
export interface StoredVariant extends Omit<DocumentVariant, 'product_id'> {
  metafields: unknown
}

/** A product as the read answers it, with its variants in their order and the store's stamp. */
export interface StoredProduct extends DocumentProduct {
  metafields: unknown
  variants: StoredVariant[]
  /** The store's metafield definition stamp (definition-cache.ts); null while it never had one. */
  definition_stamp: string | null
}

/**
 * The products of `ids` that exist, each with its variants (by position, then creation) and
 * the store's definition stamp: one statement in place of a read of the products, one of the
 * variants and one of the stamp. The caller has locked the products: the statement's snapshot
 * is taken after the lock, so it sees every change committed before.
 */
export async function readDocumentProducts(
  db: Executor,
  storeId: string,
  ids: readonly string[],
): Promise<StoredProduct[]> {
  return documentProducts(db, storeId, ids)
}

const documentProducts = sqlStatement(
  (storeId: string, ids: readonly string[]) => sql<StoredProduct>`
    select p.id, p.name, p.slug, p.description, p.vendor, p.product_type, p.sku, p.barcode,
      p.tags, p.metafields,
      coalesce((
        select json_agg(json_build_object(
          'name', v.name, 'sku', v.sku, 'barcode', v.barcode, 'options', v.options,
          'metafields', v.metafields
        ) order by v.position, v.created_at)
        from variants v where v.store_id = p.store_id and v.product_id = p.id
      ), '[]'::json) as variants,
      (select token from metafield_definition_stamps where store_id = ${storeId}) as definition_stamp
    from products p
    where p.store_id = ${storeId} and p.id = any(${ids}::uuid[])
  `,
)

/**
 * Replaces the documents of `ids` by `documents` in one statement: the document rows of ids
 * without one removed, the others upserted; of the facet rows, those no longer in a document
 * removed and the others upserted. The removals and the upserts touch different rows, so
 * the order in which PostgreSQL runs the statement's parts does not matter. A document or a
 * facet row that is already as written is left alone (no new row version, no index write).
 */
export async function writeDocumentsInOneStatement(
  db: Executor,
  storeId: string,
  ids: readonly string[],
  documents: readonly SearchDocument[],
): Promise<void> {
  const documentRows = documents.map((document) => ({
    product_id: document.productId,
    name_words: document.nameWords,
    other_words: document.otherWords,
    name_key: document.nameKey,
    codes: document.codes,
  }))
  const facetRows = documents.flatMap((document) =>
    document.facetValues.map((facet) => ({
      product_id: document.productId,
      kind: facet.kind,
      name_key: facet.nameKey,
      value_key: facet.valueKey,
      value: facet.value,
    })),
  )
  await writeDocuments(db, storeId, ids, JSON.stringify(documentRows), JSON.stringify(facetRows))
}

const writeDocuments = sqlStatement(
  (storeId: string, ids: readonly string[], documentRows: string, facetRows: string) => sql`
    with documents as (
      select * from jsonb_to_recordset(${documentRows}::jsonb)
        as d(product_id uuid, name_words text, other_words text, name_key text, codes text)
    ),
    facets as (
      select * from jsonb_to_recordset(${facetRows}::jsonb)
        as f(product_id uuid, kind text, name_key text, value_key text, value text)
    ),
    gone as (
      delete from product_search s
      where s.store_id = ${storeId} and s.product_id = any(${ids}::uuid[])
        and not exists (select 1 from documents d where d.product_id = s.product_id)
    ),
    stale_facets as (
      delete from search_facets s
      where s.store_id = ${storeId} and s.product_id = any(${ids}::uuid[])
        and not exists (
          select 1 from facets f
          where f.product_id = s.product_id and f.kind = s.kind
            and f.name_key = s.name_key and f.value_key = s.value_key
        )
    ),
    written as (
      insert into product_search (store_id, product_id, name_words, other_words, name_key, codes)
      select ${storeId}, product_id, name_words, other_words, name_key, codes from documents
      on conflict (store_id, product_id) do update set
        name_words = excluded.name_words, other_words = excluded.other_words,
        name_key = excluded.name_key, codes = excluded.codes
        where (product_search.name_words, product_search.other_words, product_search.name_key,
          product_search.codes)
          is distinct from (excluded.name_words, excluded.other_words, excluded.name_key,
          excluded.codes)
    )
    insert into search_facets (store_id, product_id, kind, name_key, value_key, value)
    select ${storeId}, product_id, kind, name_key, value_key, value from facets
    on conflict (store_id, kind, name_key, value_key, product_id) do update set
      value = excluded.value
      where search_facets.value is distinct from excluded.value
  `,
)
