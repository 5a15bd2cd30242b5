import { useEffect, useState } from 'preact/hooks'
import { call, type Collection } from './api.js'
import {
  formatDate,
  navigate,
  Notice,
  Pager,
  type Session,
  takeFlash,
  useFocusHeading,
} from './ui.js'

const PAGE_SIZE = 20

interface CollectionPageAnswer {
  data: Collection[]
  nextCursor: string | null
}

/** The cursors of the pages walked through, kept while the tab lives (as the products list). */
const kept = { cursors: [''] }

export const KIND_LABEL = { manual: 'Manual', smart: 'Smart' } as const

export function KindBadge({ kind }: { kind: Collection['kind'] }) {
  return <span class={`badge badge-${kind}`}>{KIND_LABEL[kind]}</span>
}

/** The store's collections (`#/collections`), newest first, a page at a time. */
export function CollectionList({ session }: { session: Session }) {
  const [cursors, setCursors] = useState<string[]>(kept.cursors)
  const [page, setPage] = useState<CollectionPageAnswer | null>(null)
  const [error, setError] = useState('')
  const [notice] = useState(takeFlash)
  const heading = useFocusHeading()

  useEffect(() => {
    kept.cursors = cursors
    let current = true
    const params = new URLSearchParams({ limit: String(PAGE_SIZE) })
    const cursor = cursors[cursors.length - 1]!
    if (cursor) params.set('cursor', cursor)
    setError('')
    call<CollectionPageAnswer>('GET', `/collections?${params}`).then(
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
  }, [cursors])

  return (
    <section aria-labelledby="collections-heading">
      <div class="page-head">
        <h1 id="collections-heading" ref={heading} tabIndex={-1}>
          Collections
        </h1>
        {session.writable && (
          <button type="button" class="primary" onClick={() => navigate('#/collections/new')}>
            New collection
          </button>
        )}
      </div>
      <p class="lead">
        A manual collection holds the products you add, in your order; a smart one holds every
        product its conditions match, kept up to date as products change.
      </p>
      {notice && <Notice kind="success">{notice}</Notice>}
      {error && <Notice kind="error">{error}</Notice>}
      <div class="card table-card">
        <table class="table collections">
          <caption class="visually-hidden">Collections, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Title</th>
              <th scope="col">Handle</th>
              <th scope="col">Kind</th>
              <th scope="col" class="number">
                Products
              </th>
              <th scope="col">Last updated</th>
            </tr>
          </thead>
          <tbody aria-busy={page === null ? 'true' : 'false'}>
            {page?.data.map((collection) => (
              <tr key={collection.id}>
                <td>
                  <a href={`#/collections/${encodeURIComponent(collection.id)}`}>
                    {collection.title}
                  </a>
                </td>
                <td class="mono">{collection.handle}</td>
                <td>
                  <KindBadge kind={collection.kind} />
                </td>
                <td class="number">{collection.productsCount}</td>
                <td>
                  <time dateTime={collection.updatedAt}>{formatDate(collection.updatedAt)}</time>
                </td>
              </tr>
            ))}
            {page && page.data.length === 0 && (
              <tr>
                <td colSpan={5} class="empty">
                  No collections yet.
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
        onChange={setCursors}
      />
    </section>
  )
}
