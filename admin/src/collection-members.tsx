import { useEffect, useState } from 'preact/hooks'
import { call, type Collection, type Product } from './api.js'
import { fieldMessages, formatPrice, Notice, Pager, type Session, StatusBadge } from './ui.js'

const PAGE_SIZE = 20
const RESULTS = 10

interface Page {
  data: Product[]
  nextCursor: string | null
}

const path = (collection: Collection, productId?: string) =>
  `/collections/${encodeURIComponent(collection.id)}/products${
    productId === undefined ? '' : `/${encodeURIComponent(productId)}`
  }`

/**
 * A collection's products in its order. A manual one's are found by the product search (`q`) and added,
 * moved up or down (PATCH of the member's position), removed. Membership is not a field of
 * the collection, so none of this needs its version; each answer brings its new count.
 */
export function CollectionMembers(props: {
  collection: Collection
  session: Session
  onChanged(collection: Collection): void
}) {
  const { collection, session } = props
  const editable = session.writable && collection.kind === 'manual'
  const [cursors, setCursors] = useState<string[]>([''])
  const [page, setPage] = useState<Page | null>(null)
  const [error, setError] = useState<unknown>(null)
  const [notice, setNotice] = useState('')
  const [busy, setBusy] = useState(false)
  const [q, setQ] = useState('')
  const [results, setResults] = useState<Product[] | null>(null)

  const readPage = () => {
    const params = new URLSearchParams({ limit: String(PAGE_SIZE) })
    const cursor = cursors[cursors.length - 1]!
    if (cursor) params.set('cursor', cursor)
    return call<Page>('GET', `${path(collection)}?${params}`)
  }
  useEffect(() => {
    let current = true
    readPage().then(
      (answer) => current && setPage(answer),
      (caught: unknown) => {
        if (!current) return
        session.onError(caught)
        setError(caught)
      },
    )
    return () => {
      current = false
    }
  }, [cursors])

  /** Runs one change of the members, then reads the page again before saying it is done. */
  const change = async (
    run: () => Promise<{ data: Collection }>,
    done: (c: Collection) => string,
  ) => {
    setBusy(true)
    setError(null)
    setNotice('')
    try {
      const { data } = await run()
      setPage(await readPage())
      props.onChanged(data)
      setNotice(done(data))
    } catch (caught) {
      session.onError(caught)
      setError(caught)
    } finally {
      setBusy(false)
    }
  }

  const add = (product: Product) =>
    change(
      () => call('POST', path(collection), { body: { product_ids: [product.id] } }),
      (data) =>
        data.productsCount === collection.productsCount
          ? `“${product.name}” is already in this collection.`
          : `Added “${product.name}”.`,
    )
  const move = (product: Product, position: number) =>
    change(
      () => call('PATCH', path(collection, product.id), { body: { position } }),
      () => `Moved “${product.name}” to position ${position}.`,
    )
  const remove = (product: Product) =>
    change(
      () => call('DELETE', path(collection, product.id)),
      () => `Removed “${product.name}”.`,
    )

  const search = async (event: Event) => {
    event.preventDefault()
    setError(null)
    setNotice('')
    try {
      const params = new URLSearchParams({ q: q.trim(), limit: String(RESULTS) })
      const answer = await call<Page>('GET', `/products?${params}`)
      setResults(answer.data)
    } catch (caught) {
      session.onError(caught)
      setError(caught)
      setResults(null)
    }
  }

  const offset = (cursors.length - 1) * PAGE_SIZE
  const searchErrors = fieldMessages(error, 'q')
  const generalError =
    error && searchErrors.length === 0
      ? error instanceof Error
        ? error.message
        : String(error)
      : ''

  return (
    <section class="card members" aria-labelledby="members-heading">
      <h2 id="members-heading">Products in this collection</h2>
      {notice && <Notice kind="success">{notice}</Notice>}
      {generalError && <Notice kind="error">{generalError}</Notice>}
      {editable && (
        <form class="member-search" onSubmit={search} role="search" aria-label="Add products">
          <div class="field">
            <label for="member-q">Find products to add</label>
            <input
              id="member-q"
              type="search"
              placeholder="Name, sku, tag…"
              value={q}
              aria-invalid={searchErrors.length > 0 ? 'true' : undefined}
              aria-describedby={searchErrors.length > 0 ? 'member-q-error' : undefined}
              onInput={(e) => setQ(e.currentTarget.value)}
            />
            {searchErrors.length > 0 && (
              <p class="field-error" id="member-q-error">
                {searchErrors.join(' ')}
              </p>
            )}
          </div>
          <button type="submit">Search</button>
        </form>
      )}
      {results && (
        <ul class="search-results" aria-label="Products found">
          {results.map((product) => (
            <li key={product.id}>
              <span>{product.name}</span> <span class="mono muted">{product.slug}</span>
              <button
                type="button"
                disabled={busy}
                aria-label={`Add “${product.name}”`}
                onClick={() => void add(product)}
              >
                Add
              </button>
            </li>
          ))}
          {results.length === 0 && <li class="muted">No product found.</li>}
        </ul>
      )}
      <div class="table-scroll">
        <table class="table member-table">
          <caption class="visually-hidden">Products in the collection’s order</caption>
          <thead>
            <tr>
              <th scope="col" class="number">
                #
              </th>
              <th scope="col">Name</th>
              <th scope="col">Status</th>
              <th scope="col" class="number">
                Price
              </th>
              {editable && <th scope="col">Order</th>}
            </tr>
          </thead>
          <tbody aria-busy={page === null ? 'true' : 'false'}>
            {page?.data.map((product, i) => {
              const position = offset + i + 1
              const last = page.nextCursor === null && i === page.data.length - 1
              return (
                <tr key={product.id}>
                  <td class="number">{position}</td>
                  <td>
                    <a href={`#/products/${encodeURIComponent(product.id)}`}>{product.name}</a>
                  </td>
                  <td>
                    <StatusBadge status={product.status} />
                  </td>
                  <td class="number">{formatPrice(product.price)}</td>
                  {editable && (
                    <td class="row-actions">
                      <button
                        type="button"
                        disabled={busy || position === 1}
                        aria-label={`Move “${product.name}” up`}
                        onClick={() => void move(product, position - 1)}
                      >
                        ↑
                      </button>
                      <button
                        type="button"
                        disabled={busy || last}
                        aria-label={`Move “${product.name}” down`}
                        onClick={() => void move(product, position + 1)}
                      >
                        ↓
                      </button>
                      <button
                        type="button"
                        class="ghost"
                        disabled={busy}
                        aria-label={`Remove “${product.name}”`}
                        onClick={() => void remove(product)}
                      >
                        Remove
                      </button>
                    </td>
                  )}
                </tr>
              )
            })}
            {page && page.data.length === 0 && (
              <tr>
                <td colSpan={editable ? 5 : 4} class="empty">
                  No products yet.
                </td>
              </tr>
            )}
          </tbody>
        </table>
      </div>
      <Pager
        label="Pages of the collection’s products"
        cursors={cursors}
        nextCursor={page?.nextCursor ?? null}
        onChange={setCursors}
      />
    </section>
  )
}
