import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { sql } from 'kysely'
import { getProduct } from '../src/catalog/product.service.js'
import type { Product } from '../src/catalog/catalog-records.schemas.js'
import { readSynchronously } from '../src/db/statements.js'
import { AppError } from '../src/errors.js'
import { createTestDatabase, POSTGRES_URL } from './helpers.js'
import { createProductWork } from '../src/catalog/product-create-work.js'

const STORE = 'shop'

describe('reads made at once on SQLite', () => {
  it('run on the connection when no transaction is open, and never inside one', async (t) => {
    const database = await createTestDatabase(t, 'sqlite')
    assert.deepEqual(readSynchronously(database.kysely, 'select 1 as one', []), [{ one: 1 }])
    await database.kysely.transaction().execute(async (tx) => {
      await sql`select 1`.execute(tx)
      assert.equal(readSynchronously(database.kysely, 'select 1 as one', []), undefined)
      assert.equal(readSynchronously(tx, 'select 1 as one', []), undefined)
    })
    assert.deepEqual(readSynchronously(database.kysely, 'select 1 as one', []), [{ one: 1 }])
  })

  it('never show a write whose batch has not committed, nor one rolled back', async (t) => {
    const database = await createTestDatabase(t, 'sqlite')
    let open!: () => void
    const gate = new Promise<void>((resolve) => (open = resolve))
    let written: Product | undefined
    const writing = database.write(async (tx) => {
      written = await createProductWork(STORE, { name: 'Held open' })(tx)
      await gate
      throw new Error('the unit fails after its insert')
    })
    while (written === undefined) await sleep(1)

    // The insert is in the open transaction: a read must wait for the batch, not read it.
    const reading = getProduct(database, STORE, written.id).then(
      (product) => ({ found: product }),
      (error: unknown) => ({ error }),
    )
    const early = await Promise.race([reading, sleep(50, 'still waiting' as const)])
    assert.equal(early, 'still waiting')

    open()
    await assert.rejects(writing, /the unit fails after its insert/)
    const answer = await reading
    assert.ok('error' in answer && answer.error instanceof AppError, 'the read found nothing')
    assert.equal(answer.error.code, 'not_found')
  })

  it('see a write as soon as its batch has committed', async (t) => {
    const database = await createTestDatabase(t, 'sqlite')
    const created = await database.write(createProductWork(STORE, { name: 'Committed' }))
    assert.equal((await getProduct(database, STORE, created.id)).slug, 'committed')
  })

  it(
    'are not made on PostgreSQL',
    { skip: !POSTGRES_URL && 'TEST_POSTGRES_URL is not set' },
    async (t) => {
      const database = await createTestDatabase(t, 'postgres')
      assert.equal(readSynchronously(database.kysely, 'select 1 as one', []), undefined)
    },
  )
})
