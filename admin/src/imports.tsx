import { useEffect, useState } from 'preact/hooks'
import { ApiError, call, fetchFile, type ImportJob, type ImportListItem } from './api.js'
import { formatDate, navigate, Notice, Pager, type Session, useFocusHeading } from './ui.js'

/** Imports listed a page at a time under Recent imports. */
const RECENT_PAGE_SIZE = 10

/** How often a running import is asked about. */
const POLL_MS = 1000
/** GET /imports/:id keeps an import's first errors only. */
const ERRORS_KEPT = 1000

const STATUS_LABEL: Record<ImportJob['status'], string> = {
  running: 'Running',
  succeeded: 'Succeeded',
  failed: 'Failed',
}

/** The summary's counts, in the order the CLI prints them. */
type Count =
  | 'rowsProcessed'
  | 'productsCreated'
  | 'productsUpdated'
  | 'variantsCreated'
  | 'variantsUpdated'
  | 'rowsFailed'

const COUNTS: { key: Count; label: string }[] = [
  { key: 'rowsProcessed', label: 'Rows processed' },
  { key: 'productsCreated', label: 'Products created' },
  { key: 'productsUpdated', label: 'Products updated' },
  { key: 'variantsCreated', label: 'Variants created' },
  { key: 'variantsUpdated', label: 'Variants updated' },
  { key: 'rowsFailed', label: 'Rows failed' },
]

/** A count as the page's dates are written (en-GB): 1,500. */
const formatCount = (count: number) => count.toLocaleString('en-GB')

/**
 * An import's status in words: one that finished with failed rows says so (amber), never a
 * green "Succeeded" over rows that were not imported.
 */
function statusLabel(job: ImportListItem): string {
  if (job.status === 'succeeded' && job.rowsFailed > 0) {
    return `Finished with ${formatCount(job.rowsFailed)} failed ${job.rowsFailed === 1 ? 'row' : 'rows'}`
  }
  return STATUS_LABEL[job.status]
}

function ImportBadge({ job }: { job: ImportListItem }) {
  const kind = job.status === 'succeeded' && job.rowsFailed > 0 ? 'partial' : job.status
  return <span class={`badge badge-import-${kind}`}>{statusLabel(job)}</span>
}

const messageOf = (caught: unknown) => (caught instanceof Error ? caught.message : String(caught))

/** Import a Shopify product CSV (`#/imports`), follow one import (`#/imports/<id>`), export. */
export function ImportExportPage({ id, session }: { id: string | null; session: Session }) {
  const heading = useFocusHeading()
  return (
    <section class="imports" aria-labelledby="imports-heading">
      <div class="page-head">
        <h1 id="imports-heading" tabIndex={-1} ref={heading}>
          Import & export
        </h1>
      </div>
      {id === null ? <ImportForm session={session} /> : <ImportResult id={id} session={session} />}
      <ExportSection session={session} />
      {id === null && <RecentImports session={session} />}
    </section>
  )
}

function ImportForm({ session }: { session: Session }) {
  const [file, setFile] = useState<File | null>(null)
  const [clearSkus, setClearSkus] = useState(false)
  const [createDefinitions, setCreateDefinitions] = useState(false)
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState('')

  const send = async (event: Event) => {
    event.preventDefault()
    if (!file) return
    setBusy(true)
    setError('')
    try {
      // The file goes as it is: the API streams it to disk, so it is never read here.
      // The choices are the query parameters of POST /imports; left out, the API's defaults.
      const query = new URLSearchParams()
      if (clearSkus) query.set('duplicate_skus', 'clear')
      if (createDefinitions) query.set('create_definitions', 'true')
      const path = query.toString() ? `/imports?${query}` : '/imports'
      const { data } = await call<{ data: ImportJob }>('POST', path, {
        raw: { body: file, type: 'text/csv' },
      })
      navigate(`#/imports/${encodeURIComponent(data.id)}`)
    } catch (caught) {
      session.onError(caught)
      setError(messageOf(caught))
      setBusy(false)
    }
  }

  return (
    <section class="card" aria-labelledby="import-heading">
      <h2 id="import-heading">Import products</h2>
      {session.writable ? (
        <>
          <p>
            Bring products in from a Shopify product CSV, with the classic or the 2025 column names.
            Products are matched by their handle and variants by their SKU, so importing a file
            again updates what it imported before rather than adding copies. Nothing is deleted.
            Each product is imported whole or skipped, and the rows of a skipped product are listed
            with their errors.
          </p>
          {error && (
            <div id="import-file-error">
              <Notice kind="error">{error}</Notice>
            </div>
          )}
          <form class="import-form" onSubmit={send} noValidate>
            <div class="field">
              <label for="import-file">CSV file</label>
              <input
                id="import-file"
                name="file"
                type="file"
                accept=".csv,text/csv"
                aria-describedby={error ? 'import-file-error import-file-help' : 'import-file-help'}
                aria-invalid={error ? 'true' : undefined}
                onChange={(event) => {
                  setFile(event.currentTarget.files?.[0] ?? null)
                  setError('')
                }}
              />
              <p class="help" id="import-file-help">
                The import runs in the background; this page follows it until it ends.
              </p>
            </div>
            <fieldset class="checks import-options">
              <legend>Options</legend>
              <label class="checkbox" for="import-clear-skus">
                <input
                  id="import-clear-skus"
                  type="checkbox"
                  checked={clearSkus}
                  aria-describedby="import-clear-skus-help"
                  onChange={(event) => setClearSkus(event.currentTarget.checked)}
                />
                Import a variant whose SKU is taken without its SKU
              </label>
              <p class="help" id="import-clear-skus-help">
                By default a product with a variant whose SKU another product already uses (or an
                earlier row) is skipped, with a <code>duplicate_sku</code> error. Checked, the
                variant is imported without its SKU and the row is listed as a warning (the API’s{' '}
                <code>duplicate_skus=clear</code>). Real Shopify exports often share SKUs.
              </p>
              <label class="checkbox" for="import-create-definitions">
                <input
                  id="import-create-definitions"
                  type="checkbox"
                  checked={createDefinitions}
                  aria-describedby="import-create-definitions-help"
                  onChange={(event) => setCreateDefinitions(event.currentTarget.checked)}
                />
                Create the missing custom attributes
              </label>
              <p class="help" id="import-create-definitions-help">
                A column <code>Label (product.metafields.NS.KEY)</code> or{' '}
                <code>(variant.metafields.NS.KEY)</code> is stored only when a custom attribute of
                that owner, namespace and key exists. Checked, those missing are created first,
                named by the column’s label: a list of texts when a value holds “; ”, else a text;
                without it, such columns are listed as not stored (the API’s{' '}
                <code>create_definitions=true</code>).
              </p>
            </fieldset>
            <button type="submit" class="primary" disabled={file === null || busy}>
              Import
            </button>
          </form>
        </>
      ) : (
        <p class="muted">Importing needs an API key that can write; this one may only read.</p>
      )}
    </section>
  )
}

function ImportResult({ id, session }: { id: string; session: Session }) {
  const [job, setJob] = useState<ImportJob | null>(null)
  const [error, setError] = useState('')
  const [announcement, setAnnouncement] = useState('')

  useEffect(() => {
    let current = true
    let timer: ReturnType<typeof setTimeout> | undefined
    let wasRunning = false
    const load = async () => {
      try {
        const { data } = await call<{ data: ImportJob }>(
          'GET',
          `/imports/${encodeURIComponent(id)}`,
        )
        if (!current) return
        setJob(data)
        setError('')
        if (data.status === 'running') {
          wasRunning = true
          timer = setTimeout(load, POLL_MS)
        } else if (wasRunning) {
          setAnnouncement(finishedSentence(data))
        }
      } catch (caught) {
        if (!current) return
        session.onError(caught)
        setError(messageOf(caught))
        // A service out of reach for a moment does not end the watch; any other answer does.
        if (
          wasRunning &&
          caught instanceof ApiError &&
          (caught.status === 0 || caught.status >= 500)
        ) {
          timer = setTimeout(load, POLL_MS)
        }
      }
    }
    void load()
    return () => {
      current = false
      clearTimeout(timer)
    }
  }, [id])

  return (
    <>
      {/* Present from the start, so that what is put in it later is announced. */}
      <p class="visually-hidden" role="status">
        {announcement}
      </p>
      {error && <Notice kind="error">{error}</Notice>}
      {job === null && !error && <p class="loading">Loading…</p>}
      {job && <ImportSummary job={job} />}
      {job && job.errors.length > 0 && <ImportErrors job={job} />}
      <p>
        <a href="#/imports">Import another file</a>
      </p>
    </>
  )
}

function finishedSentence(job: ImportJob): string {
  if (job.status === 'failed') return `The import failed. ${job.failureReason ?? ''}`.trim()
  const failed =
    job.rowsFailed === 1 ? '1 row failed' : `${formatCount(job.rowsFailed)} rows failed`
  if (job.rowsFailed > 0) {
    return `The import finished with ${failed}: ${formatCount(job.rowsProcessed)} rows processed.`
  }
  return `The import succeeded: ${formatCount(job.rowsProcessed)} rows processed, ${failed}.`
}

function ImportSummary({ job }: { job: ImportJob }) {
  return (
    <section class="card" aria-labelledby="import-result-heading">
      <div class="section-head">
        <h2 id="import-result-heading">Import</h2>
        <ImportBadge job={job} />
      </div>
      <p class="muted import-times">
        Started <time dateTime={job.createdAt}>{formatDate(job.createdAt)}</time>
        {job.finishedAt && (
          <>
            {' · '}finished <time dateTime={job.finishedAt}>{formatDate(job.finishedAt)}</time>
          </>
        )}
        {job.status === 'running' && ' · checking every second'}
      </p>
      {job.status === 'failed' && job.failureReason && (
        <Notice kind="error">{job.failureReason}</Notice>
      )}
      {job.status === 'succeeded' && job.rowsFailed > 0 && (
        <Notice kind="warning">
          {job.rowsFailed === 1 ? '1 row was' : `${formatCount(job.rowsFailed)} rows were`} not
          imported (a product with a bad row is skipped whole); the errors below say why. The other
          products were imported.
        </Notice>
      )}
      <dl class="details import-counts">
        {COUNTS.map((count) => (
          <div key={count.key}>
            <dt>{count.label}</dt>
            <dd>{formatCount(job[count.key])}</dd>
          </div>
        ))}
      </dl>
      {job.columnsNotStored.length > 0 && (
        <div class="columns-not-stored">
          <h3 id="columns-heading">Columns not stored</h3>
          <p class="help">The file has these columns; the catalogue has no field for them.</p>
          <ul aria-labelledby="columns-heading">
            {job.columnsNotStored.map((column) => (
              <li class="chip" key={column}>
                {column}
              </li>
            ))}
          </ul>
        </div>
      )}
    </section>
  )
}

function ImportErrors({ job }: { job: ImportJob }) {
  return (
    <section class="card table-card" aria-labelledby="import-errors-heading">
      <div class="table-head">
        <h2 id="import-errors-heading">Errors</h2>
        {job.errors.length >= ERRORS_KEPT && (
          <p class="help">
            The service keeps the first {formatCount(ERRORS_KEPT)} errors of an import; there may be
            more.
          </p>
        )}
      </div>
      <table class="table">
        <caption class="visually-hidden">Rows not imported, in file order</caption>
        <thead>
          <tr>
            <th scope="col" class="number">
              Row
            </th>
            <th scope="col">Handle</th>
            <th scope="col">Field</th>
            <th scope="col">Error</th>
            <th scope="col">Message</th>
          </tr>
        </thead>
        <tbody>
          {job.errors.map((problem, index) => (
            <tr key={index}>
              <td class="number">{problem.row}</td>
              <td class="mono">{problem.handle}</td>
              <td>{problem.field ?? <span class="muted">—</span>}</td>
              <td class="mono">{problem.error}</td>
              <td>{problem.message}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  )
}

function ExportSection({ session }: { session: Session }) {
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState('')
  const [done, setDone] = useState('')

  const download = async () => {
    setBusy(true)
    setError('')
    setDone('')
    try {
      // A link to the export cannot carry the key: the page fetches the file with it, then
      // hands the browser the bytes to save.
      const file = await fetchFile('/exports/products.csv')
      const url = URL.createObjectURL(file)
      const link = document.createElement('a')
      link.href = url
      link.download = 'products.csv'
      link.hidden = true
      document.body.append(link)
      link.click()
      link.remove()
      // Revoked once the browser has taken the download (at once is too early for some).
      setTimeout(() => URL.revokeObjectURL(url), 10_000)
      setDone(`Downloaded products.csv (${formatSize(file.size)}).`)
    } catch (caught) {
      session.onError(caught)
      setError(messageOf(caught))
    } finally {
      setBusy(false)
    }
  }

  return (
    <section class="card" aria-labelledby="export-heading">
      <h2 id="export-heading">Export</h2>
      <p>
        The whole catalogue as a Shopify product CSV, with a few columns of its own for what
        Shopify’s format cannot hold. Importing the file brings it back as it was.
      </p>
      {error && <Notice kind="error">{error}</Notice>}
      {done && <Notice kind="success">{done}</Notice>}
      <button type="button" disabled={busy} onClick={() => void download()}>
        Download CSV
      </button>
    </section>
  )
}

/** The store's imports, newest first (GET /imports), each a link to its page. */
function RecentImports({ session }: { session: Session }) {
  const [cursors, setCursors] = useState([''])
  const [page, setPage] = useState<{ data: ImportListItem[]; nextCursor: string | null } | null>(
    null,
  )
  const [error, setError] = useState('')

  useEffect(() => {
    let current = true
    const params = new URLSearchParams({ limit: String(RECENT_PAGE_SIZE) })
    const cursor = cursors[cursors.length - 1]!
    if (cursor) params.set('cursor', cursor)
    call<{ data: ImportListItem[]; nextCursor: string | null }>('GET', `/imports?${params}`).then(
      (answer) => current && setPage(answer),
      (caught: unknown) => {
        if (!current) return
        session.onError(caught)
        setError(messageOf(caught))
      },
    )
    return () => {
      current = false
    }
  }, [cursors])

  if (page && page.data.length === 0 && cursors.length === 1) return null
  return (
    <section aria-labelledby="recent-imports-heading">
      <h2 id="recent-imports-heading">Recent imports</h2>
      {error && <Notice kind="error">{error}</Notice>}
      <div class="card table-card">
        <table class="table">
          <caption class="visually-hidden">The store's imports, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Started</th>
              <th scope="col">Status</th>
              {COUNTS.map((count) => (
                <th scope="col" class="number" key={count.key}>
                  {count.label}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {page?.data.map((item) => (
              <tr key={item.id}>
                <td>
                  <a href={`#/imports/${encodeURIComponent(item.id)}`}>
                    <time dateTime={item.createdAt}>{formatDate(item.createdAt)}</time>
                  </a>
                </td>
                <td>
                  <ImportBadge job={item} />
                </td>
                {COUNTS.map((count) => (
                  <td class="number" key={count.key}>
                    {formatCount(item[count.key])}
                  </td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <Pager
        label="Pages of imports"
        cursors={cursors}
        nextCursor={page?.nextCursor ?? null}
        onChange={setCursors}
      />
    </section>
  )
}

function formatSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} bytes`
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`
}
