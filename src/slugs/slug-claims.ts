import { sql, type QueryCreator } from 'kysely'
import { insertRows } from '../db/multi-row-insert.js'
import { statement } from '../db/statements.js'
import type { DB, Executor } from '../db/schema.js'
import { splitSuffix, withSuffix } from './slug.js'

/**
 * Slug claims: the one place that hands out products' slugs and collections' handles, used by
 * creates, PATCHes and imports. A namespace is a table of counters (products and collections
 * each have their own), one row per slug ever handed out in a store (so a deleted product's
 * slug is never generated again):
 *
 * - `claims`: how many times the slug was claimed; its first claim gets the slug itself;
 * - `last_suffix`: the last suffix generated for the slug as a base (`t-shirt-3`: 3);
 * - `suffix_of`, `suffix`: for a slug that looks suffixed (`t-shirt-7`), its base and
 *   suffix: the slug reserves that suffix for its base, so a later "T-Shirt" skips it.
 *
 * A reservation is written in the slug's own row, never in its base's: distinct names of one
 * family (`ab12-1`, `ab12-2`, ...) take no shared row lock. Generation reads the highest
 * suffix reserved under a base (one probe of an index) when it claims the base again. A
 * suffix reserved by a write that commits while a generation runs is caught by the count of
 * the generated slug (its row already counted): the create then claims again
 * (`MAX_CLAIM_ATTEMPTS`). The unique index of the records' slugs stays the last word.
 */
export type SlugCounters = 'slug_counters' | 'collection_handle_counters'

/** How many suffixes a create tries when concurrent writes keep taking the one it chose. */
export const MAX_CLAIM_ATTEMPTS = 16

/** The base and suffix columns of a slug's counter: what it reserves, if it looks suffixed. */
export function reservationOf(slug: string): [suffixOf: string | null, suffix: number | null] {
  const reserved = splitSuffix(slug)
  return reserved ? [reserved.base, reserved.n] : [null, null]
}

/**
 * Claims `base` once more. The first claim (claims = 1) gets `base`; a later one raises
 * last_suffix past every suffix handed out or reserved under `base` and gets that suffix.
 */
export function claimBase(
  db: QueryCreator<DB>,
  counters: SlugCounters,
  storeId: string,
  base: string,
  suffixOf: string | null,
  suffix: number | null,
) {
  return db
    .insertInto(counters)
    .values({
      store_id: storeId,
      slug: base,
      claims: 1,
      last_suffix: 1,
      suffix_of: suffixOf,
      suffix,
    })
    .onConflict((oc) =>
      oc.columns(['store_id', 'slug']).doUpdateSet((eb) => ({
        claims: eb(`${counters}.claims`, '+', 1),
        last_suffix: eb
          .case()
          .when(`${counters}.claims`, '>', 0)
          .then(
            sql<number>`coalesce((select max(r.suffix) from ${sql.table(counters)} r
              where r.store_id = ${storeId} and r.suffix_of = ${base}
                and r.suffix > ${sql.ref(`${counters}.last_suffix`)}),
              ${sql.ref(`${counters}.last_suffix`)}) + 1`,
          )
          .else(eb.ref(`${counters}.last_suffix`))
          .end(),
        suffix_of: eb.ref('excluded.suffix_of'),
        suffix: eb.ref('excluded.suffix'),
      })),
    )
    .returning(['claims', 'last_suffix'])
}

/**
 * Counts `slug` as handed out (generated with a suffix, or set by hand), recording what it
 * reserves. `claims` comes back 1 when nobody had it before.
 */
export function countSlug(
  db: QueryCreator<DB>,
  counters: SlugCounters,
  storeId: string,
  slug: string,
  suffixOf: string | null,
  suffix: number | null,
) {
  return db
    .insertInto(counters)
    .values({ store_id: storeId, slug, claims: 1, last_suffix: 1, suffix_of: suffixOf, suffix })
    .onConflict((oc) =>
      oc.columns(['store_id', 'slug']).doUpdateSet((eb) => ({
        claims: eb(`${counters}.claims`, '+', 1),
        suffix_of: eb.ref('excluded.suffix_of'),
        suffix: eb.ref('excluded.suffix'),
      })),
    )
    .returning('claims')
}

/**
 * The claims of one namespace: the steps (each compiled once) and, for PostgreSQL's
 * one-statement creates, the same claim as common table expressions.
 */
export function slugClaims(counters: SlugCounters) {
  const claimOnce = statement(
    (db: Executor, storeId: string, base: string, suffixOf: string | null, n: number | null) =>
      claimBase(db, counters, storeId, base, suffixOf, n),
  )
  const countOnce = statement(
    (db: Executor, storeId: string, slug: string, suffixOf: string | null, n: number | null) =>
      countSlug(db, counters, storeId, slug, suffixOf, n),
  )
  return {
    /**
     * Claims the first free slug for `base` as separate statements (SQLite, inside the
     * transaction of the write). Undefined when a concurrent write took the generated slug
     * first: claim again.
     */
    async claimGenerated(db: Executor, storeId: string, base: string): Promise<string | undefined> {
      const [claim] = await claimOnce(db, storeId, base, ...reservationOf(base))
      if (claim === undefined) throw new Error('the slug claim returned no row')
      if (Number(claim.claims) === 1) return base
      const n = Number(claim.last_suffix)
      const slug = withSuffix(base, n)
      const [count] = await countOnce(db, storeId, slug, base, n)
      return Number(count?.claims) === 1 ? slug : undefined
    },

    /**
     * claimGenerated until it gets a slug (a concurrent write may take the generated one
     * first), at most MAX_CLAIM_ATTEMPTS times: the slug an import gives a handle made into
     * `base`, before the product is written with it as if set by hand.
     */
    async claimFirstFree(db: Executor, storeId: string, base: string): Promise<string> {
      for (let attempt = 0; attempt < MAX_CLAIM_ATTEMPTS; attempt++) {
        const slug = await this.claimGenerated(db, storeId, base)
        if (slug !== undefined) return slug
      }
      throw new Error(`no free slug for ${base} after ${MAX_CLAIM_ATTEMPTS} claims`)
    },

    /**
     * The claim of `base` as CTEs of one PostgreSQL statement: `claim` (the base's counter),
     * `counted` (the generated slug's, when the base was taken) and `picked`, one row with
     * the slug to write, or none when a concurrent write took the generated one first (the
     * statement then writes nothing, and the caller claims again). `suffixOf` and `n` are
     * reservationOf(base); every value may be a precompiled statement's stand-in.
     */
    claimInStatement(
      db: QueryCreator<DB>,
      storeId: string,
      base: string,
      suffixOf: string | null,
      n: number | null,
    ) {
      const generated = sql<string>`${base} || '-' || claim.last_suffix`
      return db
        .with('claim', (db) => claimBase(db, counters, storeId, base, suffixOf, n))
        .with('counted', (db) =>
          db
            .insertInto(counters)
            .columns(['store_id', 'slug', 'claims', 'last_suffix', 'suffix_of', 'suffix'])
            .expression((eb) =>
              eb
                .selectFrom('claim')
                .select([
                  eb.val(storeId).as('store_id'),
                  generated.as('slug'),
                  eb.lit(1).as('claims'),
                  eb.lit(1).as('last_suffix'),
                  eb.val(base).as('suffix_of'),
                  'claim.last_suffix as suffix',
                ])
                .where('claim.claims', '>', 1),
            )
            .onConflict((oc) =>
              oc.columns(['store_id', 'slug']).doUpdateSet((eb) => ({
                claims: eb(`${counters}.claims`, '+', 1),
                suffix_of: eb.ref('excluded.suffix_of'),
                suffix: eb.ref('excluded.suffix'),
              })),
            )
            .returning('claims'),
        )
        .with('picked', (db) =>
          db
            .selectFrom('claim')
            .select(
              sql<string>`case when claim.claims = 1 then ${base} else ${generated} end`.as('slug'),
            )
            .where((eb) =>
              eb.or([
                eb('claim.claims', '=', 1),
                eb.exists(
                  eb.selectFrom('counted').select('counted.claims').where('counted.claims', '=', 1),
                ),
              ]),
            ),
        )
    },

    /**
     * Counts a slug set by hand (PATCH, an import's handle) as handed out, so generation
     * never gives it again; another record having it is the unique index's to refuse.
     */
    async claimSetByHand(db: Executor, storeId: string, slug: string): Promise<void> {
      await countOnce(db, storeId, slug, ...reservationOf(slug))
    },

    /** claimSetByHand for many slugs (distinct), a few statements whatever their number. */
    async claimAllSetByHand(
      db: Executor,
      storeId: string,
      slugs: readonly string[],
    ): Promise<void> {
      await insertRows(
        db,
        counters,
        ['store_id', 'slug', 'claims', 'last_suffix', 'suffix_of', 'suffix'],
        slugs.map((slug) => [storeId, slug, 1, 1, ...reservationOf(slug)]),
        `on conflict (store_id, slug) do update set claims = ${counters}.claims + 1, ` +
          'suffix_of = excluded.suffix_of, suffix = excluded.suffix',
      )
    },
  }
}

/** The claims of products' slugs. */
export const productSlugs = slugClaims('slug_counters')

/** The claims of collections' handles: a space of their own, by the same rules. */
export const collectionHandles = slugClaims('collection_handle_counters')
