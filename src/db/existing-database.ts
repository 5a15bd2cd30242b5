import { existsSync } from 'node:fs'

/**
 * The file of an SQLite DATABASE_URL that does not exist yet, or undefined when the URL names
 * one that does (or a server's database, which opening never creates). Commands that work on
 * the server's data (keys, import, export) refuse to create a database: one made by mistake
 * would quietly hold a key the server never sees.
 */
export function missingDatabaseFile(url: string): string | undefined {
  if (!url.startsWith('sqlite:')) return undefined
  const path = url.slice('sqlite:'.length)
  if (path === '' || path === ':memory:') return undefined
  return existsSync(path) ? undefined : path
}
