import { sql, type RawBuilder } from 'kysely'
import { dialectOf, type Dialect } from '../db/dialect.js'
import type { Executor } from '../db/schema.js'
import {
  DOCUMENTS,
  PRODUCTS,
  priceBetween,
  type Condition,
  type ProductSide,
} from './documents/filters.js'
import type { MatchRead } from './search-filters.js'
import type { SearchRequest } from './search-query.js'

/**
 * The conditions of a search request, and which side of the products they read: the search
 * documents (`s`, product_search), which hold the fields the filters and sorts read (decision
 * 0033), or the products' rows (`p`) when a filter of the request reads a field only they hold.
 * `q` is never handed to an engine's query language: the match is written here from its
 * folded words (`[a-z0-9]` only), each quoted, the last as a prefix.
 */

export interface Engine {
  /** The products (`p`) whose document holds every word (the last also as a prefix). */
  matches(storeId: string, words: readonly string[]): Condition
  /** The documents (`s`) that hold every word (the last also as a prefix). */
  documentMatches(words: readonly string[]): Condition
  /**
   * The FROM of a relevance page, with `s` (product_search, and `p` on the products' side),
   * the condition that they match, and the score (lower is better) and name-match test of each.
   */
  ranked(
    words: readonly string[],
    on: ProductSide,
  ): {
    from: RawBuilder<unknown>
    where: Condition
    score: RawBuilder<number>
    nameHolds: Condition
  }
  /** Whether `codes` (newline-framed) holds `needle` (newline-framed). */
  holds(codes: RawBuilder<unknown>, needle: string): Condition
  /** `expression` compared by code point. */
  byCodePoint(expression: RawBuilder<unknown>): RawBuilder<unknown>
}

const ftsQuery = (words: readonly string[]) =>
  words.map((word, i) => `"${word}"${i === words.length - 1 ? '*' : ''}`).join(' ')
const tsQuery = (words: readonly string[], weight = '') =>
  words.map((word, i) => `'${word}':${i === words.length - 1 ? '*' : ''}${weight}`).join(' & ')
const withProducts = (on: ProductSide) =>
  on.alias === 'p'
    ? sql` join products p on p.store_id = s.store_id and p.id = s.product_id`
    : sql``

export const ENGINES: Record<Dialect, Engine> = {
  sqlite: {
    matches: (storeId, words) => sql<boolean>`p.id in (select s.product_id
      from product_search_fts join product_search s on s.doc = product_search_fts.rowid
      where product_search_fts match ${ftsQuery(words)} and s.store_id = ${storeId})`,
    documentMatches: (words) => sql<boolean>`s.doc in (select rowid from product_search_fts
      where product_search_fts match ${ftsQuery(words)})`,
    ranked: (words, on) => ({
      from: sql`product_search_fts
        join product_search s on s.doc = product_search_fts.rowid${withProducts(on)}`,
      where: sql<boolean>`product_search_fts match ${ftsQuery(words)}`,
      score: sql<number>`bm25(product_search_fts, 10.0, 1.0)`,
      nameHolds: sql<boolean>`s.doc in (select rowid from product_search_fts
        where product_search_fts match ${`name_words : (${ftsQuery(words)})`})`,
    }),
    holds: (codes, needle) => sql<boolean>`instr(${codes}, ${needle}) > 0`,
    byCodePoint: (expression) => expression,
  },
  postgres: {
    matches: (storeId, words) => sql<boolean>`p.id in (select s.product_id
      from product_search s
      where s.store_id = ${storeId} and s.document @@ to_tsquery('simple', ${tsQuery(words)}))`,
    documentMatches: (words) => sql<boolean>`s.document @@ to_tsquery('simple', ${tsQuery(words)})`,
    ranked: (words, on) => {
      const query = sql`to_tsquery('simple', ${tsQuery(words)})`
      return {
        from: sql`product_search s${withProducts(on)}`,
        where: sql<boolean>`s.document @@ ${query}`,
        score: sql<number>`-ts_rank(s.document, ${query})`,
        nameHolds: sql<boolean>`s.document @@ to_tsquery('simple', ${tsQuery(words, 'A')})`,
      }
    },
    holds: (codes, needle) => sql<boolean>`strpos(${codes}, ${needle}) > 0`,
    byCodePoint: (expression) => sql`${expression} collate "C"`,
  },
}

/**
 * The side a request's matches are read on: the documents, unless one of its filters can
 * read only the products (`documents: false`, as `slug`). The one place this is chosen.
 */
export function sideOf(request: SearchRequest): ProductSide {
  return request.filters.every((filter) => filter.kind.documents !== false) ? DOCUMENTS : PRODUCTS
}

/** The table of a side, aliased. */
export function tableOf(on: ProductSide): RawBuilder<unknown> {
  return on.alias === 'p' ? sql`products p` : sql`product_search s`
}

/** A column of a side (the fields of decision 0033 have the same names on both). */
export function columnOf(on: ProductSide, column: string): RawBuilder<unknown> {
  return sql.ref(column === 'id' ? on.id : `${on.alias}.${column}`)
}

/**
 * The conditions of a request on side `on`, but those of the facet `exceptFacet` when named.
 * `whole`: every match is read (a facet's or the price range's read, no sort to stop it):
 * without `q`, the filters that can are written to drive the read from their own index.
 */
export function conditions(
  db: Executor,
  storeId: string,
  request: SearchRequest,
  options: { exceptFacet?: string; withQuery?: boolean; on?: ProductSide; whole?: boolean } = {},
): Condition[] {
  const engine = ENGINES[dialectOf(db).name]
  const { exceptFacet, withQuery = true, on = PRODUCTS, whole = false } = options
  const read: MatchRead = whole && !(withQuery && request.q) ? 'whole' : 'page'
  const own = exceptFacet === undefined ? undefined : facetKey(exceptFacet)
  const all: Condition[] = [sql<boolean>`${columnOf(on, 'store_id')} = ${storeId}`]
  if (withQuery && request.q) {
    const words = request.q.words
    all.push(
      words.length === 0
        ? sql`1 = 0`
        : on.alias === 'p'
          ? engine.matches(storeId, words)
          : engine.documentMatches(words),
    )
  }
  for (const filter of request.filters) {
    if (facetKey(filter.param) !== own) {
      all.push(filter.kind.condition(db, filter.param, filter.values, on, read))
    }
  }
  if (own !== 'price' && (request.priceMinE4 !== undefined || request.priceMaxE4 !== undefined)) {
    all.push(priceBetween(request.priceMinE4, request.priceMaxE4, on))
  }
  return all
}

/**
 * The ids (`id`) of the request's products but the facet `exceptFacet`'s own filter: a
 * subquery; undefined when that is every product of the store (no other condition).
 */
export function matchingProductIds(
  db: Executor,
  storeId: string,
  request: SearchRequest,
  exceptFacet: string,
): RawBuilder<unknown> | undefined {
  const on = sideOf(request)
  const where = conditions(db, storeId, request, { exceptFacet, on, whole: true })
  if (where.length === 1) return undefined
  return sql`select ${columnOf(on, 'id')} as id from ${tableOf(on)}
    where ${sql.join(where, sql` and `)}`
}

/** A filter's or facet's name as they are matched to each other: option names without case. */
export function facetKey(name: string): string {
  return name.startsWith('option.') ? name.toLowerCase() : name
}
