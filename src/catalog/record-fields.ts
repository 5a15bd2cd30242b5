import type { ProductImage } from '../db/schema.js'

/**
 * The new fields of part 2 as they are kept: tags without their case-insensitive repeats,
 * images with an explicit alt, and the checks a schema cannot make.
 */

/** The form of a tag that filters and repeats compare: `Summer` and `SUMMER` are one tag. */
export function tagKey(tag: string): string {
  return tag.toLowerCase()
}

/** Tags as kept: each once, by its first spelling, in the order sent. */
export function uniqueTags(tags: readonly string[]): string[] {
  const seen = new Set<string>()
  return tags.filter((tag) => {
    const key = tagKey(tag)
    if (seen.has(key)) return false
    seen.add(key)
    return true
  })
}

/** The keys of kept tags, as the JSON array the product_tags rows are made from. */
export function tagKeysJson(tags: readonly string[]): string {
  return JSON.stringify(tags.map(tagKey))
}

/** Images as kept: `{url, alt}`, alt null when not sent. */
export function normalizeImages(images: readonly { url: string; alt?: string | null }[]) {
  return images.map((image): ProductImage => ({ url: image.url, alt: image.alt ?? null }))
}
