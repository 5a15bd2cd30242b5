/**
 * The webhook receivers of the delivery benchmark (webhooks.ts), in a process of their own so
 * that their CPU is not the load generator's: a live one that answers every POST 204 and
 * notes, per URL path (one per service) and webhook-id, when the first attempt arrived and the
 * event's createdAt; and a dead one that accepts connections, reads what comes and never
 * answers. Only on 127.0.0.1. Driven over IPC (ipc.ts).
 */
import http from 'node:http'
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net'
import { once } from 'node:events'
import { answerIpc } from './ipc.js'
import { BENCH_HOST } from './http-client.js'
import { summarizeLatencies, type LatencySummary } from './stats.js'

export type ReceiverMessage =
  /** Starts both receivers; answers their ports. */
  | { kind: 'start' }
  /** From now on, the first arrivals of new webhook-ids at `path` are lag samples (those before are not). */
  | { kind: 'mark'; path: string }
  /** What `path` has received so far. */
  | { kind: 'figures'; path: string }

export interface ReceiverPorts {
  live: number
  dead: number
}

export interface PathFigures {
  /** Distinct webhook-ids received. */
  delivered: number
  /** Attempts of a webhook-id received before (at least once allows them). */
  duplicates: number
  /** Receipts that were not an event JSON with an id and a createdAt: must be 0. */
  malformed: number
  /** Arrival minus the event's createdAt, in ms, of the ids first received since the mark. */
  lag: LatencySummary
  /** The dead receiver: connections accepted (any path). */
  deadConnections: number
}

interface PathState {
  seen: Set<string>
  duplicates: number
  malformed: number
  marked: boolean
  lags: number[]
}

const paths = new Map<string, PathState>()
const sockets = new Set<Socket>()
let deadConnections = 0

function stateOf(path: string): PathState {
  let state = paths.get(path)
  if (!state) {
    state = { seen: new Set(), duplicates: 0, malformed: 0, marked: false, lags: [] }
    paths.set(path, state)
  }
  return state
}

/** Notes one attempt that arrived (its headers) at `arrivedAt`, ms since the epoch. */
function receive(path: string, id: string | undefined, body: string, arrivedAt: number): void {
  const state = stateOf(path)
  let createdAt = NaN
  try {
    createdAt = Date.parse((JSON.parse(body) as { createdAt?: string }).createdAt ?? '')
  } catch {
    // counted below
  }
  if (id === undefined || !Number.isFinite(createdAt)) {
    state.malformed++
    return
  }
  if (state.seen.has(id)) {
    state.duplicates++
    return
  }
  state.seen.add(id)
  if (state.marked) state.lags.push(arrivedAt - createdAt)
}

async function listen(server: Server | http.Server): Promise<number> {
  server.listen(0, BENCH_HOST)
  await once(server, 'listening')
  return (server.address() as AddressInfo).port
}

async function start(): Promise<ReceiverPorts> {
  const live = http.createServer((request, response) => {
    // The wall clock, as the service's createdAt: the same clock of the same machine.
    const arrivedAt = Date.now()
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      const id = request.headers['webhook-id']
      receive(
        request.url ?? '/',
        typeof id === 'string' ? id : undefined,
        Buffer.concat(chunks).toString('utf8'),
        arrivedAt,
      )
      response.writeHead(204).end()
    })
  })
  live.keepAliveTimeout = 60_000
  const dead = createServer((socket) => {
    deadConnections++
    sockets.add(socket)
    socket.on('data', () => {})
    socket.on('error', () => {})
    socket.on('close', () => sockets.delete(socket))
  })
  return { live: await listen(live), dead: await listen(dead) }
}

answerIpc((message: ReceiverMessage): unknown => {
  switch (message.kind) {
    case 'start':
      return start()
    case 'mark': {
      stateOf(message.path).marked = true
      return null
    }
    case 'figures': {
      const state = stateOf(message.path)
      return {
        delivered: state.seen.size,
        duplicates: state.duplicates,
        malformed: state.malformed,
        lag: summarizeLatencies(state.lags),
        deadConnections,
      } satisfies PathFigures
    }
  }
})
