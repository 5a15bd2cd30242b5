// npm run build (after tsc): bundles the admin page (admin/) into dist/admin-ui, with a hash
// of each asset's content in its name, an index.html that names them, and brotli and gzip
// forms of every file, so the service sends them compressed without compressing per request.
import { createHash } from 'node:crypto'
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises'
import { basename } from 'node:path'
import { fileURLToPath } from 'node:url'
import { brotliCompressSync, constants, gzipSync } from 'node:zlib'
import { build } from 'esbuild'

const root = (path: string) => fileURLToPath(new URL(`../${path}`, import.meta.url))
const OUT = root('dist/admin-ui')

await rm(OUT, { recursive: true, force: true })
await mkdir(`${OUT}/assets`, { recursive: true })

const result = await build({
  entryPoints: [root('admin/src/main.tsx'), root('admin/src/admin.css')],
  outdir: `${OUT}/assets`,
  entryNames: '[name]-[hash]',
  bundle: true,
  minify: true,
  format: 'esm',
  target: ['es2022', 'chrome110', 'firefox110', 'safari16'],
  jsx: 'automatic',
  jsxImportSource: 'preact',
  legalComments: 'none',
  metafile: true,
  logLevel: 'warning',
})

const outputs = Object.keys(result.metafile.outputs).map((path) => basename(path))
const script = outputs.find((name) => name.endsWith('.js'))
const style = outputs.find((name) => name.endsWith('.css'))
if (!script || !style) throw new Error(`esbuild wrote no script or style: ${outputs.join(', ')}`)

// The favicon: an asset like the others (hashed name, cached for a year), so no request of
// the page answers 404 and the policy needs no data: source.
const faviconBody = await readFile(root('admin/favicon.svg'))
const favicon = `favicon-${createHash('sha256').update(faviconBody).digest('hex').slice(0, 8)}.svg`
await writeFile(`${OUT}/assets/${favicon}`, faviconBody)

const template = await readFile(root('admin/index.html'), 'utf8')
const html = template
  .replace('{{script}}', `/admin/assets/${script}`)
  .replace('{{style}}', `/admin/assets/${style}`)
  .replace('{{favicon}}', `/admin/assets/${favicon}`)
await writeFile(`${OUT}/index.html`, html)

for (const file of ['index.html', `assets/${script}`, `assets/${style}`, `assets/${favicon}`]) {
  const body = await readFile(`${OUT}/${file}`)
  await writeFile(
    `${OUT}/${file}.br`,
    brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }),
  )
  await writeFile(`${OUT}/${file}.gz`, gzipSync(body, { level: 9 }))
}
