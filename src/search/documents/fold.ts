import { asciiLowercase } from '../../slugs/slug.js'

/** The letter ø, either case: any-ascii spells it `o`, Danish and Norwegian without it `oe`. */
const O_SLASH = /[Øø]/g

/**
 * The words of a text as search compares them, on both databases alike: folded the way slugs
 * are (accents and case gone, any-ascii), split at anything that is not a letter or a digit.
 * `Crème T-shirt` gives `creme`, `t`, `shirt`. Both the documents and `q` go through here, so
 * the engines only ever see words of `[a-z0-9]`. One letter differs from slugs: `ø` is `oe`
 * here (`Øl` gives `oel`), so that `q=Ø` is the word `oe`, not the `o` that starts a word of
 * nearly every product (docs/search.md); documentWords also keeps its `o` spelling.
 */
export function searchWords(text: string | null | undefined): string[] {
  if (!text) return []
  return words(text.replace(O_SLASH, (letter) => (letter === 'Ø' ? 'Oe' : 'oe')))
}

function words(text: string): string[] {
  return asciiLowercase(text)
    .split(/[^a-z0-9]+/)
    .filter((word) => word !== '')
}

/**
 * The words a document holds for a text: its searchWords, and after each word spelled with
 * `ø` that word with `o` (`Bjørn` gives `bjoern bjorn`), so that `bjorn` and `bjørn` both find
 * it. Replacing `ø` by a letter or two moves no boundary between words, so the two
 * spellings' words pair up one to one.
 */
export function documentWords(text: string | null | undefined): string[] {
  if (!text) return []
  const found = searchWords(text)
  if (!/[Øø]/.test(text)) return found
  const plain = words(text)
  if (plain.length !== found.length) return found
  return found.flatMap((word, i) => (plain[i] === word ? [word] : [word, plain[i]!]))
}

/** The folded words of the texts, one space between each: what a document column holds. */
export function foldedText(texts: readonly (string | null | undefined)[]): string {
  return texts.flatMap(documentWords).join(' ')
}
