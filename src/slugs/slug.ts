import anyAscii from 'any-ascii'

export const MAX_SLUG_LENGTH = 96
export const FALLBACK_SLUG = 'product'

/**
 * Pictographs carry no words for a URL; any-ascii would spell them as `:smile:`.
 * Also dropped: flag letters, skin tones, joiners and variation selectors.
 */
const PICTOGRAPHS =
  /[\p{Extended_Pictographic}\p{Regional_Indicator}\u{1F3FB}-\u{1F3FF}\u200D\uFE0E\uFE0F]/gu

/**
 * The Cyrillic soft and hard signs, which any-ascii spells as apostrophes (BGN/PCGN), so that
 * they split a word (`Пальто` would be `pal-to`). Dropped, as ICAO's passport transliteration
 * drops the soft sign and slug makers commonly drop both: `palto`, `obekt`.
 */
const CYRILLIC_SIGNS = /[ЬьЪъ]/g

/**
 * The slug a product name gives, before it is made unique: transliterated to ASCII,
 * lowercase, every run of other characters one `-`, none at either end, at most 96
 * characters (cut at a `-` where possible); `product` when nothing is left.
 */
export function slugify(name: string): string {
  const words = asciiLowercase(name)
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
  return truncate(words) || FALLBACK_SLUG
}

/**
 * Text as slugs and search fold it: transliterated to ASCII (accents gone), lowercase. What is
 * not `[a-z0-9]` in the result separates words.
 */
export function asciiLowercase(text: string): string {
  return anyAscii(text.replace(PICTOGRAPHS, ' ').replace(CYRILLIC_SIGNS, '')).toLowerCase()
}

function truncate(slug: string): string {
  if (slug.length <= MAX_SLUG_LENGTH) return slug
  const cut = slug.slice(0, MAX_SLUG_LENGTH + 1)
  const lastDash = cut.lastIndexOf('-')
  return (lastDash > 0 ? cut.slice(0, lastDash) : cut.slice(0, MAX_SLUG_LENGTH)).replace(/-+$/, '')
}

/** `base` made unique with suffix `n`: `t-shirt`, `t-shirt-2`, `t-shirt-3`, ... */
export function withSuffix(base: string, n: number): string {
  return n === 1 ? base : `${base}-${n}`
}

/**
 * The base and suffix a slug would have if `withSuffix` had made it (`t-shirt-2` is
 * `t-shirt` with 2), or undefined when it cannot be one (no suffix, or `-0`, `-1`, `-02`).
 */
export function splitSuffix(slug: string): { base: string; n: number } | undefined {
  const match = /^(.+)-([1-9][0-9]{0,14})$/.exec(slug)
  if (!match) return undefined
  const n = Number(match[2])
  return n >= 2 ? { base: match[1]!, n } : undefined
}
