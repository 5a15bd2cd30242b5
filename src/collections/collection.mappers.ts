import type { CollectionRow } from '../db/schema.js'
import { toIso } from '../db/values.js'
import type { Collection } from './collection.schemas.js'
import type { SortOrder } from './membership/sort-orders.js'
import type { Rule } from './membership/rules.js'

/** A collection row as an event's object keeps it: the row, with its count at that moment. */
export type CollectionEventRow = CollectionRow & { products_count: number }

export function rowToCollection(row: CollectionRow, productsCount: number): Collection {
  const rules = typeof row.rules === 'string' ? JSON.parse(row.rules) : row.rules
  return {
    id: row.id,
    title: row.title,
    handle: row.handle,
    description: row.description,
    kind: row.kind,
    rules: (rules ?? null) as Rule[] | null,
    disjunctive: Boolean(row.disjunctive),
    sortOrder: row.sort_order as SortOrder,
    productsCount,
    version: row.version,
    createdAt: toIso(row.created_at),
    updatedAt: toIso(row.updated_at),
  }
}

/** The record of a collection.* event's stored row. */
export function eventRowToCollection(row: CollectionEventRow): Collection {
  return rowToCollection(row, Number(row.products_count ?? 0))
}
