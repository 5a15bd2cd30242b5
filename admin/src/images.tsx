import { useState } from 'preact/hooks'
import type { Product } from './api.js'
import { fieldMessages } from './ui.js'

export type Image = Product['images'][number]

/**
 * A thumbnail where the policy lets the image load (this service, or any https address);
 * else its address only, so the page makes no request the policy would refuse.
 */
function Thumbnail({ image }: { image: Image }) {
  let loadable = false
  try {
    const url = new URL(image.url)
    loadable = url.protocol === 'https:' || url.origin === location.origin
  } catch {
    // Not an address: shown as text, for the API to refuse on save.
  }
  if (!loadable) return <span class="thumb thumb-none">No preview</span>
  return (
    <img
      class="thumb"
      src={image.url}
      alt={image.alt ?? ''}
      loading="lazy"
      referrerpolicy="no-referrer"
    />
  )
}

/** The product's images, read only: thumbnails in their order. */
export function ImageList({ images }: { images: Image[] }) {
  if (images.length === 0) return null
  return (
    <div class="card">
      <h2>Images</h2>
      <ol class="images">
        {images.map((image, index) => (
          <li class="image" key={index}>
            <Thumbnail image={image} />
            <span class="image-url mono">{image.url}</span>
            {image.alt && <span class="muted">{image.alt}</span>}
          </li>
        ))}
      </ol>
    </div>
  )
}

/**
 * The product form's images: thumbnails with their alt text, moved up or down or removed, and
 * a new one added by its address. The list is sent whole on Save (the API replaces `images`).
 */
export function ImagesEditor(props: {
  images: Image[]
  error: unknown
  onChange(images: Image[]): void
}) {
  const { images, onChange } = props
  const [url, setUrl] = useState('')
  const [alt, setAlt] = useState('')
  const messages = fieldMessages(props.error, 'images')

  const add = () => {
    if (url.trim() === '') return
    onChange([...images, { url: url.trim(), alt: alt.trim() === '' ? null : alt.trim() }])
    setUrl('')
    setAlt('')
  }
  const move = (from: number, to: number) => {
    const next = [...images]
    const [moved] = next.splice(from, 1)
    next.splice(to, 0, moved!)
    onChange(next)
  }
  /** Enter in the add inputs adds the image rather than submitting the product form. */
  const onEnter = (event: KeyboardEvent) => {
    if (event.key !== 'Enter') return
    event.preventDefault()
    add()
  }

  return (
    <fieldset
      class="card"
      aria-describedby={messages.length > 0 ? 'product-images-error' : undefined}
    >
      <legend>Images</legend>
      {images.length === 0 && <p class="help">No images yet.</p>}
      <ol class="images">
        {images.map((image, index) => (
          <li class="image" key={`${index}-${image.url}`}>
            <Thumbnail image={image} />
            <div class="image-fields">
              <span class="image-url mono">{image.url}</span>
              <input
                type="text"
                aria-label={`Alt text of image ${index + 1}`}
                placeholder="Alt text"
                value={image.alt ?? ''}
                onInput={(event) => {
                  const text = event.currentTarget.value
                  onChange(
                    images.map((each, at) =>
                      at === index ? { ...each, alt: text === '' ? null : text } : each,
                    ),
                  )
                }}
              />
            </div>
            <div class="image-actions">
              <button
                type="button"
                class="icon"
                aria-label={`Move image ${index + 1} up`}
                disabled={index === 0}
                onClick={() => move(index, index - 1)}
              >
                ↑
              </button>
              <button
                type="button"
                class="icon"
                aria-label={`Move image ${index + 1} down`}
                disabled={index === images.length - 1}
                onClick={() => move(index, index + 1)}
              >
                ↓
              </button>
              <button
                type="button"
                class="icon danger-text"
                aria-label={`Remove image ${index + 1}`}
                onClick={() => onChange(images.filter((_, at) => at !== index))}
              >
                ×
              </button>
            </div>
          </li>
        ))}
      </ol>
      <div class="image-add">
        <div class="field">
          <label for="image-url">Image URL</label>
          <input
            id="image-url"
            type="url"
            placeholder="https://…"
            value={url}
            onInput={(event) => setUrl(event.currentTarget.value)}
            onKeyDown={onEnter}
          />
        </div>
        <div class="field">
          <label for="image-alt">Alt text</label>
          <input
            id="image-alt"
            type="text"
            value={alt}
            onInput={(event) => setAlt(event.currentTarget.value)}
            onKeyDown={onEnter}
          />
        </div>
        <button type="button" disabled={url.trim() === ''} onClick={add}>
          Add image
        </button>
      </div>
      <p class="help">The first image is the product’s main one. Saved with the product.</p>
      {messages.length > 0 && (
        <p class="field-error" id="product-images-error">
          {messages.join(' ')}
        </p>
      )}
    </fieldset>
  )
}
