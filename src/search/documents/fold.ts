import { asciiLowercase } from '../../slugs/slug.js'

/**
 * The words of a text as search compares them, on both databases alike: folded the way slugs
 * are (accents and case gone, any-ascii), split at anything that is not a letter or a digit.
 * `Crème T-shirt` gives `creme`, `t`, `shirt`. Both the documents and `q` go through here, so
 * the engines only ever see words of `[a-z0-9]`.
 */
export function searchWords(text: string | null | undefined): string[] {
  if (!text) return []
  return asciiLowercase(text)
    .split(/[^a-z0-9]+/)
    .filter((word) => word !== '')
}

/** The folded words of the texts, one space between each: what a document column holds. */
export function foldedText(texts: readonly (string | null | undefined)[]): string {
  return texts.flatMap(searchWords).join(' ')
}
