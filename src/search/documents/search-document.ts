import { descriptionText } from './description-text.js'
import { foldedText } from './fold.js'

/** What of a product its search document is built from (a product row has these). */
export interface DocumentProduct {
  id: string
  name: string
  slug: string
  description: string | null
  vendor: string | null
  product_type: string | null
  sku: string | null
  barcode: string | null
  tags: string | readonly string[]
}

/** What of a variant its product's document is built from. */
export interface DocumentVariant {
  product_id: string
  name: string
  sku: string | null
  barcode: string | null
  options: string | Readonly<Record<string, string>>
}

/** A value a product has for a facet of many values (a tag, an option's value). */
export interface FacetValue {
  /** `tag`, `option` (collections and attributes add theirs). */
  kind: string
  /** Which facet of that kind: the option's name without case; '' for tags. */
  nameKey: string
  /** The value as filters and counts compare it: without case. */
  valueKey: string
  /** The value as stored, shown in the facet. */
  value: string
}

/** A product's search document: pre-folded text, as both databases store it. */
export interface SearchDocument {
  productId: string
  /** The folded words of the name (relevance: names holding every word rank first). */
  nameWords: string
  /** The folded words of every other searchable text of the product and its variants. */
  otherWords: string
  /** The name without case, for `sort=name`: compared by code point. */
  nameKey: string
  /** Each sku and barcode of the product and its variants, lowercased, one per line, framed by newlines. */
  codes: string
  facetValues: FacetValue[]
}

/**
 * Text of a product beyond its own fields and its variants' (searchable custom attributes):
 * each source adds a function here, given the product, answering its texts.
 */
export type ExtraText = (productId: string) => readonly (string | null | undefined)[]

const parse = <T>(value: string | T): T =>
  typeof value === 'string' ? (JSON.parse(value) as T) : value

/** What one variant adds to its product's document: its words, its codes, its option values. */
export interface VariantPart {
  /** Its folded words (name, sku, barcode, option values), to follow the document's. */
  words: string
  /** Its sku and barcode, trimmed and lowercased, each once. */
  codes: string[]
  /** Its option values, each (nameKey, valueKey) once: the first spelling met. */
  facetValues: FacetValue[]
}

/** The part of its product's document that `variant` brings (buildSearchDocument). */
export function variantPart(variant: Omit<DocumentVariant, 'product_id'>): VariantPart {
  const options = parse<Record<string, string>>(variant.options)
  const codes = new Set<string>()
  for (const code of [variant.sku, variant.barcode]) if (code) codes.add(code.trim().toLowerCase())
  const facetValues = new FacetValues()
  for (const [name, value] of Object.entries(options)) {
    facetValues.add('option', name.toLowerCase(), value)
  }
  return {
    words: foldedText([variant.name, variant.sku, variant.barcode, ...Object.values(options)]),
    codes: [...codes],
    facetValues: facetValues.list(),
  }
}

/** Facet values by (kind, nameKey, valueKey): the first one added keeps its spelling. */
class FacetValues {
  private readonly values = new Map<string, FacetValue>()

  add(kind: string, nameKey: string, value: string): void {
    const valueKey = value.toLowerCase()
    const key = JSON.stringify([kind, nameKey, valueKey])
    if (!this.values.has(key)) this.values.set(key, { kind, nameKey, valueKey, value })
  }

  list(): FacetValue[] {
    return [...this.values.values()]
  }
}

/**
 * The document of `product` with `variants` (its own, by position then creation), plus
 * `extra` texts. The one place that says what a search finds a product by. The variants come
 * last in every part (their words after the extra texts), so that the document of a product
 * with one more variant at the end is this document with that variant's part appended:
 * what an add writes (search/added-variant-document.ts, decision 0056).
 */
export function buildSearchDocument(
  product: DocumentProduct,
  variants: readonly DocumentVariant[],
  extra: readonly (string | null | undefined)[] = [],
): SearchDocument {
  const tags = parse<string[]>(product.tags as string)
  const parts = variants.map(variantPart)
  const otherWords = [
    foldedText([
      descriptionText(product.description),
      product.vendor,
      product.product_type,
      ...tags,
      product.slug,
      product.sku,
      product.barcode,
      ...extra,
    ]),
    ...parts.map((part) => part.words),
  ]
    .filter((words) => words !== '')
    .join(' ')
  const codes = new Set<string>()
  for (const code of [product.sku, product.barcode]) {
    if (code) codes.add(code.trim().toLowerCase())
  }
  for (const part of parts) for (const code of part.codes) codes.add(code)
  const facetValues = new FacetValues()
  for (const tag of tags) facetValues.add('tag', '', tag)
  for (const part of parts) {
    for (const facet of part.facetValues) facetValues.add(facet.kind, facet.nameKey, facet.value)
  }
  return {
    productId: product.id,
    nameWords: foldedText([product.name]),
    otherWords,
    nameKey: product.name.toLowerCase(),
    codes: codes.size === 0 ? '' : `\n${[...codes].join('\n')}\n`,
    facetValues: facetValues.list(),
  }
}
