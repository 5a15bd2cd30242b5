import { sql, type QueryCreator } from 'kysely'
import { dialectOf, POSTGRES, type Dialect } from '../db/dialect.js'
import { statement } from '../db/statements.js'
import type { DB, Executor } from '../db/schema.js'
import { eventInStatement, eventRow, writeEventRow, type PendingEvent } from '../outbox/outbox.js'
import {
  productColumns,
  rowValues,
  ROW_VALUE_COUNT,
  type NewProduct,
  type RowValues,
} from './product.columns.js'
import { insertTags, tagInsert } from './product-tags.repository.js'
import { MAX_CLAIM_ATTEMPTS, productSlugs, reservationOf } from '../slugs/slug-claims.js'

// The create of a product: its row, its slug's claim, its tags and (with a generated slug) its
// product.created event.

/**
 * Inserts a product with the first free slug for `base` (slug-claims.ts: `base` itself, else
 * `base-N` with the next N) and returns the slug, with the product.created event appended
 * (`event` gives its id and time).
 *
 * On PostgreSQL this is one statement, atomic without a transaction block (its tags and its
 * event too). On SQLite the same steps are separate statements and must run inside a
 * transaction (group commit's). Either is tried again when a concurrent write took the slug
 * it generated (rare: a name that reserves that very suffix, committed meanwhile).
 */
export async function insertProductWithUniqueSlug(
  db: Executor,
  row: NewProduct,
  base: string,
  event: PendingEvent,
): Promise<string> {
  const tryInsert = INSERT_CLAIMING_A_SLUG[dialectOf(db).name]
  for (let attempt = 0; attempt < MAX_CLAIM_ATTEMPTS; attempt++) {
    const slug = await tryInsert(db, row, base, event)
    if (slug !== undefined) return slug
  }
  throw new Error(`no free slug for ${base} after ${MAX_CLAIM_ATTEMPTS} claims`)
}

/** One try of insertProductWithUniqueSlug: the slug, or undefined when the claim picked none. */
type InsertClaimingASlug = (
  db: Executor,
  row: NewProduct,
  base: string,
  event: PendingEvent,
) => Promise<string | undefined>

const INSERT_CLAIMING_A_SLUG: Record<Dialect, InsertClaimingASlug> = {
  async postgres(db, row, base, event) {
    const statement = row.tag_keys === '[]' ? insertUntagged : insertTagged
    const [inserted] = await statement(
      db,
      ...rowValues(row),
      row.tag_keys,
      base,
      ...reservationOf(base),
      event.type,
      event.id,
      event.createdAt,
    )
    return inserted?.slug
  },
  async sqlite(db, row, base, event) {
    const storeId = row.store_id
    const slug = await productSlugs.claimGenerated(db, storeId, base)
    if (slug === undefined) return undefined
    const values = rowValues(row)
    await insertProductRow(db, ...values, slug)
    await insertTags(db, storeId, row.id, row.created_at, row.status, row.tag_keys)
    const object = { ...productColumns(values), slug, max_variant_position: 0, version: 1 }
    await writeEventRow(db, eventRow(storeId, event, object))
    return slug
  },
}

/**
 * Inserts a product with a slug set by hand (an import's handle), counted as handed out
 * like a slug set by PATCH (the products_slug_key constraint refuses one another product
 * of the store has). Several statements: run it inside a transaction.
 */
export async function insertProductWithSlugSetByHand(
  db: Executor,
  row: NewProduct,
  slug: string,
): Promise<string> {
  await productSlugs.claimSetByHand(db, row.store_id, slug)
  await insertProductRow(db, ...rowValues(row), slug)
  await insertTags(db, row.store_id, row.id, row.created_at, row.status, row.tag_keys)
  return slug
}

/** A product's values, its tag keys and the base of its slug: the PostgreSQL insert's. */
type InsertValues = [...RowValues, tagKeys: string, base: string]

/**
 * The PostgreSQL statements of insertProductWithUniqueSlug, compiled once each: with tags to
 * write, or without (a create without tags spares the tags' CTE).
 */
function insertStatement(tagged: boolean) {
  return statement(
    (
      db: Executor,
      ...args: [
        ...InsertValues,
        suffixOf: string | null,
        suffix: number | null,
        eventType: string,
        eventId: string,
        eventCreatedAt: string,
      ]
    ) =>
      productInsertStatement(db, args.slice(0, ROW_VALUE_COUNT + 2) as InsertValues, {
        reserved: [
          args[ROW_VALUE_COUNT + 2] as string | null,
          args[ROW_VALUE_COUNT + 3] as number | null,
        ],
        tagged,
        event: {
          type: args[ROW_VALUE_COUNT + 4],
          id: args[ROW_VALUE_COUNT + 5],
          createdAt: args[ROW_VALUE_COUNT + 6],
        },
      }),
  )
}

const insertUntagged = insertStatement(false)
const insertTagged = insertStatement(true)

/** The product row as given; the last value is its slug. */
const insertProductRow = statement((db: Executor, ...values: [...RowValues, slug: string]) =>
  db.insertInto('products').values({ ...productColumns(values), slug: values[ROW_VALUE_COUNT] }),
)

/**
 * The PostgreSQL statement of insertProductWithUniqueSlug: the slug's claim (CTEs of
 * slug-claims.ts), the product's tags, the product and its event, then the slug the product
 * got; nothing when the claim picked no slug (the caller claims again).
 */
function productInsertStatement(
  db: Executor,
  values: InsertValues,
  shape: {
    reserved: [suffixOf: string | null, suffix: number | null]
    tagged: boolean
    event: { type: unknown; id: unknown; createdAt: unknown }
  },
) {
  const { reserved, tagged, event } = shape
  const [storeId, id, , status] = values
  const createdAt = values[14]
  const [tagKeys, base] = values.slice(ROW_VALUE_COUNT) as [string, string]
  const claimed = productSlugs.claimInStatement(db, storeId, base, ...reserved)
  // An unreferenced data-modifying CTE still runs, exactly once. The tags' foreign key is
  // checked at the end of the statement, when the product row below exists; like the
  // product, they are written only when the claim picked a slug.
  const withTags = tagged
    ? (claimed.with('tagged', (qc) =>
        tagInsert(
          qc as unknown as QueryCreator<DB>,
          POSTGRES,
          storeId,
          id,
          createdAt,
          status,
          tagKeys,
          'picked',
        ),
      ) as unknown as typeof claimed)
    : claimed
  const columns = productColumns(values)
  return withTags
    .with('inserted', (db) =>
      db
        .insertInto('products')
        .columns([...(Object.keys(columns) as (keyof typeof columns)[]), 'slug'])
        .expression((eb) =>
          eb
            .selectFrom('picked')
            .select([
              ...Object.entries(columns).map(([column, value]) => eb.val(value).as(column)),
              'picked.slug',
            ]),
        )
        .returningAll(),
    )
    .with('event', () => eventInStatement('inserted', storeId, event, sql`to_json(inserted)`, null))
    .selectFrom('inserted')
    .select('slug')
}
