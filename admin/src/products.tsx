import { useEffect, useState } from 'preact/hooks'
import { call, type Product } from './api.js'
import {
  formatDate,
  formatPrice,
  navigate,
  Notice,
  Pager,
  type Session,
  StatusBadge,
  takeFlash,
  useFocusHeading,
} from './ui.js'

const PAGE_SIZE = 20
/** Where the filters and facets start unfolded: the width past which tables are not stacked. */
const WIDE_SCREEN = '(min-width: 721px)'

interface Filters {
  q: string
  status: string
  vendor: string
  tag: string
  slug: string
}

const NO_FILTERS: Filters = { q: '', status: '', vendor: '', tag: '', slug: '' }

/** The facets shown beside the list: counts of each value under the other filters. */
const FACETS = ['status', 'vendor', 'tag'] as const
type FacetName = (typeof FACETS)[number]
const FACET_LABELS: Record<FacetName, string> = { status: 'Status', vendor: 'Vendor', tag: 'Tag' }

interface ProductPage {
  data: Product[]
  nextCursor: string | null
  facets?: Partial<Record<FacetName, { value: string; count: number }[]>>
}

/** Where the list is: its filters, and the cursors of the pages walked through ('' the first). */
interface Place {
  filters: Filters
  cursors: string[]
}

const FILTER_NAMES = Object.keys(NO_FILTERS) as (keyof Filters)[]

/**
 * The place the address names: `#/products?tag=linen&cursor=…&cursor=…`, one `cursor` per page
 * walked past, so that Back, a reload or a bookmark shows the same page of the same filters.
 */
function placeOf(hash: string): Place {
  const params = new URLSearchParams(hash.split('?')[1] ?? '')
  const filters = { ...NO_FILTERS }
  for (const name of FILTER_NAMES) filters[name] = params.get(name) ?? ''
  return { filters, cursors: ['', ...params.getAll('cursor').filter((cursor) => cursor !== '')] }
}

function addressOf(place: Place): string {
  const params = new URLSearchParams()
  for (const name of FILTER_NAMES) {
    const value = place.filters[name].trim()
    if (value !== '') params.set(name, value)
  }
  for (const cursor of place.cursors.slice(1)) params.append('cursor', cursor)
  const query = params.toString()
  return query ? `#/products?${query}` : '#/products'
}

let lastAddress = '#/products'

/** The list as it was last shown, for a product page's way back to it. */
export function listAddress(): string {
  return lastAddress
}

function query(filters: Filters, cursor: string): string {
  const params = new URLSearchParams({ limit: String(PAGE_SIZE) })
  for (const [name, value] of Object.entries(filters)) {
    if (value.trim() !== '') params.set(name, value.trim())
  }
  params.set('facets', FACETS.join(','))
  if (cursor) params.set('cursor', cursor)
  return params.toString()
}

export function ProductList({ session }: { session: Session }) {
  const [place, setPlace] = useState<Place>(() => placeOf(location.hash))
  const { filters, cursors } = place
  const [draft, setDraft] = useState<Filters>(place.filters)
  const [page, setPage] = useState<ProductPage | null>(null)
  const [error, setError] = useState('')
  const [notice] = useState(takeFlash)
  const heading = useFocusHeading()
  // Folded by default on a narrow screen, so that the first products are on its first screen.
  const [refineOpen, setRefineOpen] = useState(() => matchMedia(WIDE_SCREEN).matches)
  const active = FILTER_NAMES.filter((name) => filters[name].trim() !== '').length

  // Back and Forward (and any link to the list) change the address: the list follows it.
  useEffect(() => {
    const follow = () => {
      const next = placeOf(location.hash)
      setPlace(next)
      setDraft(next.filters)
    }
    addEventListener('hashchange', follow)
    return () => removeEventListener('hashchange', follow)
  }, [])

  /** Shows a place by its address (a new history entry), or reads it again when it is current. */
  const go = (next: Place) => {
    const address = addressOf(next)
    if (location.hash === address) setPlace({ ...next })
    else location.hash = address
  }

  useEffect(() => {
    lastAddress = addressOf(place)
    let current = true
    setError('')
    call<ProductPage>('GET', `/products?${query(filters, cursors[cursors.length - 1]!)}`).then(
      (answer) => current && setPage(answer),
      (caught: unknown) => {
        if (!current) return
        session.onError(caught)
        setError(caught instanceof Error ? caught.message : String(caught))
      },
    )
    return () => {
      current = false
    }
  }, [place])

  const apply = (event: Event) => {
    event.preventDefault()
    go({ filters: draft, cursors: [''] })
  }
  const clear = () => {
    setDraft(NO_FILTERS)
    go({ filters: NO_FILTERS, cursors: [''] })
  }
  /** A facet's value chosen (or, chosen again, let go): the list is filtered by it at once. */
  const choose = (name: FacetName, value: string) => {
    const next = { ...filters, [name]: filters[name] === value ? '' : value }
    setDraft(next)
    go({ filters: next, cursors: [''] })
  }
  const field = (name: keyof Filters) => ({
    id: `filter-${name}`,
    value: draft[name],
    onInput: (event: { currentTarget: { value: string } }) =>
      setDraft({ ...draft, [name]: event.currentTarget.value }),
  })

  return (
    <section aria-labelledby="products-heading">
      <div class="page-head">
        <h1 id="products-heading" ref={heading} tabIndex={-1}>
          Products
        </h1>
        {session.writable && (
          <button type="button" class="primary" onClick={() => navigate('#/products/new')}>
            New product
          </button>
        )}
      </div>
      <details
        class="card refine"
        open={refineOpen}
        onToggle={(event) => setRefineOpen(event.currentTarget.open)}
      >
        <summary>
          Filters
          {active > 0 && <span class="refine-active">({active} applied)</span>}
        </summary>
        <div class="refine-body">
          <form class="filters" onSubmit={apply} aria-label="Filters">
            <div class="filter filter-search">
              <label for="filter-q">Search</label>
              <input type="search" placeholder="Name, sku, tag…" {...field('q')} />
            </div>
            <div class="filter">
              <label for="filter-status">Status</label>
              <select {...field('status')}>
                <option value="">Any</option>
                <option value="draft">Draft</option>
                <option value="active">Active</option>
                <option value="archived">Archived</option>
              </select>
            </div>
            <div class="filter">
              <label for="filter-vendor">Vendor</label>
              <input type="text" {...field('vendor')} />
            </div>
            <div class="filter">
              <label for="filter-tag">Tag</label>
              <input type="text" {...field('tag')} />
            </div>
            <div class="filter">
              <label for="filter-slug">Slug</label>
              <input type="text" {...field('slug')} />
            </div>
            <div class="filter-actions">
              <button type="submit">Filter</button>
              <button type="button" class="ghost" onClick={clear}>
                Clear
              </button>
            </div>
          </form>
          {page?.facets && (
            <nav class="facets" aria-label="Refine by">
              {FACETS.map((name) => (
                <div class="facet" key={name}>
                  <h2 class="facet-name">{FACET_LABELS[name]}</h2>
                  <ul>
                    {(page.facets?.[name] ?? []).slice(0, 8).map(({ value, count }) => (
                      <li key={value}>
                        <button
                          type="button"
                          class="ghost facet-value"
                          aria-pressed={filters[name].toLowerCase() === value.toLowerCase()}
                          onClick={() => choose(name, value)}
                        >
                          {value} <span class="facet-count">({count})</span>
                        </button>
                      </li>
                    ))}
                    {(page.facets?.[name] ?? []).length === 0 && <li class="facet-none">None</li>}
                  </ul>
                </div>
              ))}
            </nav>
          )}
        </div>
      </details>
      {notice && <Notice kind="success">{notice}</Notice>}
      {error && <Notice kind="error">{error}</Notice>}
      <div class="card table-card">
        <table class="table table-stack">
          <caption class="visually-hidden">
            {filters.q.trim() ? 'Products found, best match first' : 'Products, newest first'}
          </caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Slug</th>
              <th scope="col">Status</th>
              <th scope="col" class="number">
                Price
              </th>
              <th scope="col">Last updated</th>
            </tr>
          </thead>
          <tbody aria-busy={page === null ? 'true' : 'false'}>
            {page?.data.map((product) => (
              <tr key={product.id}>
                <td>
                  <a href={`#/products/${encodeURIComponent(product.id)}`}>{product.name}</a>
                </td>
                <td class="mono" data-label="Slug">
                  {product.slug}
                </td>
                <td data-label="Status">
                  <StatusBadge status={product.status} />
                </td>
                <td class="number" data-label="Price">
                  {formatPrice(product.price)}
                </td>
                <td data-label="Last updated">
                  <time dateTime={product.updatedAt}>{formatDate(product.updatedAt)}</time>
                </td>
              </tr>
            ))}
            {page && page.data.length === 0 && (
              <tr>
                <td colSpan={5} class="empty">
                  No products match.
                </td>
              </tr>
            )}
          </tbody>
        </table>
      </div>
      <Pager
        label="Pages"
        cursors={cursors}
        nextCursor={page?.nextCursor ?? null}
        onChange={(next) => go({ filters, cursors: next })}
      />
    </section>
  )
}
