import { Migrator, sql, type Migration, type MigrationResult } from 'kysely'
import type { Database, Dialect } from './database.js'
import * as postgresIdempotencyKeys from './migrations/postgres/2026-11-22T00-idempotency-keys.js'
import * as postgresInitial from './migrations/postgres/2026-11-21T00-initial.js'
import * as postgresManageCatalog from './migrations/postgres/2026-11-24T00-manage-catalog.js'
import * as postgresEvents from './migrations/postgres/2026-11-25T00-events.js'
import * as sqliteIdempotencyKeys from './migrations/sqlite/2026-11-22T00-idempotency-keys.js'
import * as sqliteInitial from './migrations/sqlite/2026-11-21T00-initial.js'
import * as sqliteManageCatalog from './migrations/sqlite/2026-11-24T00-manage-catalog.js'
import * as sqliteEvents from './migrations/sqlite/2026-11-25T00-events.js'
import * as postgresWebhooks from './migrations/postgres/2026-11-25T01-webhooks.js'
import * as sqliteWebhooks from './migrations/sqlite/2026-11-25T01-webhooks.js'
import * as postgresImports from './migrations/postgres/2026-11-25T02-imports.js'
import * as sqliteImports from './migrations/sqlite/2026-11-25T02-imports.js'
import * as postgresWebhookDeliveries from './migrations/postgres/2026-11-25T03-webhook-deliveries.js'
import * as sqliteWebhookDeliveries from './migrations/sqlite/2026-11-25T03-webhook-deliveries.js'
import * as postgresDeliveriesByEndpoint from './migrations/postgres/2026-11-26T00-webhook-deliveries-by-endpoint.js'
import * as sqliteDeliveriesByEndpoint from './migrations/sqlite/2026-11-26T00-webhook-deliveries-by-endpoint.js'
import * as sqliteDeliveryIdsInTimeOrder from './migrations/sqlite/2026-11-26T02-delivery-ids-in-time-order.js'
import * as postgresDeliveriesWithoutNotify from './migrations/postgres/2026-11-26T01-deliveries-without-notify.js'
import * as postgresDeliveryIdsInTimeOrder from './migrations/postgres/2026-11-26T02-delivery-ids-in-time-order.js'
import * as postgresManualRetries from './migrations/postgres/2026-11-26T03-manual-retries.js'
import * as sqliteManualRetries from './migrations/sqlite/2026-11-26T03-manual-retries.js'
import * as postgresFiltersWithStatus from './migrations/postgres/2026-11-26T04-filters-with-status.js'
import * as sqliteFiltersWithStatus from './migrations/sqlite/2026-11-26T04-filters-with-status.js'
import * as postgresNoDueIndex from './migrations/postgres/2026-11-26T05-no-due-index.js'
import * as sqliteNoDueIndex from './migrations/sqlite/2026-11-26T05-no-due-index.js'
import * as postgresImportsNewest from './migrations/postgres/2026-11-27T00-imports-newest.js'
import * as sqliteImportsNewest from './migrations/sqlite/2026-11-27T00-imports-newest.js'
import * as postgresSlugSuffixes from './migrations/postgres/2026-11-29T00-slug-suffixes.js'
import * as sqliteSlugSuffixes from './migrations/sqlite/2026-11-29T00-slug-suffixes.js'
import * as postgresImportWarnings from './migrations/postgres/2026-11-29T01-import-warnings.js'
import * as sqliteImportWarnings from './migrations/sqlite/2026-11-29T01-import-warnings.js'
import * as postgresSearch from './migrations/postgres/2026-11-30T00-search.js'
import * as sqliteSearch from './migrations/sqlite/2026-11-30T00-search.js'
import * as postgresCollections from './migrations/postgres/2026-11-30T02-collections.js'
import * as sqliteCollections from './migrations/sqlite/2026-11-30T02-collections.js'
import * as postgresMetafields from './migrations/postgres/2026-11-30T01-metafields.js'
import * as sqliteMetafields from './migrations/sqlite/2026-11-30T01-metafields.js'
import * as postgresCollectionRulesState from './migrations/postgres/2026-11-30T03-collection-rules-state.js'
import * as postgresDefinitionStamps from './migrations/postgres/2026-11-30T04-metafield-definition-stamps.js'
import * as sqliteDefinitionStamps from './migrations/sqlite/2026-11-30T04-metafield-definition-stamps.js'
import * as postgresSearchKeys from './migrations/postgres/2026-11-30T05-search-keys.js'
import * as sqliteSearchKeys from './migrations/sqlite/2026-11-30T05-search-keys.js'
import * as sqliteSearchKeysWritten from './migrations/sqlite/2026-11-30T07-search-keys-written.js'
import * as postgresCollectionSortIndexes from './migrations/postgres/2026-11-30T06-collection-sort-indexes.js'
import * as sqliteCollectionSortIndexes from './migrations/sqlite/2026-11-30T06-collection-sort-indexes.js'
import * as postgresMetafieldValuesByProduct from './migrations/postgres/2026-11-30T08-metafield-values-by-product.js'
import * as postgresProductWriteReads from './migrations/postgres/2026-11-30T11-product-write-reads.js'
import * as postgresProductWriteStatePlpgsql from './migrations/postgres/2026-11-30T12-product-write-state-plpgsql.js'
import * as sqliteMetafieldValuesByProduct from './migrations/sqlite/2026-11-30T08-metafield-values-by-product.js'
import * as postgresProductImportHandles from './migrations/postgres/2026-12-08T00-product-import-handles.js'
import * as sqliteProductImportHandles from './migrations/sqlite/2026-12-08T00-product-import-handles.js'
import * as postgresMetafieldValuesWithoutForeignKeys from './migrations/postgres/2026-11-30T10-metafield-values-without-foreign-keys.js'
import * as postgresSearchDescriptionText from './migrations/postgres/2026-12-08T00-search-description-text.js'
import * as sqliteSearchDescriptionText from './migrations/sqlite/2026-12-08T00-search-description-text.js'
import * as postgresStoreRulesLock from './migrations/postgres/2026-12-08T01-store-rules-lock.js'
import * as postgresImportSources from './migrations/postgres/2026-12-08T00-import-sources.js'
import * as sqliteImportSources from './migrations/sqlite/2026-12-08T00-import-sources.js'

/** Each dialect's migrations, by name; names sort in the order they are applied. */
const MIGRATIONS: Record<Dialect, Record<string, Migration>> = {
  sqlite: {
    '2026-11-21T00-initial': sqliteInitial,
    '2026-11-22T00-idempotency-keys': sqliteIdempotencyKeys,
    '2026-11-24T00-manage-catalog': sqliteManageCatalog,
    '2026-11-25T00-events': sqliteEvents,
    '2026-11-25T01-webhooks': sqliteWebhooks,
    '2026-11-25T02-imports': sqliteImports,
    '2026-11-25T03-webhook-deliveries': sqliteWebhookDeliveries,
    '2026-11-26T00-webhook-deliveries-by-endpoint': sqliteDeliveriesByEndpoint,
    '2026-11-26T02-delivery-ids-in-time-order': sqliteDeliveryIdsInTimeOrder,
    '2026-11-26T03-manual-retries': sqliteManualRetries,
    '2026-11-26T04-filters-with-status': sqliteFiltersWithStatus,
    '2026-11-26T05-no-due-index': sqliteNoDueIndex,
    '2026-11-27T00-imports-newest': sqliteImportsNewest,
    '2026-11-29T00-slug-suffixes': sqliteSlugSuffixes,
    '2026-11-29T01-import-warnings': sqliteImportWarnings,
    '2026-11-30T00-search': sqliteSearch,
    '2026-11-30T02-collections': sqliteCollections,
    '2026-11-30T01-metafields': sqliteMetafields,
    '2026-11-30T04-metafield-definition-stamps': sqliteDefinitionStamps,
    '2026-11-30T05-search-keys': sqliteSearchKeys,
    '2026-11-30T06-collection-sort-indexes': sqliteCollectionSortIndexes,
    '2026-11-30T07-search-keys-written': sqliteSearchKeysWritten,
    '2026-11-30T08-metafield-values-by-product': sqliteMetafieldValuesByProduct,
    '2026-12-08T00-import-sources': sqliteImportSources,
    '2026-12-08T00-product-import-handles': sqliteProductImportHandles,
    '2026-12-08T00-search-description-text': sqliteSearchDescriptionText,
  },
  postgres: {
    '2026-11-21T00-initial': postgresInitial,
    '2026-11-22T00-idempotency-keys': postgresIdempotencyKeys,
    '2026-11-24T00-manage-catalog': postgresManageCatalog,
    '2026-11-25T00-events': postgresEvents,
    '2026-11-25T01-webhooks': postgresWebhooks,
    '2026-11-25T02-imports': postgresImports,
    '2026-11-25T03-webhook-deliveries': postgresWebhookDeliveries,
    '2026-11-26T00-webhook-deliveries-by-endpoint': postgresDeliveriesByEndpoint,
    // PostgreSQL only: SQLite's trigger never notified anyone.
    '2026-11-26T01-deliveries-without-notify': postgresDeliveriesWithoutNotify,
    '2026-11-26T02-delivery-ids-in-time-order': postgresDeliveryIdsInTimeOrder,
    '2026-11-26T03-manual-retries': postgresManualRetries,
    '2026-11-26T04-filters-with-status': postgresFiltersWithStatus,
    '2026-11-26T05-no-due-index': postgresNoDueIndex,
    '2026-11-27T00-imports-newest': postgresImportsNewest,
    '2026-11-29T00-slug-suffixes': postgresSlugSuffixes,
    '2026-11-29T01-import-warnings': postgresImportWarnings,
    '2026-11-30T00-search': postgresSearch,
    '2026-11-30T02-collections': postgresCollections,
    '2026-11-30T01-metafields': postgresMetafields,
    // PostgreSQL only: SQLite runs one write at a time and takes no lock.
    '2026-11-30T03-collection-rules-state': postgresCollectionRulesState,
    '2026-11-30T04-metafield-definition-stamps': postgresDefinitionStamps,
    '2026-11-30T05-search-keys': postgresSearchKeys,
    '2026-11-30T06-collection-sort-indexes': postgresCollectionSortIndexes,
    '2026-11-30T08-metafield-values-by-product': postgresMetafieldValuesByProduct,
    // PostgreSQL only: SQLite's foreign key check is an index probe in process.
    '2026-11-30T10-metafield-values-without-foreign-keys':
      postgresMetafieldValuesWithoutForeignKeys,
    '2026-11-30T11-product-write-reads': postgresProductWriteReads,
    '2026-11-30T12-product-write-state-plpgsql': postgresProductWriteStatePlpgsql,
    '2026-12-08T00-import-sources': postgresImportSources,
    '2026-12-08T00-product-import-handles': postgresProductImportHandles,
    '2026-12-08T00-search-description-text': postgresSearchDescriptionText,
    '2026-12-08T01-store-rules-lock': postgresStoreRulesLock,
  },
}

/** Applies every pending migration; returns the names applied (none when up to date). */
export async function migrateToLatest(database: Database): Promise<string[]> {
  const migrator = new Migrator({
    db: database.kysely,
    provider: { getMigrations: async () => MIGRATIONS[database.dialect] },
    // Without a schema named, Kysely looks for its bookkeeping tables in every schema of the
    // database and takes another schema's for its own.
    migrationTableSchema: await currentSchema(database),
  })
  const { error, results } = await migrator.migrateToLatest()
  if (error) throw error
  return (results ?? [])
    .filter((result: MigrationResult) => result.status === 'Success')
    .map((result) => result.migrationName)
}

async function currentSchema(database: Database): Promise<string | undefined> {
  if (database.dialect !== 'postgres') return undefined
  const { rows } = await sql<{ schema: string }>`select current_schema() as schema`.execute(
    database.kysely,
  )
  return rows[0]?.schema
}
