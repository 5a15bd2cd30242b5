import type { ApiKeyRow, Executor, NewApiKeyRow } from '../db/schema.js'

export async function insertApiKey(db: Executor, row: NewApiKeyRow): Promise<void> {
  await db.insertInto('api_keys').values(row).execute()
}

export function findApiKeyByHash(db: Executor, keyHash: string): Promise<ApiKeyRow | undefined> {
  return db.selectFrom('api_keys').selectAll().where('key_hash', '=', keyHash).executeTakeFirst()
}

export function findApiKeyById(db: Executor, id: string): Promise<ApiKeyRow | undefined> {
  return db.selectFrom('api_keys').selectAll().where('id', '=', id).executeTakeFirst()
}

export function listApiKeyRows(db: Executor, storeId?: string): Promise<ApiKeyRow[]> {
  let query = db.selectFrom('api_keys').selectAll()
  if (storeId !== undefined) query = query.where('store_id', '=', storeId)
  return query.orderBy('store_id').orderBy('created_at').orderBy('id').execute()
}

export async function hasAnyApiKey(db: Executor): Promise<boolean> {
  const row = await db.selectFrom('api_keys').select('id').limit(1).executeTakeFirst()
  return row !== undefined
}

export async function markApiKeyRevoked(db: Executor, id: string, at: string): Promise<void> {
  await db
    .updateTable('api_keys')
    .set({ revoked_at: at })
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .execute()
}
