/**
 * Request and answer over a child process's IPC channel: the parent sends `{ id, ...message }`
 * and the child answers `{ id, result }` or `{ id, error }`. Used by the load generator
 * (load.ts) and the webhook receiver (webhook-receiver.ts), each a process of its own.
 */
import type { Child } from './processes.js'

type Reply = { id: number; result: unknown } | { id: number; error: string }

/** The parent's side: `call(message)` resolves with the child's result for it. */
export function ipcCaller(child: Child): <T>(message: object) => Promise<T> {
  const pending = new Map<
    number,
    { resolve: (value: unknown) => void; reject: (e: Error) => void }
  >()
  let nextId = 1
  child.process.on('message', (message: Reply) => {
    const waiter = pending.get(message.id)
    if (!waiter) return
    pending.delete(message.id)
    if ('error' in message) waiter.reject(new Error(`${child.name}: ${message.error}`))
    else waiter.resolve(message.result)
  })
  void child.exited.then((code) => {
    for (const waiter of pending.values())
      waiter.reject(new Error(`${child.name} exited (${code})`))
    pending.clear()
  })
  return <T>(message: object) => {
    const id = nextId++
    return new Promise<T>((resolve, reject) => {
      pending.set(id, { resolve: resolve as (value: unknown) => void, reject })
      child.process.send({ ...message, id })
    })
  }
}

/** The child's side: answers each message with `handle`'s result; exits when the parent goes. */
export function answerIpc<M>(handle: (message: M) => Promise<unknown> | unknown): void {
  process.on('message', (message: M & { id: number }) => {
    void (async () => {
      try {
        return { id: message.id, result: await handle(message) }
      } catch (error) {
        return { id: message.id, error: error instanceof Error ? error.message : String(error) }
      }
    })().then((reply) => process.send?.(reply))
  })
  process.on('disconnect', () => process.exit(0))
}
