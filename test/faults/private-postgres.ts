import { execFile } from 'node:child_process'
import { chown, mkdtemp, rm } from 'node:fs/promises'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { after, before, describe } from 'node:test'
import { join } from 'node:path'
import { promisify } from 'node:util'

const run = promisify(execFile)

const BIN = process.env.TEST_POSTGRES_BIN ?? '/usr/lib/postgresql/15/bin'

/**
 * A PostgreSQL cluster of the test's own, in a temporary directory, on a free port: it may be
 * stopped and started at will without touching the machine's cluster, which other tests use.
 * PostgreSQL refuses to run as root, so its programs run as the `postgres` user.
 */
export interface PrivatePostgres {
  /** postgres://postgres@127.0.0.1:<port>/postgres */
  readonly url: string
  /** Starts the server and waits until it accepts connections; `settings` are `-c` pairs. */
  start(settings?: Record<string, string>): Promise<void>
  /** Stops it: `immediate` is a crash as far as clients can tell. */
  stop(mode: 'fast' | 'immediate'): Promise<void>
  /** Stops it if running and deletes its files. */
  destroy(): Promise<void>
}

export async function createPrivatePostgres(): Promise<PrivatePostgres> {
  const dir = await mkdtemp(join(tmpdir(), 'catalog-pg-'))
  const data = join(dir, 'data')
  const port = await freePort()
  const asPostgres = (program: string, args: string[]) =>
    run('runuser', ['-u', 'postgres', '--', join(BIN, program), ...args], { timeout: 60_000 })
  const running = async () =>
    asPostgres('pg_ctl', ['status', '-D', data]).then(
      () => true,
      () => false,
    )
  try {
    await chown(dir, ...(await postgresUser()))
    // --no-sync: the files of a throwaway cluster need not reach the disk at creation.
    await asPostgres('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync'])
  } catch (error) {
    await rm(dir, { recursive: true, force: true })
    throw error
  }
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    start: async (settings = {}) => {
      const options = [
        `-p ${port}`,
        `-k ${dir}`,
        '-c listen_addresses=127.0.0.1',
        ...Object.entries(settings).map(([name, value]) => `-c ${name}=${value}`),
      ].join(' ')
      await asPostgres('pg_ctl', [
        'start',
        '-D',
        data,
        '-w',
        '-t',
        '60',
        '-l',
        join(dir, 'server.log'),
        '-o',
        options,
      ])
    },
    stop: async (mode) => {
      await asPostgres('pg_ctl', ['stop', '-D', data, '-w', '-m', mode])
    },
    destroy: async () => {
      if (await running()) await asPostgres('pg_ctl', ['stop', '-D', data, '-w', '-m', 'immediate'])
      await rm(dir, { recursive: true, force: true })
    },
  }
}

/**
 * Declares a suite whose tests share a private cluster, created and started before them and
 * destroyed after them; skipped, by name, without TEST_POSTGRES_URL (the switch of every
 * PostgreSQL test). `cluster` stands for the cluster from the suite's start on.
 */
export function describeOnPrivatePostgres(
  name: string,
  suite: (cluster: PrivatePostgres) => void,
): void {
  describe(name, { skip: !process.env.TEST_POSTGRES_URL && 'TEST_POSTGRES_URL is not set' }, () => {
    let created: PrivatePostgres | undefined
    const cluster = (): PrivatePostgres => {
      if (created === undefined) throw new Error('the private cluster is not created yet')
      return created
    }
    before(async () => {
      created = await createPrivatePostgres()
      await created.start()
    })
    after(() => created?.destroy())
    suite({
      get url() {
        return cluster().url
      },
      start: (settings) => cluster().start(settings),
      stop: (mode) => cluster().stop(mode),
      destroy: () => cluster().destroy(),
    })
  })
}

async function postgresUser(): Promise<[number, number]> {
  const [uid, gid] = await Promise.all([
    run('id', ['-u', 'postgres']),
    run('id', ['-g', 'postgres']),
  ])
  return [Number(uid.stdout.trim()), Number(gid.stdout.trim())]
}

/** A TCP port nobody listens on right now. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      server.close(() =>
        typeof address === 'object' && address
          ? resolve(address.port)
          : reject(new Error('no port')),
      )
    })
  })
}
