import pg from 'pg'

/** What a listener is told. */
export interface ListenerEvents {
  /** A NOTIFY of the channel whose payload is this connection's schema. */
  notified(): void
  /**
   * The connection listens (again): NOTIFYs sent while it did not were missed, so whatever
   * they would have said must be assumed.
   */
  listening(): void
  /** The connection, or the attempt to open it, was lost; it is opened again a second later. */
  lost?(): void
}

export interface Listener {
  /** Opens the connection now, unless it is open, being opened, or the listener stopped. */
  start(): void
  /** Whether the connection listens at this moment. */
  isListening(): boolean
  stop(): Promise<void>
}

/** How long after a lost connection it is opened again. */
const RECONNECT_MS = 1000

/**
 * The one LISTEN loop: a PostgreSQL connection of its own that LISTENs on `channel`, and
 * reconnects a second after it drops (or fails to open). Each NOTIFY names the schema it is
 * for: services (or tests) in other schemas of the same database share the channel, and
 * their NOTIFYs are not this one's. Opened by `start`, not at creation: a caller may open it
 * on first use (CLI commands never need it).
 */
export function listenTo(url: string, channel: string, events: ListenerEvents): Listener {
  let stopped = false
  let connecting = false
  let client: pg.Client | undefined

  const connect = () => {
    if (stopped || connecting || client !== undefined) return
    connecting = true
    const candidate = new pg.Client({ connectionString: url })
    let schema: string | undefined
    let ended = false
    const lost = () => {
      if (ended) return
      ended = true
      connecting = false
      if (client === candidate) client = undefined
      candidate.end().catch(() => {})
      events.lost?.()
      if (!stopped) setTimeout(connect, RECONNECT_MS).unref()
    }
    candidate.on('notification', (message) => {
      if (message.payload === schema) events.notified()
    })
    candidate.on('error', lost)
    candidate.on('end', lost)
    candidate
      .connect()
      .then(() => candidate.query<{ schema: string }>('select current_schema() as schema'))
      .then((result) => {
        schema = result.rows[0]?.schema
        return candidate.query(`listen ${pg.escapeIdentifier(channel)}`)
      })
      .then(() => {
        if (ended) return
        connecting = false
        if (stopped) {
          ended = true
          return void candidate.end().catch(() => {})
        }
        client = candidate
        events.listening()
      }, lost)
  }

  return {
    start: connect,
    isListening: () => client !== undefined,
    stop: async () => {
      stopped = true
      const current = client
      client = undefined
      await current?.end().catch(() => {})
    },
  }
}
