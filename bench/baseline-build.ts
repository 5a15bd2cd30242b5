import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import ts from 'typescript'

const SOURCE = fileURLToPath(new URL('./baseline-server.ts', import.meta.url))
/** The built service (npm run build), for the one module the baseline shares: the SQLite driver. */
const DIST = pathToFileURL(fileURLToPath(new URL('../dist/', import.meta.url))).href

/**
 * Transpiles baseline-server.ts to plain JavaScript in `dir`, so that it runs on node alone,
 * like the service's dist/. `dir` must be inside the project, where its packages resolve.
 */
export function buildBaselineServer(dir: string): string {
  const output = ts.transpileModule(readFileSync(SOURCE, 'utf8'), {
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2023 },
    fileName: SOURCE,
  })
  mkdirSync(dir, { recursive: true })
  const script = join(dir, 'baseline-server.mjs')
  writeFileSync(script, output.outputText.replaceAll("from '../src/", `from '${DIST}`))
  return script
}
