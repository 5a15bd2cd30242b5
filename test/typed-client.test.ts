import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { copyFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { format, resolveConfig } from 'prettier'
import ts from 'typescript'
import { createAndReadBack } from '../examples/typed-client.js'
import { renderOpenApiFile } from '../scripts/openapi.js'
import { buildTestApi, describeEachDialect } from './helpers.js'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const EXAMPLE = join(ROOT, 'examples/typed-client.ts')
const README = join(ROOT, 'README.md')
const README_SECTION = '## OpenAPI, docs page and a typed client'
const COMMITTED_TYPES = join(ROOT, 'examples/catalog-api.d.ts')
const OPENAPI_TYPESCRIPT = join(ROOT, 'node_modules/.bin/openapi-typescript')

/**
 * Puts the example and the types `npm run openapi:types` makes of the document the routes
 * generate now (not of the committed openapi.json) side by side in `dir`; returns the types.
 */
async function exampleWithFreshTypes(dir: string): Promise<string> {
  await writeFile(join(dir, 'openapi.json'), await renderOpenApiFile())
  await promisify(execFile)(OPENAPI_TYPESCRIPT, [
    join(dir, 'openapi.json'),
    '-o',
    join(dir, 'catalog-api.d.ts'),
  ])
  await copyFile(EXAMPLE, join(dir, 'typed-client.ts'))
  await writeFile(join(dir, 'package.json'), JSON.stringify({ type: 'module' }))
  return readFile(join(dir, 'catalog-api.d.ts'), 'utf8')
}

let previousProgram: ts.Program | undefined

/** Type errors in a file, under the project's compiler options (tsconfig.json). */
function typeErrors(file: string): string[] {
  const configPath = join(ROOT, 'tsconfig.json')
  const { config } = ts.readConfigFile(configPath, ts.sys.readFile)
  const { options } = ts.parseJsonConfigFileContent(config, ts.sys, ROOT, undefined, configPath)
  const program = ts.createProgram({
    rootNames: [file],
    options: { ...options, noEmit: true },
    // Reuses what has not changed since the last check (the Node types, say).
    oldProgram: previousProgram,
  })
  previousProgram = program
  return ts
    .getPreEmitDiagnostics(program)
    .map((diagnostic) => ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'))
}

describe('the typed client example', () => {
  let dir: string
  let freshTypes: string
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'catalog-test-'))
    freshTypes = await exampleWithFreshTypes(dir)
  })
  after(() => rm(dir, { recursive: true, force: true }))

  it('type-checks against types generated afresh from the document, and fails when it misuses them', async () => {
    const example = join(dir, 'typed-client.ts')
    assert.deepEqual(typeErrors(example), [])

    // The check has teeth: a field the API does not have, or a value of the wrong type, is an
    // error, each reported.
    let source = await readFile(example, 'utf8')
    const misuses: [string, string, RegExp][] = [
      ['stored.variants.map', 'stored.variantz.map', /'variantz'/],
      ["status: 'active'", "status: 'published'", /"published"/],
      ['price: 19.99', "price: '19.99'", /'string' is not assignable to type 'number'/],
    ]
    for (const [from, to] of misuses) {
      assert.ok(source.includes(from), from)
      source = source.replace(from, to)
    }
    await writeFile(example, source)
    const errors = typeErrors(example)
    for (const [, to, reported] of misuses) {
      assert.ok(
        errors.some((error) => reported.test(error)),
        `${to} type-checks: ${errors.join('\n')}`,
      )
    }
  })

  it("the README's snippet type-checks against them too", async () => {
    const readme = await readFile(README, 'utf8')
    const section = readme.slice(readme.indexOf(README_SECTION))
    const snippet = /```ts\n([\s\S]*?)```/.exec(section)?.[1]
    assert.ok(snippet?.includes("from './catalog-api.js'"), 'no TypeScript snippet in the README')
    const file = join(dir, 'readme-snippet.ts')
    await writeFile(file, snippet!)
    assert.deepEqual(typeErrors(file), [])
  })

  it('uses examples/catalog-api.d.ts as npm run openapi:types makes it', async () => {
    const options = await resolveConfig(COMMITTED_TYPES)
    const expected = await format(freshTypes, { ...options, filepath: COMMITTED_TYPES })
    const committed = await readFile(COMMITTED_TYPES, 'utf8')
    assert.ok(committed === expected, 'examples/catalog-api.d.ts is stale: npm run openapi:types')
  })
})

describeEachDialect('the typed client example, run', (dialect) => {
  it('creates a product, adds a variant and reads both back over HTTP', async (t) => {
    const { app, key } = await buildTestApi(t, dialect)
    const url = await app.listen({ host: '127.0.0.1', port: 0 })
    const { product, variant, stored, found, summary } = await createAndReadBack(url, key)
    assert.deepEqual(
      found.data.map((p) => p.id),
      [product.id],
    )
    assert.deepEqual(found.facets?.price, { min: 19.99, max: 19.99 })
    assert.equal(product.slug, 'creme-brulee-t-shirt')
    assert.equal(variant.productId, product.id)
    assert.equal(variant.price, 19.99)
    assert.deepEqual(stored.variants, [variant])
    assert.equal(summary, 'creme-brulee-t-shirt: 1. M / Red at 19.99')
  })
})
