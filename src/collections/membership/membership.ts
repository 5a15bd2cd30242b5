import { storedMetafields } from '../../attributes/values/metafield-types.js'
import type { Executor, ProductRow } from '../../db/schema.js'
import { appendEvent, appendEvents, eventRow, pendingEvent } from '../../outbox/outbox.js'
import {
  findSmartCollections,
  lockForProductWrite,
  lockStoreRules,
  renewRulesToken,
  type RulesState,
  type SmartCollectionRow,
} from './rules-state.repository.js'
import { closeGap } from './manual-members.repository.js'
import {
  deleteMembers,
  findMemberships,
  findProductRows,
  findVariantOptions,
  insertMembers,
  memberKeysOf,
  refreshMemberKeys,
  removeFromEveryCollection,
  updateMemberKeys,
  type MemberKeys,
} from './membership.repository.js'
import { replaceMembersWhere, resortMembers } from './rules-change.repository.js'
import type { SortOrder } from './sort-orders.js'
import { sortedBy } from './member-page.repository.js'
import {
  compileRules,
  readsMetafields,
  readsOptions,
  rulesSql,
  type ProductFacts,
  type Rule,
} from './rules.js'

/**
 * Memberships exact at commit. Every write of a product or a variant runs through
 * productsWritten (catalog/product-write.ts): in its transaction, after the store's
 * rules lock (shared, taken with the store's rules state in one statement), it evaluates the
 * products it wrote against every smart collection of the store (their rules read in one
 * query, cached by token), writes what changed, and appends one collection.products_changed
 * per collection whose members changed. A store with no collection costs that one statement;
 * one with only manual ones, one more. A rules change evaluates the collection over every
 * product in SQL (applyRules) under the same lock, exclusive.
 */

/** A smart collection's rules, parsed, and its sort order (which sort index its rows sit in). */
export interface SmartRules {
  id: string
  rules: Rule[]
  disjunctive: boolean
  sortOrder: SortOrder
}

/** A smart collection as product writes evaluate it: its rules compiled to one test. */
interface SmartTest extends SmartRules {
  test: (facts: ProductFacts) => boolean
}

/** A smart collection's row as its rules, read as they are stored (JSON text on SQLite). */
export function smartRulesOfRow(row: SmartCollectionRow): SmartRules {
  const parsed = typeof row.rules === 'string' ? JSON.parse(row.rules) : row.rules
  return {
    id: row.id,
    rules: (parsed ?? []) as Rule[],
    disjunctive: Boolean(row.disjunctive),
    sortOrder: row.sort_order as SortOrder,
  }
}

function parseSmart(row: SmartCollectionRow): SmartTest {
  const smart = smartRulesOfRow(row)
  return { ...smart, test: compileRules(smart.rules, smart.disjunctive) }
}

/** Takes the store's rules lock (shared) for a write of products (beginProductWrite). */
export async function lockRulesForProductWrites(
  db: Executor,
  storeId: string,
): Promise<RulesState> {
  return lockForProductWrite(db, storeId)
}

/**
 * Brings the memberships of these products (just written, in this transaction) up to date:
 * their copied sort keys, and their places in every smart collection of the store. `state`
 * is what the store's rules lock read, held since (lockRulesForProductWrites). `created`: the
 * products were created in this transaction, so they are in no collection yet.
 */
export async function refreshMemberships(
  db: Executor,
  storeId: string,
  productIds: readonly string[],
  state: RulesState,
  created = false,
): Promise<void> {
  if (productIds.length === 0 || !state.collections) return
  const smart = await smartRulesOf(db, storeId, state.token)
  if (created && smart.length === 0) return
  if (smart.length === 0) return refreshMemberKeys(db, storeId, productIds)
  const [products, memberships] = await Promise.all([
    findProductRows(db, storeId, productIds),
    created ? [] : findMemberships(db, storeId, productIds),
  ])
  const keysOf = new Map(products.map((row) => [row.id, memberKeysOf(row)]))
  const stale = new Set<string>()
  const have = new Set<string>()
  for (const m of memberships) {
    const keys = keysOf.get(m.product_id)
    if (keys && !sameKeys(keys, m)) stale.add(m.product_id)
    if (m.kind === 'smart') have.add(`${m.collection_id} ${m.product_id}`)
  }
  for (const id of stale) await updateMemberKeys(db, storeId, keysOf.get(id)!)
  const facts = await productFacts(db, storeId, products, smart)
  const added = new Map<string, string[]>()
  const removed = new Map<string, string[]>()
  const push = (map: Map<string, string[]>, key: string, id: string) =>
    map.set(key, [...(map.get(key) ?? []), id])
  for (const product of products) {
    const productFacts = facts.get(product.id)!
    for (const collection of smart) {
      const wanted = collection.test(productFacts)
      const isIn = have.has(`${collection.id} ${product.id}`)
      if (wanted && !isIn) push(added, collection.id, product.id)
      if (!wanted && isIn) push(removed, collection.id, product.id)
    }
  }
  const sortOf = new Map(smart.map((collection) => [collection.id, collection.sortOrder]))
  await insertMembers(
    db,
    storeId,
    [...added].flatMap(([collectionId, ids]) =>
      ids.map((id) => ({
        collectionId,
        position: null,
        sortedBy: sortedBy(sortOf.get(collectionId)!),
        keys: keysOf.get(id)!,
      })),
    ),
  )
  for (const [collectionId, ids] of removed) await deleteMembers(db, storeId, collectionId, ids)
  const changed = smart.filter(({ id }) => added.has(id) || removed.has(id))
  if (changed.length === 0) return
  await appendEvents(
    db,
    changed.map(({ id }) =>
      eventRow(storeId, pendingEvent('collection.products_changed'), {
        collectionId: id,
        added: added.get(id) ?? [],
        removed: removed.get(id) ?? [],
      }),
    ),
  )
}

/** Parsed rules by rules token: at most this many tokens are kept. */
const RULES_CACHE_SIZE = 64
const rulesCache = new Map<string, SmartTest[]>()

/**
 * Every smart collection of the store with its rules, read only when the store's rules token
 * (read under the store's rules lock, which the caller holds; renewed by every change of
 * them) is not cached yet.
 */
async function smartRulesOf(
  db: Executor,
  storeId: string,
  token: string | undefined,
): Promise<SmartTest[]> {
  if (token === undefined) return []
  const cached = rulesCache.get(token)
  if (cached) return cached
  const smart = (await findSmartCollections(db, storeId)).map(parseSmart)
  if (rulesCache.size >= RULES_CACHE_SIZE) rulesCache.delete(rulesCache.keys().next().value!)
  rulesCache.set(token, smart)
  return smart
}

/**
 * Marks the store's smart rules changed (a create, a rules change, a delete of a smart one, a
 * change of a smart one's sort order: the cached rules carry it).
 */
export async function rulesChanged(db: Executor, storeId: string): Promise<void> {
  await renewRulesToken(db, storeId)
}

function sameKeys(keys: MemberKeys, row: { name_key: string; price_e4: unknown; status: string }) {
  return (
    keys.nameKey === row.name_key &&
    keys.priceE4 === Number(row.price_e4) &&
    keys.status === row.status
  )
}

/** What the rules read of each product, its variants' options only when some rule reads them. */
async function productFacts(
  db: Executor,
  storeId: string,
  products: readonly ProductRow[],
  smart: readonly SmartRules[],
): Promise<Map<string, ProductFacts>> {
  const options = new Map<string, Set<string>>(products.map((row) => [row.id, new Set()]))
  if (smart.some((collection) => readsOptions(collection.rules))) {
    const ids = products.map((row) => row.id)
    for (const variant of await findVariantOptions(db, storeId, ids)) {
      const values: Record<string, string> =
        typeof variant.options === 'string' ? JSON.parse(variant.options) : variant.options
      const set = options.get(variant.product_id)!
      for (const [name, value] of Object.entries(values)) {
        set.add(`${name.toLowerCase()}\u0000${value.toLowerCase()}`)
      }
    }
  }
  const metafields = smart.some((collection) => readsMetafields(collection.rules))
  return new Map(
    products.map((row) => {
      const tags: string[] = typeof row.tags === 'string' ? JSON.parse(row.tags) : row.tags
      return [
        row.id,
        {
          name: row.name,
          vendor: row.vendor,
          productType: row.product_type,
          status: row.status,
          priceE4: Number(row.price_e4),
          tags: new Set(tags.map((tag) => tag.toLowerCase())),
          options: options.get(row.id)!,
          metafields: metafields ? storedMetafields(row.metafields) : {},
        },
      ]
    }),
  )
}

/** Appends collection.products_changed when the members changed. */
export async function appendMembersChanged(
  db: Executor,
  storeId: string,
  collectionId: string,
  added: readonly string[],
  removed: readonly string[],
): Promise<void> {
  if (added.length === 0 && removed.length === 0) return
  await appendEvent(db, storeId, {
    type: 'collection.products_changed',
    object: { collectionId, added, removed },
  })
}

/**
 * Makes a smart collection's members exactly the products its rules match, over the whole
 * store in SQL (one statement on PostgreSQL, three on SQLite), and appends the change with its
 * ids aggregated by the database (replaceMembersWhere). Call it with the store's rules lock held
 * exclusively (lockForRulesChange), taken before the collection's row.
 */
export async function applyRules(
  db: Executor,
  storeId: string,
  collection: SmartRules,
): Promise<void> {
  const condition = rulesSql(db, collection.rules, collection.disjunctive)
  const event = pendingEvent('collection.products_changed')
  const sorted = sortedBy(collection.sortOrder)
  await replaceMembersWhere(db, storeId, collection.id, condition, sorted, event)
}

/**
 * A collection's sort order changed: its member rows move to the sort index of the new one
 * (decision 0055), and, for a smart collection, product writes stop using the cached rules
 * that carried the old one. Call it with the store's rules lock held exclusively, so that no
 * product write adds a row under the old order meanwhile.
 */
export async function sortOrderChanged(
  db: Executor,
  storeId: string,
  collection: { id: string; kind: string },
  sortOrder: SortOrder,
): Promise<void> {
  await resortMembers(db, storeId, collection.id, sortedBy(sortOrder))
  if (collection.kind === 'smart') await rulesChanged(db, storeId)
}

/** The store's rules lock, exclusive: for a change of a smart collection's rules. */
export async function lockForRulesChange(db: Executor, storeId: string): Promise<void> {
  await lockStoreRules(db, storeId, 'exclusive')
}

/** A product about to be deleted leaves every collection: one event per collection. */
export async function leaveEveryCollection(
  db: Executor,
  storeId: string,
  productId: string,
): Promise<void> {
  const left = await removeFromEveryCollection(db, storeId, productId)
  for (const { collectionId, position } of left) {
    if (position !== null) await closeGap(db, storeId, collectionId, position)
    await appendMembersChanged(db, storeId, collectionId, [], [productId])
  }
}
