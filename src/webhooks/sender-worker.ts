import { parentPort, workerData } from 'node:worker_threads'
import { createSender } from './sender.js'
import type { FromThread, ThreadSenderOptions, ToThread } from './sender-thread.js'

/** The sender thread of createThreadSender: makes the attempts it is given, answers outcomes. */
const sender = createSender(workerData as ThreadSenderOptions)
const port = parentPort!
let outbox: FromThread = []

port.on('message', (attempts: ToThread) => {
  for (const { id, attempt } of attempts) {
    void sender.send(attempt).then((result) => {
      if (outbox.length === 0) setImmediate(flush)
      outbox.push({ id, result })
    })
  }
})

function flush(): void {
  const outcomes = outbox
  outbox = []
  port.postMessage(outcomes)
}
