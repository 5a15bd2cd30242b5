// test:serial: a revoked key must still work within the cache's 300 ms, and not after.
import assert from 'node:assert/strict'
import { setTimeout as sleep } from 'node:timers/promises'
import { it } from 'node:test'
import { buildApp } from '../src/app.js'
import { createApiKey, revokeApiKey } from '../src/auth/api-key.service.js'
import { API, createTestDatabase, describeEachDialect } from './helpers.js'

describeEachDialect('API key cache', (dialect) => {
  async function setUp(t: Parameters<typeof createTestDatabase>[0], keyCacheTtlMs: number) {
    const database = await createTestDatabase(t, dialect)
    // The key is made before the app starts listening for key changes, so that the
    // announcement of its creation cannot arrive late and empty the cache mid-test.
    const created = await createApiKey(database, { store: 'cache', scopes: ['read'] })
    const app = buildApp({ database, keyCacheTtlMs })
    t.after(() => app.close())
    // PostgreSQL: the service caches once its LISTEN connection is up, a moment after start.
    while (database.keysVersion() === undefined) await sleep(10)
    const list = () =>
      app.inject({
        method: 'GET',
        url: `${API}/products`,
        headers: { authorization: `Bearer ${created.key}` },
      })
    // Revokes the key behind the service's back: no change of keys is announced, as when a
    // notification is lost. Only the time bound can then end the cached entry.
    const revokeSilently = () =>
      database.kysely
        .updateTable('api_keys')
        .set({ revoked_at: new Date().toISOString() })
        .where('id', '=', created.id)
        .execute()
    return { database, created, list, revokeSilently }
  }

  it('refuses a key revoked through the service at once, even right after using it', async (t) => {
    const { database, created, list } = await setUp(t, 60_000)
    assert.equal((await list()).statusCode, 200)
    await revokeApiKey(database, created.id)
    assert.equal((await list()).statusCode, 401)
  })

  it('refuses a silently revoked key within the cache time bound, not before', async (t) => {
    const ttl = 300
    const { list, revokeSilently } = await setUp(t, ttl)
    assert.equal((await list()).statusCode, 200)
    await revokeSilently()
    // Still cached: the lookup is not repeated for every request.
    assert.equal((await list()).statusCode, 200)
    await sleep(ttl + 50)
    assert.equal((await list()).statusCode, 401)
  })

  it('looks every request up when the cache is off (API_KEY_CACHE_TTL_MS=0)', async (t) => {
    const { list, revokeSilently } = await setUp(t, 0)
    assert.equal((await list()).statusCode, 200)
    await revokeSilently()
    assert.equal((await list()).statusCode, 401)
  })
  if (dialect === 'postgres') {
    it('keeps its entries when keys change in another schema of the database', async (t) => {
      const { list, revokeSilently } = await setUp(t, 60_000)
      const elsewhere = await createTestDatabase(t, dialect)
      assert.equal((await list()).statusCode, 200)
      await revokeSilently()
      // Announced on the shared channel, but for the other schema: nothing to forget here.
      await createApiKey(elsewhere, { store: 'cache', scopes: ['read'] })
      await sleep(200)
      assert.equal((await list()).statusCode, 200)
    })
  }
})
