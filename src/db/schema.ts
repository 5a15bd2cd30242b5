import type { ColumnType, Insertable, Kysely, Selectable, Transaction } from 'kysely'

/**
 * Row types of the tables, as Kysely sees them. They stay apart from the API's types:
 * the mappers in each feature's repository turn one into the other.
 *
 * Timestamps are written as ISO 8601 strings; SQLite returns them as such, PostgreSQL
 * (timestamptz) as Date objects. Money is stored as whole ten-thousandths (`*_e4`) so that
 * what a client sent comes back exactly; see catalog/money.ts.
 */
type Timestamp = ColumnType<Date | string, string, string>

export interface ApiKeyTable {
  id: string
  store_id: string
  name: string | null
  /** SHA-256 of the whole secret, hex. The secret itself is never stored. */
  key_hash: string
  /** Enough of the secret to recognise it in a list: `ck_AbCd…wXyZ`. */
  redacted: string
  /** Comma-separated, e.g. `read,write`. */
  scopes: string
  created_at: Timestamp
  revoked_at: Timestamp | null
}

export interface ProductTable {
  store_id: string
  id: string
  name: string
  slug: string
  status: string
  description: string | null
  price_e4: number
  compare_at_price_e4: number | null
  sku: string | null
  barcode: string | null
  tax_rate: number | null
  vendor: string | null
  product_type: string | null
  /** JSON array of strings, in the order sent; SQLite returns the text, PostgreSQL the array. */
  tags: ColumnType<string | string[], string, string>
  /** JSON array of {url, alt}; as tags. */
  images: ColumnType<string | ProductImage[], string, string>
  /** Custom attribute values, `{"<namespace>.<key>": value}`; SQLite returns the text, PostgreSQL the object. */
  metafields: ColumnType<string | Record<string, unknown>, string | undefined, string>
  /** The highest position among the product's variants, 0 when it has none. */
  max_variant_position: ColumnType<number, number | undefined, number>
  /** 1 at creation, plus 1 for each change of the product or of one of its variants. */
  version: ColumnType<number, number | undefined, number>
  created_at: Timestamp
  updated_at: Timestamp
}

export interface ProductImage {
  url: string
  alt: string | null
}

/**
 * One row per tag of a product, by its lowercased form, with the product's creation time:
 * a list filtered by tag is one range scan of (store_id, tag_key, created_at, product_id),
 * newest first, whatever the size of the store.
 */
export interface ProductTagTable {
  store_id: string
  product_id: string
  tag_key: string
  /** The product's status, kept equal to it (2026-11-26T04), for the tag-and-status index. */
  status: string
  created_at: Timestamp
}

/**
 * Per store and slug: how many times the slug itself was handed out (`claims`: 0, or 1 and
 * more once a product has it), and the highest N for which `<slug>-N` is known to be taken
 * (`last_suffix`, 1 when none is). The next free suffix is one upsert away, however many
 * products share a name.
 */
export interface SlugCounterTable {
  store_id: string
  slug: string
  claims: number
  last_suffix: number
  /** The base of a slug that looks suffixed (`t-shirt` of `t-shirt-7`), else null. */
  suffix_of: string | null
  /** Its suffix (7), else null. */
  suffix: number | null
}

/** A handle an import made into another slug, and the product it created (decision 0059). */
export interface ProductImportHandleTable {
  store_id: string
  handle: string
  product_id: string
}

export interface VariantTable {
  store_id: string
  id: string
  product_id: string
  name: string
  sku: string | null
  barcode: string | null
  price_e4: number
  compare_at_price_e4: number | null
  /** The options object as JSON text, in the order the client sent its keys. */
  options: ColumnType<string | Record<string, string>, string, string>
  /** SHA-256 of the options in canonical form (keys sorted); null when there are none. */
  options_key: string | null
  /** Custom attribute values, `{"<namespace>.<key>": value}`; SQLite returns the text, PostgreSQL the object. */
  metafields: ColumnType<string | Record<string, unknown>, string | undefined, string>
  position: number
  weight_grams: number | null
  version: ColumnType<number, number | undefined, number>
  created_at: Timestamp
  updated_at: Timestamp
}

/**
 * The answer of a request sent with an Idempotency-Key, kept for replay until `expires_at`.
 * `fingerprint` is the SHA-256 of its method, path and canonical body; `body` is JSON text.
 */
export interface IdempotencyKeyTable {
  store_id: string
  key: string
  fingerprint: string
  status: number
  body: string
  created_at: Timestamp
  expires_at: Timestamp
}

/**
 * One change of the catalogue, appended in the transaction of the change. Its position in the
 * feed is (xid, seq): on PostgreSQL the writing transaction's id (xid8, read as text) and a
 * sequence number; on SQLite, whose commits are serialized, seq alone (no xid column).
 * `object` is the record's row as JSON (after the change; before it, for a delete), `previous`
 * the row before an update; SQLite returns the text, PostgreSQL the parsed value.
 */
export interface EventTable {
  store_id: string
  xid: ColumnType<string, never, never>
  seq: ColumnType<number, never, never>
  id: string
  type: string
  object: ColumnType<string | Record<string, unknown>, string, string>
  previous: ColumnType<string | Record<string, unknown> | null, string | null, string | null>
  created_at: Timestamp
}

/** Per store, the position of the last event deleted by retention (xid '0' on SQLite). */
export interface EventPruningTable {
  store_id: string
  xid: string
  seq: number
}

/**
 * A store's webhook endpoint. `secret` is the signing secret as issued (`whsec_` + base64):
 * signing needs the key itself. `events` is a JSON array of event types, or `["*"]`.
 */
export interface WebhookEndpointTable {
  store_id: string
  id: string
  url: string
  /** SQLite returns the JSON text, PostgreSQL (jsonb) the array. */
  events: ColumnType<string | string[], string, string>
  description: string | null
  /** SQLite returns 0 or 1, PostgreSQL a boolean. */
  enabled: ColumnType<number | boolean, number | boolean, number | boolean>
  secret: string
  created_at: Timestamp
  updated_at: Timestamp
}

/** How many webhook endpoints a store has: the limit is checked on this row, atomically. */
export interface WebhookEndpointCountTable {
  store_id: string
  endpoints: number
}

/**
 * An import run by the HTTP job: its status, counts and first errors, written as it goes.
 * `instance_id` and `heartbeat_at` say which process runs it and when it last said so: a
 * running import whose heartbeat stops (its process died) is marked failed.
 */
export interface ImportTable {
  store_id: string
  id: string
  status: string
  rows_processed: ColumnType<number, number | undefined, number>
  products_created: ColumnType<number, number | undefined, number>
  products_updated: ColumnType<number, number | undefined, number>
  variants_created: ColumnType<number, number | undefined, number>
  variants_updated: ColumnType<number, number | undefined, number>
  rows_failed: ColumnType<number, number | undefined, number>
  /** JSON arrays; SQLite returns the text, PostgreSQL the parsed value. */
  columns_not_stored: ColumnType<string | string[], string | undefined, string>
  errors: ColumnType<string | unknown[], string | undefined, string>
  warnings: ColumnType<string | unknown[], string | undefined, string>
  skus_cleared: ColumnType<number, number | undefined, number>
  /** `http` (POST /imports) or `cli` (catalog import). */
  source: ColumnType<string, string | undefined, string>
  /** The --duplicate-skus / duplicate_skus choice: `fail` or `clear`. */
  duplicate_skus: ColumnType<string, string | undefined, string>
  products_failed: ColumnType<number, number | undefined, number>
  duplicate_sku_products: ColumnType<number, number | undefined, number>
  duplicate_sku_rows: ColumnType<number, number | undefined, number>
  /** Every error found; `errors` keeps the first 1,000. */
  error_count: ColumnType<number, number | undefined, number>
  failure_reason: string | null
  instance_id: string
  heartbeat_at: Timestamp
  created_at: Timestamp
  finished_at: Timestamp | null
}

/**
 * One event to send to one endpoint, enqueued by a trigger on `events` (migration
 * 2026-11-25T03). A pending delivery is due at `next_attempt_at` (the end of its lease while
 * an attempt runs); succeeded and failed ones have it null.
 */
export interface WebhookDeliveryTable {
  store_id: string
  id: string
  endpoint_id: string
  event_id: string
  event_type: string
  /** PostgreSQL: the event's xid8 as text; SQLite: '0'. */
  event_xid: string
  event_seq: number
  status: 'pending' | 'succeeded' | 'failed'
  attempts: number
  last_attempt_at: Timestamp | null
  last_status_code: number | null
  last_error: string | null
  next_attempt_at: Timestamp | null
  /**
   * Pending for one attempt asked by hand after the delivery had finished (2026-11-26T03):
   * if that attempt fails, the delivery is failed. SQLite: 0 or 1.
   */
  manual_retry: ColumnType<boolean | number, never, boolean | number>
  created_at: Timestamp
}

/** A custom attribute's definition (attributes/). */
export interface MetafieldDefinitionTable {
  store_id: string
  id: string
  owner: string
  namespace: string
  key: string
  type: string
  name: string
  description: string | null
  /** JSON object of the validations; SQLite returns the text. */
  validations: ColumnType<string | Record<string, unknown>, string, string>
  /** SQLite: 0 or 1. */
  filterable: ColumnType<boolean | number, boolean | number, boolean | number>
  searchable: ColumnType<boolean | number, boolean | number, boolean | number>
  version: ColumnType<number, number | undefined, number>
  created_at: Timestamp
  updated_at: Timestamp
}

/** Per store, a token renewed by every change of its metafield definitions (their cache's key). */
export interface MetafieldDefinitionStampTable {
  store_id: string
  token: string
}

/** How many definitions a store has per owner: the limit is checked on this row, atomically. */
export interface MetafieldDefinitionCountTable {
  store_id: string
  owner: string
  definitions: number
}

/**
 * One row per item of a filterable definition's value and record (a product, or a variant,
 * which counts for its product): `value` is the item's JSON text.
 */
export interface MetafieldValueTable {
  store_id: string
  definition_id: string
  value: string
  product_id: string
  record_id: string
}

/**
 * A product's search document (src/search): its text folded in JS; the engine's index is
 * derived by the database (PostgreSQL: the generated `document` tsvector; SQLite: the
 * contentless FTS5 table product_search_fts, kept by triggers, by `doc`).
 */
export interface ProductSearchTable {
  doc: ColumnType<number, never, never>
  store_id: string
  product_id: string
  name_words: string
  other_words: string
  name_key: string
  codes: string
  /** The product's fields search sorts and filters on, copied by triggers (decision 0033). */
  status: ColumnType<string | null, never, never>
  vendor: ColumnType<string | null, never, never>
  product_type: ColumnType<string | null, never, never>
  price_e4: ColumnType<number | string | null, never, never>
  created_at: ColumnType<string | Date | null, never, never>
  updated_at: ColumnType<string | Date | null, never, never>
}

/** A value of a product for a facet of many values (a tag, an option's value), without case. */
export interface SearchFacetTable {
  store_id: string
  product_id: string
  kind: string
  name_key: string
  value_key: string
  value: string
}

/** A collection (part 4): manual (rules null) or smart (rules a JSON array). */
export interface CollectionTable {
  store_id: string
  id: string
  title: string
  handle: string
  description: string | null
  kind: 'manual' | 'smart'
  /** JSON array of {field, relation, value}; SQLite returns the text, PostgreSQL the array. */
  rules: ColumnType<string | unknown[] | null, string | null, string | null>
  /** SQLite: 0 or 1. */
  disjunctive: ColumnType<boolean | number, boolean | number, boolean | number>
  sort_order: string
  version: ColumnType<number, number | undefined, number>
  created_at: Timestamp
  updated_at: Timestamp
}

/**
 * A product in a collection, with copies of the product's sort keys and status (kept equal
 * to them by every product write), so each sort order pages along an index. `position`: the
 * place in a manual collection (1 is first); null in a smart one.
 */
export interface CollectionProductTable {
  store_id: string
  collection_id: string
  product_id: string
  position: number | null
  created_at: Timestamp
  name_key: string
  price_e4: number
  status: string
  /** The sort index the row sits in, by its collection's sort order (sortedBy). */
  sorted_by: string
}

/**
 * Per store, a token renewed by every change of a smart collection's rules (create, PATCH of
 * its rules, delete): the rules read under one token are the same, so they can be cached.
 */
export interface CollectionRulesTokenTable {
  store_id: string
  token: string
}

export interface DB {
  metafield_definition_counts: MetafieldDefinitionCountTable
  metafield_definitions: MetafieldDefinitionTable
  metafield_definition_stamps: MetafieldDefinitionStampTable
  metafield_values: MetafieldValueTable
  api_keys: ApiKeyTable
  collection_handle_counters: SlugCounterTable
  collection_rules_tokens: CollectionRulesTokenTable
  collection_products: CollectionProductTable
  collections: CollectionTable
  event_pruning: EventPruningTable
  events: EventTable
  idempotency_keys: IdempotencyKeyTable
  imports: ImportTable
  product_import_handles: ProductImportHandleTable
  product_search: ProductSearchTable
  product_tags: ProductTagTable
  products: ProductTable
  search_facets: SearchFacetTable
  slug_counters: SlugCounterTable
  variants: VariantTable
  webhook_endpoint_counts: WebhookEndpointCountTable
  webhook_deliveries: WebhookDeliveryTable
  webhook_endpoints: WebhookEndpointTable
}

/** Anything queries can run on: the database itself or a transaction within it. */
export type Executor = Kysely<DB> | Transaction<DB>

export type ApiKeyRow = Selectable<ApiKeyTable>
export type NewApiKeyRow = Insertable<ApiKeyTable>
export type ProductRow = Selectable<ProductTable>
export type NewProductRow = Insertable<ProductTable>
export type VariantRow = Selectable<VariantTable>
export type NewVariantRow = Insertable<VariantTable>
export type MetafieldDefinitionRow = Selectable<MetafieldDefinitionTable>
export type WebhookEndpointRow = Selectable<WebhookEndpointTable>
export type CollectionRow = Selectable<CollectionTable>
