import type { Collection, CollectionSortOrder } from './api.js'

/** How a collection reads: its sort orders in words, and its details for a read-only key. */

type Kind = Collection['kind']

export const SORT_LABEL: Record<CollectionSortOrder, string> = {
  manual: 'Manual (the order you set)',
  newest: 'Newest first',
  oldest: 'Oldest first',
  name: 'Name, A to Z',
  '-name': 'Name, Z to A',
  price: 'Price, lowest first',
  '-price': 'Price, highest first',
}
/** The sort orders a collection of this kind takes (manual only for manual ones). */
export const sortOrders = (kind: Kind) =>
  (Object.keys(SORT_LABEL) as CollectionSortOrder[]).filter(
    (s) => kind === 'manual' || s !== 'manual',
  )

/** A collection's details and conditions as text, for a key that may only read. */
export function ReadOnlyDetails({ collection }: { collection: Collection }) {
  return (
    <div class="card">
      <h2>Details</h2>
      <dl class="details">
        <div>
          <dt>Description</dt>
          <dd>{collection.description || '—'}</dd>
        </div>
        <div>
          <dt>Sort order</dt>
          <dd>{SORT_LABEL[collection.sortOrder]}</dd>
        </div>
        {collection.rules && (
          <div>
            <dt>Conditions ({collection.disjunctive ? 'any' : 'all'})</dt>
            <dd>
              <ul class="rules-text">
                {collection.rules.map((rule, i) => (
                  <li key={i} class="mono">
                    {rule.field} {rule.relation} {String(rule.value)}
                  </li>
                ))}
              </ul>
            </dd>
          </div>
        )}
      </dl>
    </div>
  )
}
