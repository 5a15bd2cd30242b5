/**
 * `npm run openapi`: writes the OpenAPI document that the service serves at /openapi.json to
 * openapi.json at the repository root, formatted as prettier leaves it. A test fails when the
 * committed file differs from what the routes generate.
 */
import { writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { format, resolveConfig } from 'prettier'
import { buildApp } from '../src/app.js'
import { createDatabase } from '../src/db/database.js'

export const OPENAPI_FILE = fileURLToPath(new URL('../openapi.json', import.meta.url))

/** The document as the app generates it from its routes (no data is read, so no migrations). */
export async function generateOpenApiDocument(): Promise<Record<string, any>> {
  const database = createDatabase('sqlite::memory:')
  const app = buildApp({ database })
  try {
    await app.ready()
    return structuredClone(app.swagger()) as Record<string, any>
  } finally {
    await app.close()
    await database.close()
  }
}

/** The text of openapi.json: the document, formatted with the project's prettier settings. */
export async function renderOpenApiFile(): Promise<string> {
  const document = await generateOpenApiDocument()
  const options = await resolveConfig(OPENAPI_FILE)
  return format(JSON.stringify(document), { ...options, filepath: OPENAPI_FILE })
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFileSync(OPENAPI_FILE, await renderOpenApiFile())
  console.log(`Wrote ${OPENAPI_FILE}`)
}
