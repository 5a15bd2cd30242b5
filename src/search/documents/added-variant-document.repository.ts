import { sql, type RawBuilder } from 'kysely'
import { dialectOf } from '../../db/dialect.js'
import type { Executor } from '../../db/schema.js'
import { statement } from '../../db/statements.js'
import type { VariantPart } from './search-document.js'

/**
 * A variant's part appended to its product's stored search document (decision 0056): its
 * words after the document's other words, its codes not already there after the codes, its
 * option values not already there as facet rows (a value already there keeps its stored
 * spelling, the first variant's). The work is the same whatever the product's variant count.
 * On PostgreSQL one statement; on SQLite two, each compiled once (the document's update
 * rewrites its FTS entry, by product_search's trigger).
 */
export async function appendVariantPart(
  db: Executor,
  storeId: string,
  productId: string,
  part: VariantPart,
): Promise<void> {
  const [first = '', second = ''] = part.codes
  const facets = JSON.stringify(
    part.facetValues.map((facet) => [facet.kind, facet.nameKey, facet.valueKey, facet.value]),
  )
  if (dialectOf(db).oneStatementWrites) {
    await appendInOneStatement(db, storeId, productId, part.words, first, second, facets)
    return
  }
  await appendWords(db, storeId, productId, part.words, first, second)
  if (part.facetValues.length > 0) await insertFacets(db, storeId, productId, facets)
}

const NEWLINE = '\n'

/** A text parameter, typed: PostgreSQL cannot tell the type of `$1 || $2` alone. */
const text = (value: string) => sql<string>`cast(${value} as text)`

/**
 * `codes` (newline-framed, one per line) with `code` appended unless empty or there already.
 * `position` is the dialect's substring search (instr, strpos).
 */
function withCode(codes: RawBuilder<string>, code: string, position: 'instr' | 'strpos') {
  const nl = text(NEWLINE)
  return sql<string>`case when ${text(code)} = ''
      or ${sql.raw(position)}(${codes}, ${nl} || ${text(code)} || ${nl}) > 0 then ${codes}
    else (case when ${codes} = '' then ${nl} else ${codes} end) || ${text(code)} || ${nl} end`
}

/** The document's columns with the variant's words and codes appended. */
function appendedColumns(
  words: string,
  first: string,
  second: string,
  position: 'instr' | 'strpos',
) {
  return {
    other_words: sql<string>`case when ${text(words)} = '' then other_words
      when other_words = '' then ${text(words)} else other_words || ' ' || ${text(words)} end`,
    codes: withCode(withCode(sql<string>`codes`, first, position), second, position),
  }
}

const appendWords = statement(
  (
    db: Executor,
    storeId: string,
    productId: string,
    words: string,
    first: string,
    second: string,
  ) =>
    db
      .updateTable('product_search')
      .set(appendedColumns(words, first, second, 'instr'))
      .where('store_id', '=', storeId)
      .where('product_id', '=', productId),
)

const insertFacets = statement((db: Executor, storeId: string, productId: string, facets: string) =>
  db
    .insertInto('search_facets')
    .columns(['store_id', 'product_id', 'kind', 'name_key', 'value_key', 'value'])
    .expression((eb) =>
      eb
        .selectFrom(sql<{ value: string }>`json_each(${facets})`.as('f'))
        .select([
          eb.val(storeId).as('store_id'),
          eb.val(productId).as('product_id'),
          sql<string>`json_extract(f.value, '$[0]')`.as('kind'),
          sql<string>`json_extract(f.value, '$[1]')`.as('name_key'),
          sql<string>`json_extract(f.value, '$[2]')`.as('value_key'),
          sql<string>`json_extract(f.value, '$[3]')`.as('value'),
        ])
        // Without a WHERE, SQLite cannot tell an upsert's ON from a join's.
        .where(sql<boolean>`true`),
    )
    .onConflict((oc) => oc.doNothing()),
)

const appendInOneStatement = statement(
  (
    db: Executor,
    storeId: string,
    productId: string,
    words: string,
    first: string,
    second: string,
    facets: string,
  ) =>
    db
      .with('document', (db) =>
        db
          .updateTable('product_search')
          .set(appendedColumns(words, first, second, 'strpos'))
          .where('store_id', '=', storeId)
          .where('product_id', '=', sql<string>`${productId}::uuid`),
      )
      .insertInto('search_facets')
      .columns(['store_id', 'product_id', 'kind', 'name_key', 'value_key', 'value'])
      .expression((eb) =>
        eb
          .selectFrom(sql<{ value: unknown }>`jsonb_array_elements(${facets}::jsonb)`.as('f'))
          .select([
            eb.cast<string>(eb.val(storeId), 'text').as('store_id'),
            eb.cast<string>(eb.val(productId), 'uuid').as('product_id'),
            sql<string>`f.value ->> 0`.as('kind'),
            sql<string>`f.value ->> 1`.as('name_key'),
            sql<string>`f.value ->> 2`.as('value_key'),
            sql<string>`f.value ->> 3`.as('value'),
          ]),
      )
      .onConflict((oc) => oc.doNothing()),
)
