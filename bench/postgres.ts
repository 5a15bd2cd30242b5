import { randomBytes } from 'node:crypto'
import pg from 'pg'

/** Runs `work` on a connection to `url` and closes it. */
export async function withClient<T>(url: string, work: (client: pg.Client) => Promise<T>) {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return await work(client)
  } finally {
    await client.end()
  }
}

/** Creates an empty database on the server of `adminUrl`; returns its URL and name. */
export async function createScratchDatabase(
  adminUrl: string,
): Promise<{ url: string; name: string }> {
  const name = `bench_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`
  await withClient(adminUrl, (client) => client.query(`create database ${name}`))
  const url = new URL(adminUrl)
  url.pathname = `/${name}`
  return { url: url.toString(), name }
}

/** Drops a database made by createScratchDatabase, closing any connection still open to it. */
export async function dropScratchDatabase(adminUrl: string, name: string): Promise<void> {
  if (!/^bench_[a-z0-9_]+$/.test(name)) throw new Error(`refusing to drop database "${name}"`)
  await withClient(adminUrl, (client) =>
    client.query(`drop database if exists ${name} with (force)`),
  )
}

/** The server's version and the settings that decide what a commit costs. */
export async function postgresFacts(
  adminUrl: string,
): Promise<{ version: string; settings: Record<string, string> }> {
  return withClient(adminUrl, async (client) => {
    const version = await client.query<{ version: string }>('select version() as version')
    const settings = await client.query<{ name: string; setting: string }>(
      `select name, current_setting(name) as setting from pg_settings
       where name in ('fsync', 'synchronous_commit', 'wal_sync_method', 'commit_delay',
                      'shared_buffers', 'max_connections')`,
    )
    return {
      version: version.rows[0]?.version ?? 'unknown',
      settings: Object.fromEntries(settings.rows.map((row) => [row.name, row.setting])),
    }
  })
}
