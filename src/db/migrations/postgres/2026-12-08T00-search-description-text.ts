import type { Kysely } from 'kysely'
import { backfillDescriptionText } from '../2026-12-08T00-search-description-text-backfill.js'

/**
 * The search documents already there rewritten with each description's text as a page shows
 * it, not its HTML (docs/decisions/0058-description-search-text.md). No schema change.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await backfillDescriptionText(db, '::uuid')
}
