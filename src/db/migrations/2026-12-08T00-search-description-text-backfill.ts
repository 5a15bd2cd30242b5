import anyAscii from 'any-ascii'
import { sql, type Kysely } from 'kysely'
import { parseFragment } from 'parse5'

/**
 * The search documents written before a description's words were its text as a page shows
 * it (docs/decisions/0058-description-search-text.md), rewritten with that text (the
 * migrations 2026-12-08T00-search-description-text of both dialects); `ø` gets its second
 * spelling too. Read store by store, a batch of products, their variants and their documents
 * at a time, so that memory stays bounded whatever the catalogue's size; each batch written by
 * one statement. The stored descriptions are not touched.
 *
 * A document is the folded words of the description, vendor, type, tags, slug, sku and
 * barcode (the head), then those of the searchable custom attributes (the middle), then those
 * of each variant (the tail). The head and the tail are rebuilt from the rows; the middle is
 * kept as the document holds it, found between the head and the tail as the previous fold
 * spells them. A document whose tail is not where it should be (variants written in another
 * order) gets its head replaced alone; one whose head is not either (never the case for a
 * document this service wrote) is left as it is, to be rewritten by its product's next write.
 * Frozen with these migrations: a copy of the text and folding of src/search/description-
 * text.ts and fold.ts as they are now, and of the previous fold, not an import of them.
 */
export async function backfillDescriptionText(db: Kysely<any>, uuid: string): Promise<void> {
  const stores = await sql<{ store_id: string }>`
    select distinct store_id from products order by store_id
  `.execute(db)
  // PostgreSQL: statistics first (see 2026-11-30T00-search-backfill.ts).
  if (uuid !== '' && stores.rows.length > 0) {
    await sql`analyze products, variants, product_search`.execute(db)
  }
  for (const { store_id: storeId } of stores.rows) {
    let after: string | undefined
    for (;;) {
      const products = await sql<ProductText>`
        select id, name, slug, description, vendor, product_type, sku, barcode, tags
        from products where store_id = ${storeId}
        ${after === undefined ? sql`` : sql`and id > ${after}${sql.raw(uuid)}`}
        order by id limit ${BATCH}
      `.execute(db)
      if (products.rows.length === 0) break
      const first = products.rows[0]!.id
      const last = products.rows.at(-1)!.id
      after = last
      const inRange = (column: string) =>
        sql`store_id = ${storeId} and ${sql.ref(column)} >= ${first}${sql.raw(uuid)}
          and ${sql.ref(column)} <= ${last}${sql.raw(uuid)}`
      const variants = await sql<VariantText>`
        select product_id, name, sku, barcode, options from variants
        where ${inRange('product_id')}
        order by product_id, position, created_at
      `.execute(db)
      const documents = await sql<StoredDocument>`
        select product_id, name_words, other_words from product_search
        where ${inRange('product_id')}
      `.execute(db)
      const byProduct = new Map<string, VariantText[]>()
      for (const variant of variants.rows) {
        const list = byProduct.get(variant.product_id)
        if (list) list.push(variant)
        else byProduct.set(variant.product_id, [variant])
      }
      const stored = new Map(documents.rows.map((d) => [String(d.product_id), d]))
      const changed: [string, string, string][] = []
      for (const product of products.rows) {
        const document = stored.get(String(product.id))
        if (!document) continue
        const rewritten = rewrite(product, byProduct.get(product.id) ?? [], document)
        if (
          rewritten.nameWords !== document.name_words ||
          rewritten.otherWords !== document.other_words
        ) {
          changed.push([String(product.id), rewritten.nameWords, rewritten.otherWords])
        }
      }
      if (changed.length === 0) continue
      const json = JSON.stringify(changed)
      if (uuid === '') {
        await sql`
          update product_search set name_words = d.name_words, other_words = d.other_words
          from (select value ->> 0 as product_id, value ->> 1 as name_words,
              value ->> 2 as other_words
            from json_each(${json})) d
          where product_search.store_id = ${storeId} and product_search.product_id = d.product_id
        `.execute(db)
      } else {
        await sql`
          update product_search s set name_words = d.name_words, other_words = d.other_words
          from (select (value ->> 0)::uuid as product_id, value ->> 1 as name_words,
              value ->> 2 as other_words
            from jsonb_array_elements(cast(${json} as jsonb))) d
          where s.store_id = ${storeId} and s.product_id = d.product_id
        `.execute(db)
      }
    }
  }
}

const BATCH = 1000

interface ProductText {
  id: string
  name: string
  slug: string
  description: string | null
  vendor: string | null
  product_type: string | null
  sku: string | null
  barcode: string | null
  tags: string | string[]
}

interface VariantText {
  product_id: string
  name: string
  sku: string | null
  barcode: string | null
  options: string | Record<string, string>
}

interface StoredDocument {
  product_id: string
  name_words: string
  other_words: string
}

type Fold = (texts: readonly (string | null | undefined)[]) => string[]

function rewrite(product: ProductText, variants: VariantText[], document: StoredDocument) {
  const parse = <T>(value: string | T): T =>
    typeof value === 'string' ? (JSON.parse(value) as T) : value
  const tags = parse<string[]>(product.tags)
  const head = (description: string | null) => [
    description,
    product.vendor,
    product.product_type,
    ...tags,
    product.slug,
    product.sku,
    product.barcode,
  ]
  const tail = variants.flatMap((variant) => [
    variant.name,
    variant.sku,
    variant.barcode,
    ...Object.values(parse<Record<string, string>>(variant.options)),
  ])
  const words = document.other_words.split(' ').filter((word) => word !== '')
  const oldHead = oldFold(head(product.description))
  const oldTail = oldFold(tail)
  const nameWords = newFold([product.name]).join(' ')
  const newHead = newFold(head(descriptionText(product.description)))
  if (!startsWith(words, oldHead)) return { nameWords, otherWords: document.other_words }
  const rest = words.slice(oldHead.length)
  const otherWords =
    rest.length >= oldTail.length && startsWith(rest.slice(rest.length - oldTail.length), oldTail)
      ? [...newHead, ...rest.slice(0, rest.length - oldTail.length), ...newFold(tail)]
      : [...newHead, ...rest]
  return { nameWords, otherWords: otherWords.join(' ') }
}

function startsWith(words: readonly string[], prefix: readonly string[]): boolean {
  return prefix.length <= words.length && prefix.every((word, i) => words[i] === word)
}

const PICTOGRAPHS =
  /[\p{Extended_Pictographic}\p{Regional_Indicator}\u{1F3FB}-\u{1F3FF}\u200D\uFE0E\uFE0F]/gu
const CYRILLIC_SIGNS = /[ЬьЪъ]/g

function plainWords(text: string): string[] {
  return anyAscii(text.replace(PICTOGRAPHS, ' ').replace(CYRILLIC_SIGNS, ''))
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((word) => word !== '')
}

/** The fold before: any-ascii's (ø is o). */
const oldFold: Fold = (texts) => texts.flatMap((text) => (text ? plainWords(text) : []))

/** The fold now: ø is oe, and a document holds a word with ø spelled both ways. */
const newFold: Fold = (texts) =>
  texts.flatMap((text) => {
    if (!text) return []
    const found = plainWords(text.replace(/[Øø]/g, (letter) => (letter === 'Ø' ? 'Oe' : 'oe')))
    if (!/[Øø]/.test(text)) return found
    const plain = plainWords(text)
    if (plain.length !== found.length) return found
    return found.flatMap((word, i) => (plain[i] === word ? [word] : [word, plain[i]!]))
  })

const SEPARATING = new Set(
  (
    'address article aside audio blockquote body br button canvas caption center col colgroup ' +
    'dd details dialog dir div dl dt embed fieldset figcaption figure footer form frameset ' +
    'h1 h2 h3 h4 h5 h6 header hgroup hr html iframe img input legend li listing main menu ' +
    'meter nav object ol optgroup option p picture plaintext pre progress search section ' +
    'select summary svg table tbody td textarea tfoot th thead tr ul video xmp'
  ).split(' '),
)
const HIDDEN = new Set(
  (
    'audio canvas head iframe noembed noframes noscript object script style template title ' +
    'video'
  ).split(' '),
)

interface Node {
  nodeName: string
  value?: string
  childNodes?: Node[]
}

function descriptionText(description: string | null): string {
  if (!description) return ''
  if (!/[<&]/.test(description)) return description
  const parts: string[] = []
  const walk = (nodes: readonly Node[]): void => {
    for (const node of nodes) {
      if (node.nodeName === '#text') {
        parts.push(node.value!)
      } else if (node.childNodes !== undefined) {
        const separates = SEPARATING.has(node.nodeName)
        if (separates) parts.push(' ')
        if (!HIDDEN.has(node.nodeName)) walk(node.childNodes)
        if (separates) parts.push(' ')
      }
    }
  }
  walk((parseFragment(description) as unknown as Node).childNodes!)
  return parts.join('').replace(/\u00a0/g, ' ')
}
