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

/**
 * The document of `product` with `variants` (its own), plus `extra` texts. The one place that
 * says what a search finds a product by.
 */
export function buildSearchDocument(
  product: DocumentProduct,
  variants: readonly DocumentVariant[],
  extra: readonly (string | null | undefined)[] = [],
): SearchDocument {
  const tags = parse<string[]>(product.tags as string)
  const variantOptions = variants.map((variant) => parse<Record<string, string>>(variant.options))
  const otherWords = foldedText([
    product.description,
    product.vendor,
    product.product_type,
    ...tags,
    product.slug,
    product.sku,
    product.barcode,
    ...variants.flatMap((variant, i) => [
      variant.name,
      variant.sku,
      variant.barcode,
      ...Object.values(variantOptions[i]!),
    ]),
    ...extra,
  ])
  const codes = new Set<string>()
  for (const code of [
    product.sku,
    product.barcode,
    ...variants.flatMap((v) => [v.sku, v.barcode]),
  ]) {
    if (code) codes.add(code.trim().toLowerCase())
  }
  const facetValues = new Map<string, FacetValue>()
  const addFacetValue = (kind: string, nameKey: string, value: string) => {
    const valueKey = value.toLowerCase()
    const key = JSON.stringify([kind, nameKey, valueKey])
    if (!facetValues.has(key)) facetValues.set(key, { kind, nameKey, valueKey, value })
  }
  for (const tag of tags) addFacetValue('tag', '', tag)
  for (const options of variantOptions) {
    for (const [name, value] of Object.entries(options)) {
      addFacetValue('option', name.toLowerCase(), value)
    }
  }
  return {
    productId: product.id,
    nameWords: foldedText([product.name]),
    otherWords,
    nameKey: product.name.toLowerCase(),
    codes: codes.size === 0 ? '' : `\n${[...codes].join('\n')}\n`,
    facetValues: [...facetValues.values()],
  }
}
