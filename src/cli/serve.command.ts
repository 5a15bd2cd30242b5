import { performance } from 'node:perf_hooks'
import type { Config } from '../config.js'
import { startServer } from '../server.js'
import type { Output } from './output.js'

/**
 * A stop signal that arrives within this long of the first is a copy of it, not a second
 * request: a terminal's Ctrl-C reaches npm and the server (one process group), and npm passes
 * its own copy on a few milliseconds later. Only a signal after this window forces an exit.
 * A person pressing Ctrl-C again to stop waiting takes longer than that (docs/operations.md).
 */
export const SIGNAL_COPY_WINDOW_MS = 1000

/** `catalog serve`: runs until SIGTERM or SIGINT, then shuts down gracefully and exits 0. */
export async function serve(config: Config, output: Output): Promise<void> {
  // Signals are handled from the start: one that arrives while the server is still starting
  // stops it as soon as it is up, gracefully.
  let stopRequested: NodeJS.Signals | undefined
  let stop = (signal: NodeJS.Signals) => {
    stopRequested = signal
  }
  let copy = (_signal: NodeJS.Signals) => {}
  let firstSignalAt: number | undefined
  const onSignal = (signal: NodeJS.Signals) => {
    // Monotonic: a clock change while stopping neither merges nor splits signals.
    const now = performance.now()
    if (firstSignalAt !== undefined && now - firstSignalAt < SIGNAL_COPY_WINDOW_MS) {
      copy(signal)
      return
    }
    firstSignalAt ??= now
    stop(signal)
  }
  process.on('SIGTERM', onSignal)
  process.on('SIGINT', onSignal)

  const server = await startServer(config)
  if (server.firstKey) {
    output.out(
      [
        '',
        'No API key existed, so one was created for store "default" with scopes read,write:',
        '',
        `    ${server.firstKey.key}`,
        '',
        'It is shown this once only (the database keeps a hash). Try it:',
        `    curl -s ${server.url}/api/commerce/v1/products -H "Authorization: Bearer ${server.firstKey.key}"`,
        `or open ${server.url}/admin in a browser and sign in with it.`,
        '',
      ].join('\n'),
    )
  }
  copy = (signal: NodeJS.Signals) => {
    server.app.log.info(
      { signal },
      `signal again within ${SIGNAL_COPY_WINDOW_MS} ms of the first: one stop, still finishing requests in flight`,
    )
  }
  let stopping = false
  stop = (signal: NodeJS.Signals) => {
    if (stopping) {
      server.app.log.warn({ signal }, 'second signal: exiting without waiting')
      process.exit(1)
    }
    stopping = true
    server.app.log.info({ signal }, 'shutting down: finishing requests in flight')
    const deadline = setTimeout(() => {
      server.app.log.error('requests still in flight at the shutdown deadline: exiting')
      process.exit(1)
    }, config.shutdownTimeoutMs)
    deadline.unref()
    server.close().then(
      () => {
        server.app.log.info('stopped')
        process.exit(0)
      },
      (error: unknown) => {
        server.app.log.error({ err: error }, 'shutdown failed')
        process.exit(1)
      },
    )
  }
  if (stopRequested) stop(stopRequested)
}
