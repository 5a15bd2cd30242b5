import type { Executor } from '../db/schema.js'
import { CommandError } from './output.js'

/**
 * Whether the store exists: an API key names it (even a revoked one) or it holds a product.
 * `catalog import` and `catalog export` refuse one that does not (a typo would otherwise
 * create, or export, an empty store), unless --new-store is given.
 */
export async function storeExists(db: Executor, store: string): Promise<boolean> {
  const key = await db
    .selectFrom('api_keys')
    .select('id')
    .where('store_id', '=', store)
    .limit(1)
    .executeTakeFirst()
  if (key) return true
  const product = await db
    .selectFrom('products')
    .select('id')
    .where('store_id', '=', store)
    .limit(1)
    .executeTakeFirst()
  return product !== undefined
}

/** The stores that exist (named by a key or holding a product), sorted. */
export async function existingStores(db: Executor): Promise<string[]> {
  const rows = await db
    .selectFrom('api_keys')
    .select('store_id')
    .union(db.selectFrom('products').select('store_id'))
    .execute()
  return rows.map((row) => row.store_id).sort()
}

/** Refuses (exit 1) a store that does not exist, naming those that do. */
export async function expectStore(db: Executor, command: string, store: string): Promise<void> {
  if (await storeExists(db, store)) return
  const stores = await existingStores(db)
  const known =
    stores.length === 0
      ? 'This database has no store yet.'
      : `The stores are: ${stores.slice(0, 20).join(', ')}${stores.length > 20 ? `, and ${stores.length - 20} more` : ''}.`
  throw new CommandError(
    `catalog ${command}: there is no store "${store}" (no API key names it and it holds no ` +
      `product). ${known} ${command === 'import' ? `Give --new-store to import into a new store "${store}".` : 'Give --new-store to export it all the same (an empty catalogue).'}`,
  )
}
