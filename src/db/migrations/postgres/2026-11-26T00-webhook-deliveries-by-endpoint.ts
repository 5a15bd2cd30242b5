import { sql, type Kysely } from 'kysely'

/**
 * The due deliveries of each endpoint, in due order: the dispatcher reads at most a few per
 * endpoint not at its bound of attempts in flight, so that a dead endpoint's backlog (all due,
 * and older than a live endpoint's new deliveries) is not walked through on every pass, as it
 * was through webhook_deliveries_due alone.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create index webhook_deliveries_due_by_endpoint
    on webhook_deliveries (store_id, endpoint_id, next_attempt_at)
    where status = 'pending'
  `.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index webhook_deliveries_due_by_endpoint`.execute(db)
}
