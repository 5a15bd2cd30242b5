import { sql, type Kysely } from 'kysely'

/**
 * A manual retry of a finished delivery (failed or succeeded) is one more attempt, not a new
 * start of the retry schedule: `manual_retry` marks it pending for that attempt alone, so
 * that if it fails the delivery is failed again, whatever WEBHOOK_RETRY_SCHEDULE says now.
 * Existing rows take false: none is under a manual retry of this kind.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table webhook_deliveries add column manual_retry integer not null default 0`.execute(
    db,
  )
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table webhook_deliveries drop column manual_retry`.execute(db)
}
