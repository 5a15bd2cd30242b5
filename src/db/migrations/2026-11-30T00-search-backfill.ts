import anyAscii from 'any-ascii'
import { sql, type Kysely } from 'kysely'

/**
 * The search documents of the products a database holds when it upgrades to search (the
 * migrations 2026-11-30T00-search of both dialects): read store by store, a batch of products
 * and their variants at a time, so that memory stays bounded whatever the catalogue's size.
 * Frozen with those migrations: a copy of the folding and the document as they were then
 * (src/search/fold.ts, search-document.ts), not an import of them.
 */
export async function backfillSearchDocuments(db: Kysely<any>, uuid: string): Promise<void> {
  const stores = await sql<{ store_id: string }>`
    select distinct store_id from products order by store_id
  `.execute(db)
  // PostgreSQL: without statistics (a table just bulk loaded, before autovacuum has analyzed
  // it), a batch's read was planned as a bitmap scan of every product after the batch's start,
  // then a sort: 1 to 3 s a batch of 1,000 at 1,000,000 products. With them, an index scan
  // that stops at the batch's end. A new, empty database is left never analyzed.
  if (uuid !== '' && stores.rows.length > 0) await sql`analyze products, variants`.execute(db)
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
      const variants = await sql<VariantText>`
        select product_id, name, sku, barcode, options from variants
        where store_id = ${storeId}
          and product_id >= ${first}${sql.raw(uuid)} and product_id <= ${last}${sql.raw(uuid)}
        order by product_id, position, created_at
      `.execute(db)
      const byProduct = new Map<string, VariantText[]>()
      for (const variant of variants.rows) {
        const list = byProduct.get(variant.product_id)
        if (list) list.push(variant)
        else byProduct.set(variant.product_id, [variant])
      }
      const documents = products.rows.map((product) =>
        documentOf(product, byProduct.get(product.id) ?? []),
      )
      for (let i = 0; i < documents.length; i += 200) {
        const piece = documents.slice(i, i + 200)
        await sql`
          insert into product_search (store_id, product_id, name_words, other_words, name_key, codes)
          values ${sql.join(
            piece.map(
              (d) =>
                sql`(${storeId}, ${d.id}${sql.raw(uuid)}, ${d.nameWords}, ${d.otherWords}, ${d.nameKey}, ${d.codes})`,
            ),
          )}
        `.execute(db)
      }
      const facets = documents.flatMap((d) => d.facets.map((f) => ({ id: d.id, ...f })))
      for (let i = 0; i < facets.length; i += 500) {
        const piece = facets.slice(i, i + 500)
        await sql`
          insert into search_facets (store_id, product_id, kind, name_key, value_key, value)
          values ${sql.join(
            piece.map(
              (f) =>
                sql`(${storeId}, ${f.id}${sql.raw(uuid)}, ${f.kind}, ${f.nameKey}, ${f.valueKey}, ${f.value})`,
            ),
          )}
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

const PICTOGRAPHS =
  /[\p{Extended_Pictographic}\p{Regional_Indicator}\u{1F3FB}-\u{1F3FF}\u200D\uFE0E\uFE0F]/gu
const CYRILLIC_SIGNS = /[ЬьЪъ]/g

function folded(texts: (string | null | undefined)[]): string {
  return texts
    .flatMap((text) =>
      text
        ? anyAscii(text.replace(PICTOGRAPHS, ' ').replace(CYRILLIC_SIGNS, ''))
            .toLowerCase()
            .split(/[^a-z0-9]+/)
        : [],
    )
    .filter((word) => word !== '')
    .join(' ')
}

function documentOf(product: ProductText, variants: VariantText[]) {
  const parse = <T>(value: string | T): T =>
    typeof value === 'string' ? (JSON.parse(value) as T) : value
  const tags = parse<string[]>(product.tags)
  const options = variants.map((variant) => parse<Record<string, string>>(variant.options))
  const codes = new Set<string>()
  for (const code of [product.sku, product.barcode, ...variants.flatMap((v) => [v.sku, v.barcode])])
    if (code) codes.add(code.trim().toLowerCase())
  const facets = new Map<
    string,
    { kind: string; nameKey: string; valueKey: string; value: string }
  >()
  const add = (kind: string, nameKey: string, value: string) => {
    const key = JSON.stringify([kind, nameKey, value.toLowerCase()])
    if (!facets.has(key)) facets.set(key, { kind, nameKey, valueKey: value.toLowerCase(), value })
  }
  for (const tag of tags) add('tag', '', tag)
  for (const values of options)
    for (const [name, value] of Object.entries(values)) add('option', name.toLowerCase(), value)
  return {
    id: product.id,
    nameWords: folded([product.name]),
    otherWords: folded([
      product.description,
      product.vendor,
      product.product_type,
      ...tags,
      product.slug,
      product.sku,
      product.barcode,
      ...variants.flatMap((v, i) => [v.name, v.sku, v.barcode, ...Object.values(options[i]!)]),
    ]),
    nameKey: product.name.toLowerCase(),
    codes: codes.size === 0 ? '' : `\n${[...codes].join('\n')}\n`,
    facets: [...facets.values()],
  }
}
