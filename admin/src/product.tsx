import { useEffect, useState } from 'preact/hooks'
import { ApiError, call, type Product, type Status, type Variant } from './api.js'
import {
  ConfirmDialog,
  fieldMessages,
  formatDate,
  formatPrice,
  navigate,
  Notice,
  type Session,
  STATUS_LABEL,
  setFlash,
  StatusBadge,
  takeFlash,
  useFocusHeading,
} from './ui.js'
import { type Image, ImageList, ImagesEditor } from './images.js'
import { RichText } from './rich-text.js'
import { listAddress } from './products.js'
import { Variants } from './variants.js'
import {
  loadDefinitions,
  MetafieldInputs,
  metafieldsPatch,
  type MetafieldDefinition,
} from './metafields.js'

type Kind = 'text' | 'textarea' | 'number' | 'status' | 'tags'

interface Field {
  /** The request's name of the field, as in `details`. */
  api: string
  label: string
  kind: Kind
  /** An empty input clears the field (null); else the empty string is sent for the API to judge. */
  nullable: boolean
  read(product: Product): string
  help?: string
}

const text = (value: string | null) => value ?? ''
const number = (value: number | null) => (value === null ? '' : String(value))

/** The form's fields, labelled as the API's fields in words. */
const FIELDS: Field[] = [
  { api: 'name', label: 'Name', kind: 'text', nullable: false, read: (p) => p.name },
  {
    api: 'description',
    label: 'Description',
    kind: 'textarea',
    nullable: true,
    read: (p) => text(p.description),
    help: 'HTML, as Shopify keeps it. The preview shows it as rendered, without scripts or styles.',
  },
  { api: 'status', label: 'Status', kind: 'status', nullable: false, read: (p) => p.status },
  {
    api: 'price',
    label: 'Price',
    kind: 'number',
    nullable: false,
    read: (p) => formatPrice(p.price),
  },
  {
    api: 'compare_at_price',
    label: 'Compare-at price',
    kind: 'number',
    nullable: true,
    read: (p) => formatPrice(p.compareAtPrice),
  },
  { api: 'sku', label: 'SKU', kind: 'text', nullable: true, read: (p) => text(p.sku) },
  { api: 'barcode', label: 'Barcode', kind: 'text', nullable: true, read: (p) => text(p.barcode) },
  {
    api: 'tax_rate',
    label: 'Tax rate',
    kind: 'number',
    nullable: true,
    read: (p) => number(p.taxRate),
    help: 'In percent, 0 to 100.',
  },
  { api: 'vendor', label: 'Vendor', kind: 'text', nullable: true, read: (p) => text(p.vendor) },
  {
    api: 'product_type',
    label: 'Product type',
    kind: 'text',
    nullable: true,
    read: (p) => text(p.productType),
  },
  {
    api: 'tags',
    label: 'Tags',
    kind: 'tags',
    nullable: true,
    read: (p) => p.tags.join(', '),
    help: 'Separated by commas.',
  },
  {
    api: 'slug',
    label: 'Slug',
    kind: 'text',
    nullable: false,
    read: (p) => p.slug,
    help: 'Lowercase letters, digits and single dashes; the product’s address in the shop.',
  },
]

const byApi = (api: string) => FIELDS.find((field) => field.api === api)!

/** An input's text as the API's value: a number when it reads as one, null when emptied. */
function toApi(field: Field, input: string): unknown {
  const trimmed = input.trim()
  if (field.kind === 'tags') {
    const tags = input
      .split(',')
      .map((tag) => tag.trim())
      .filter((tag) => tag !== '')
    return tags.length === 0 ? null : tags
  }
  if (trimmed === '' && field.nullable) return null
  if (field.kind === 'number') {
    if (trimmed === '') return null
    const value = Number(trimmed)
    // Anything else goes as typed, and the API's message says what is wrong with it.
    return Number.isFinite(value) ? value : input
  }
  return input
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b)

/** Whether two readings of a product differ in anything the form shows (not its version). */
function sameContent(a: Product, b: Product): boolean {
  return FIELDS.every((field) => field.read(a) === field.read(b)) && same(a.images, b.images)
}

/** The statuses a product may be set to from its current one (the contract's transitions). */
function statusChoices(current: Status | null): Status[] {
  if (current === null) return ['draft', 'active']
  if (current === 'archived') return ['archived', 'draft']
  return ['draft', 'active', 'archived']
}

export function ProductPage({ id, session }: { id: string | null; session: Session }) {
  const [product, setProduct] = useState<Product | null>(null)
  const [variants, setVariants] = useState<Variant[]>([])
  const [edits, setEdits] = useState<Record<string, string>>({})
  const [loadError, setLoadError] = useState('')
  const [error, setError] = useState<unknown>(null)
  const [conflict, setConflict] = useState(false)
  const [notice, setNotice] = useState(takeFlash)
  const [busy, setBusy] = useState(false)
  const [confirming, setConfirming] = useState(false)
  const [definitions, setDefinitions] = useState<MetafieldDefinition[]>([])
  const [metaEdits, setMetaEdits] = useState<Record<string, string | boolean>>({})
  /** The images as edited, or null while they are as loaded. */
  const [imageDraft, setImageDraft] = useState<Image[] | null>(null)
  const heading = useFocusHeading()
  useEffect(() => {
    loadDefinitions('product').then(setDefinitions, (caught: unknown) => session.onError(caught))
  }, [])

  const fail = (caught: unknown) => {
    session.onError(caught)
    if (caught instanceof ApiError && caught.code === 'precondition_failed') setConflict(true)
    else setError(caught)
  }

  const load = async () => {
    if (id === null) return
    try {
      const { data } = await call<{ data: Product & { variants: Variant[] } }>(
        'GET',
        `/products/${encodeURIComponent(id)}`,
      )
      const { variants: loaded, ...record } = data
      setProduct(record)
      setVariants(loaded)
      setEdits({})
      setImageDraft(null)
      setError(null)
      setConflict(false)
    } catch (caught) {
      session.onError(caught)
      setLoadError(caught instanceof Error ? caught.message : String(caught))
    }
  }
  useEffect(() => {
    void load()
  }, [id])

  /**
   * After a variant changed, the product's version has moved: take the new one, unless the
   * product's own fields changed too (someone else's edit), so a save still answers 412.
   */
  const variantsChanged = async () => {
    if (id === null || product === null) return
    try {
      const { data } = await call<{ data: Product & { variants: Variant[] } }>(
        'GET',
        `/products/${encodeURIComponent(id)}`,
      )
      const { variants: loaded, ...record } = data
      setVariants(loaded)
      if (sameContent(record, product)) setProduct(record)
    } catch (caught) {
      fail(caught)
    }
  }

  const value = (field: Field) =>
    edits[field.api] ?? (product ? field.read(product) : field.api === 'status' ? 'draft' : '')

  /** The fields changed from the product as loaded: all that a merge patch sends. */
  const changes = (): Record<string, unknown> => {
    const patch: Record<string, unknown> = {}
    for (const field of FIELDS) {
      const edit = edits[field.api]
      if (edit === undefined) continue
      const before = product ? toApi(field, field.read(product)) : null
      const after = toApi(field, edit)
      if (!same(before, after)) patch[field.api] = after
    }
    if (imageDraft !== null && !same(imageDraft, product?.images ?? [])) patch.images = imageDraft
    const metafields = metafieldsPatch(definitions, product?.metafields ?? {}, metaEdits)
    if (metafields) patch.metafields = metafields
    return patch
  }

  const save = async (event: Event) => {
    event.preventDefault()
    setBusy(true)
    setError(null)
    setNotice('')
    try {
      if (product === null) {
        const body = changes()
        delete body.slug
        const { data } = await call<{ data: Product }>('POST', '/products', { body })
        setFlash(`Created “${data.name}”.`)
        navigate(`#/products/${encodeURIComponent(data.id)}`)
        return
      }
      const patch = changes()
      if (Object.keys(patch).length === 0) {
        setNotice('Nothing changed.')
        return
      }
      await patchProduct(patch, 'Saved.')
    } catch (caught) {
      fail(caught)
    } finally {
      setBusy(false)
    }
  }

  const patchProduct = async (patch: Record<string, unknown>, done: string) => {
    const { data } = await call<{ data: Product }>(
      'PATCH',
      `/products/${encodeURIComponent(product!.id)}`,
      { body: patch, version: product!.version },
    )
    setProduct(data)
    if (patch.metafields) setMetaEdits({})
    if (patch.images) setImageDraft(null)
    // What was sent is now the product; edits of other fields stay.
    setEdits((current) => {
      const kept = { ...current }
      for (const api of Object.keys(patch)) delete kept[api]
      return kept
    })
    setNotice(done)
  }

  const setStatus = async (status: Status, done: string) => {
    setBusy(true)
    setError(null)
    setNotice('')
    try {
      await patchProduct({ status }, done)
    } catch (caught) {
      fail(caught)
    } finally {
      setBusy(false)
    }
  }

  const remove = async () => {
    setConfirming(false)
    setBusy(true)
    setError(null)
    try {
      await call('DELETE', `/products/${encodeURIComponent(product!.id)}`, {
        version: product!.version,
      })
      setFlash(`Deleted “${product!.name}”.`)
      navigate(listAddress())
    } catch (caught) {
      fail(caught)
    } finally {
      setBusy(false)
    }
  }

  if (loadError) {
    return (
      <section>
        <a href={listAddress()}>← Products</a>
        <h1 ref={heading} tabIndex={-1}>
          Product
        </h1>
        <Notice kind="error">{loadError}</Notice>
      </section>
    )
  }
  if (id !== null && product === null) return <p class="loading">Loading…</p>

  const title = product ? product.name : 'New product'
  const generalError =
    error instanceof ApiError &&
    !FIELDS.some((field) => fieldMessages(error, field.api).length > 0) &&
    fieldMessages(error, 'metafields').length === 0 &&
    fieldMessages(error, 'images').length === 0
      ? error.message
      : error instanceof ApiError
        ? `${error.message} See the fields below.`
        : error
          ? String(error)
          : ''

  const input = (field: Field) => {
    const id = `product-${field.api}`
    const messages = fieldMessages(error, field.api)
    const describedBy =
      [messages.length > 0 && `${id}-error`, field.help && `${id}-help`]
        .filter(Boolean)
        .join(' ') || undefined
    const common = {
      id,
      name: field.api,
      value: value(field),
      'aria-invalid': messages.length > 0 ? ('true' as const) : undefined,
      'aria-describedby': describedBy,
      onInput: (event: { currentTarget: { value: string } }) =>
        setEdits({ ...edits, [field.api]: event.currentTarget.value }),
    }
    const creating = product === null && field.api === 'slug'
    return (
      <div class={`field field-${field.api}`} key={field.api}>
        <label for={id}>{field.label}</label>
        {field.kind === 'textarea' ? (
          <textarea rows={8} class="mono" spellcheck={false} {...common} />
        ) : field.kind === 'status' ? (
          <select {...common}>
            {statusChoices(product?.status ?? null).map((status) => (
              <option value={status} key={status}>
                {product?.status === 'archived' && status === 'draft'
                  ? 'Draft (unarchive)'
                  : STATUS_LABEL[status]}
              </option>
            ))}
          </select>
        ) : (
          <input
            type="text"
            inputMode={field.kind === 'number' ? 'decimal' : undefined}
            required={field.api === 'name'}
            disabled={creating}
            placeholder={creating ? 'Made from the name when saved' : undefined}
            {...common}
          />
        )}
        {field.help && (
          <p class="help" id={`${id}-help`}>
            {field.help}
          </p>
        )}
        {messages.length > 0 && (
          <p class="field-error" id={`${id}-error`}>
            {messages.join(' ')}
          </p>
        )}
        {field.api === 'description' && value(field).trim() !== '' && (
          <RichText html={value(field)} label="Description preview" />
        )}
      </div>
    )
  }

  const header = (
    <div class="page-head">
      <div>
        <a class="back" href={listAddress()}>
          ← Products
        </a>
        <h1 ref={heading} tabIndex={-1}>
          {title}
        </h1>
        {product && (
          <p class="muted meta">
            <StatusBadge status={product.status} /> <span class="mono">{product.slug}</span> ·
            version {product.version} · updated{' '}
            <time dateTime={product.updatedAt}>{formatDate(product.updatedAt)}</time>
          </p>
        )}
      </div>
      {session.writable && (
        <div class="actions">
          {product && product.status !== 'archived' && (
            <button
              type="button"
              disabled={busy}
              onClick={() => setStatus('archived', 'Archived.')}
            >
              Archive
            </button>
          )}
          {product && product.status === 'archived' && (
            <button
              type="button"
              disabled={busy}
              onClick={() => setStatus('draft', 'Unarchived: the product is a draft.')}
            >
              Unarchive
            </button>
          )}
          {product && (
            <button
              type="button"
              class="danger"
              disabled={busy}
              onClick={() => setConfirming(true)}
            >
              Delete product
            </button>
          )}
          <button type="submit" form="product-form" class="primary" disabled={busy}>
            Save
          </button>
        </div>
      )}
    </div>
  )

  const notices = (
    <>
      {conflict && (
        <Notice kind="warning">
          <p>
            <strong>Someone else changed this product</strong> since you opened it, so your changes
            were not saved. Reload to see the current product, then make your changes again.
          </p>
          <button type="button" onClick={() => void load()}>
            Reload
          </button>
        </Notice>
      )}
      {generalError && <Notice kind="error">{generalError}</Notice>}
      {notice && <Notice kind="success">{notice}</Notice>}
    </>
  )

  if (!session.writable && product) {
    return (
      <section>
        {header}
        {notices}
        <div class="card">
          <h2>Details</h2>
          <dl class="details">
            {FIELDS.map((field) => (
              <div key={field.api}>
                <dt>{field.label}</dt>
                <dd>
                  {field.api === 'description' && product.description ? (
                    <RichText html={product.description} label="Description" />
                  ) : (
                    readOnlyValue(field, product)
                  )}
                </dd>
              </div>
            ))}
          </dl>
        </div>
        <ImageList images={product.images} />
        <Variants
          product={product}
          variants={variants}
          session={session}
          onChanged={variantsChanged}
        />
      </section>
    )
  }

  return (
    <section>
      {header}
      {notices}
      <form id="product-form" class="product-form" onSubmit={save} noValidate>
        <div class="column-main">
          <fieldset class="card">
            <legend>Product</legend>
            {input(byApi('name'))}
            {input(byApi('description'))}
            {input(byApi('slug'))}
          </fieldset>
          <fieldset class="card">
            <legend>Pricing</legend>
            <div class="row">
              {input(byApi('price'))}
              {input(byApi('compare_at_price'))}
              {input(byApi('tax_rate'))}
            </div>
          </fieldset>
          <fieldset class="card">
            <legend>Inventory</legend>
            <div class="row">
              {input(byApi('sku'))}
              {input(byApi('barcode'))}
            </div>
          </fieldset>
          <ImagesEditor
            images={imageDraft ?? product?.images ?? []}
            error={error}
            onChange={setImageDraft}
          />
        </div>
        <div class="column-side">
          <fieldset class="card">
            <legend>Status</legend>
            {input(byApi('status'))}
          </fieldset>
          <fieldset class="card">
            <legend>Organisation</legend>
            {input(byApi('vendor'))}
            {input(byApi('product_type'))}
            {input(byApi('tags'))}
          </fieldset>
          {/* In the side column, as Shopify's metafields card: those set, and "Add attribute". */}
          <MetafieldInputs
            idPrefix="product"
            definitions={definitions}
            stored={product?.metafields ?? {}}
            edits={metaEdits}
            error={error}
            onEdit={(key, value) => setMetaEdits({ ...metaEdits, [key]: value })}
          />
        </div>
      </form>
      {product && (
        <Variants
          product={product}
          variants={variants}
          session={session}
          onChanged={variantsChanged}
        />
      )}
      {product && (
        <ConfirmDialog
          id="delete-product"
          open={confirming}
          title="Delete this product?"
          confirmLabel="Delete product"
          onConfirm={() => void remove()}
          onCancel={() => setConfirming(false)}
        >
          <p>
            {variants.length === 0
              ? `“${product.name}” will be deleted.`
              : `“${product.name}” and its ${variants.length} ${variants.length === 1 ? 'variant' : 'variants'} will be deleted.`}{' '}
            This cannot be undone.
          </p>
        </ConfirmDialog>
      )}
    </section>
  )
}

/** A field's value as the read-only view shows it. */
function readOnlyValue(field: Field, product: Product): string {
  if (field.api === 'status') return STATUS_LABEL[product.status]
  if (field.api === 'price') return formatPrice(product.price)
  if (field.api === 'compare_at_price') return formatPrice(product.compareAtPrice) || '—'
  if (field.api === 'tax_rate') return product.taxRate === null ? '—' : `${product.taxRate} %`
  return field.read(product) || '—'
}
