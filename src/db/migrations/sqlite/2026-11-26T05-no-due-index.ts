import { sql, type Kysely } from 'kysely'

/**
 * Drops webhook_deliveries_due (next_attempt_at of pending deliveries), which no query reads
 * since the dispatcher looks for due deliveries endpoint by endpoint
 * (webhook_deliveries_due_by_endpoint): every delivery wrote it on insert and on each claim.
 * The oldest pending delivery's age (min(created_at) of the pending) reads the other partial
 * index of pending deliveries as it read this one: neither is in created_at order.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`drop index webhook_deliveries_due`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`
    create index webhook_deliveries_due on webhook_deliveries (next_attempt_at)
    where status = 'pending'
  `.execute(db)
}
