import { Worker } from 'node:worker_threads'
import type { Attempt, AttemptResult, Sender, SenderOptions } from './sender.js'

/** What the sender thread is started with: SenderOptions that can cross to a thread. */
export type ThreadSenderOptions = Omit<SenderOptions, 'resolve' | 'now'>

/** From the service to the thread: attempts to make, each with its number. */
export type ToThread = { id: number; attempt: Attempt }[]
/** From the thread to the service: outcomes of attempts, by number. */
export type FromThread = { id: number; result: AttemptResult }[]

/**
 * A Sender whose attempts run on a worker thread of their own (sender-worker.ts, with
 * createSender): the HTTP requests, TLS handshakes, signatures and answers of webhook
 * deliveries cost the thread that serves the API nothing but a message each way, so a burst
 * of deliveries, or a receiver that answers slowly and at length, does not hold its requests.
 * The attempts given in one turn of the event loop cross in one message, and their outcomes
 * come back so. If the thread dies, its attempts under way fail (to be retried, as any failed
 * attempt is) and the next attempt starts a new thread.
 */
export function createThreadSender(options: ThreadSenderOptions): Sender {
  const pending = new Map<number, (result: AttemptResult) => void>()
  let outbox: ToThread = []
  let nextId = 1
  let worker: Worker | undefined
  let closed = false

  const start = (): Worker => {
    const started = startWorker(options)
    started.on('message', (outcomes: FromThread) => {
      for (const { id, result } of outcomes) {
        pending.get(id)?.(result)
        pending.delete(id)
      }
      // An idle thread does not keep the process alive; one with attempts under way does.
      if (pending.size === 0) started.unref()
    })
    const lost = (reason: string) => {
      if (worker !== started) return
      worker = undefined
      for (const [id, resolve] of pending) {
        resolve({ ok: false, error: reason, durationMs: 0 })
        pending.delete(id)
      }
    }
    started.on('error', (error) => lost(`the sender thread failed: ${error.message}`))
    started.on('exit', (code) => lost(`the sender thread exited (${code})`))
    return started
  }

  const flush = () => {
    const batch = outbox
    outbox = []
    if (batch.length === 0 || closed) return
    worker ??= start()
    worker.ref()
    worker.postMessage(batch)
  }

  return {
    send: (attempt) =>
      new Promise<AttemptResult>((resolve) => {
        if (closed) {
          resolve({ ok: false, error: 'the sender is closed', durationMs: 0 })
          return
        }
        const id = nextId++
        pending.set(id, resolve)
        if (outbox.length === 0) queueMicrotask(flush)
        outbox.push({ id, attempt })
      }),
    close: () => {
      closed = true
      const stopping = worker
      worker = undefined
      void stopping?.terminate()
      for (const resolve of pending.values()) {
        resolve({ ok: false, error: 'the sender is closed', durationMs: 0 })
      }
      pending.clear()
    },
  }
}

/** The thread of sender-worker.js; from src/ (tsx: tests, `npm run dev`), of sender-worker.ts. */
function startWorker(workerData: ThreadSenderOptions): Worker {
  if (!import.meta.url.endsWith('.ts')) {
    return new Worker(new URL('./sender-worker.js', import.meta.url), { workerData })
  }
  // A worker thread does not get the TypeScript loader that tsx gave this one: it registers it.
  const script = JSON.stringify(new URL('./sender-worker.ts', import.meta.url).href)
  const tsx = JSON.stringify(import.meta.resolve('tsx/esm/api'))
  return new Worker(
    `import(${tsx}).then(({ register }) => { register(); return import(${script}) })`,
    { eval: true, workerData },
  )
}
