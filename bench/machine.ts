import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import os from 'node:os'
import { join } from 'node:path'
import SqliteDatabase from '../src/db/sqlite-driver.js'
import { postgresFacts } from './postgres.js'

/** Where the figures came from: they are ratios, but only within one machine and one run. */
export interface MachineFacts {
  node: string
  os: string
  cpuModel: string
  cores: number
  memoryGiB: number
  sqlite: string
  postgres: { version: string; settings: Record<string, string> } | null
  packages: Record<string, string>
  /** The commit the service was built from, and whether src/ differed from it. */
  git: { commit: string; srcChanged: boolean } | null
}

const PACKAGES = ['fastify', 'better-sqlite3', 'pg', 'kysely', 'autocannon']

export async function machineFacts(
  root: string,
  postgresUrl: string | undefined,
): Promise<MachineFacts> {
  const memory = new SqliteDatabase(':memory:')
  const sqlite = memory.prepare('select sqlite_version() as v').pluck().get() as string
  memory.close()
  return {
    node: process.version,
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    cpuModel: os.cpus()[0]?.model.trim() ?? 'unknown',
    cores: os.availableParallelism(),
    memoryGiB: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    sqlite,
    postgres: postgresUrl === undefined ? null : await postgresFacts(postgresUrl),
    packages: Object.fromEntries(PACKAGES.map((name) => [name, packageVersion(root, name)])),
    git: gitState(root),
  }
}

function packageVersion(root: string, name: string): string {
  try {
    const manifest = readFileSync(join(root, 'node_modules', name, 'package.json'), 'utf8')
    return (JSON.parse(manifest) as { version: string }).version
  } catch {
    return 'not installed'
  }
}

function gitState(root: string): MachineFacts['git'] {
  try {
    const git = (...args: string[]) => execFileSync('git', args, { cwd: root, encoding: 'utf8' })
    return {
      commit: git('rev-parse', 'HEAD').trim(),
      srcChanged: git('status', '--porcelain', '--', 'src').trim() !== '',
    }
  } catch {
    return null
  }
}
