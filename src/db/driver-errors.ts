/**
 * What the two drivers' errors mean to the service. PostgreSQL names the violated
 * constraint; SQLite names its columns, so each constraint is recognised by both.
 */
export type UniqueConstraint =
  | 'products_slug_key'
  | 'variants_sku_key'
  | 'variants_options_key'
  | 'collections_handle_key'
  | 'metafield_definitions_key'

const SQLITE_UNIQUE_COLUMNS: Record<UniqueConstraint, string> = {
  products_slug_key: 'products.slug',
  variants_sku_key: 'variants.sku',
  variants_options_key: 'variants.options_key',
  collections_handle_key: 'collections.handle',
  metafield_definitions_key: 'metafield_definitions.namespace',
}

interface DriverError {
  code?: unknown
  constraint?: unknown
  message?: unknown
}

/** The unique constraint an insert broke, or undefined when the error is anything else. */
export function violatedUniqueConstraint(error: unknown): UniqueConstraint | undefined {
  const { code, constraint, message } = (error ?? {}) as DriverError
  if (code === '23505' && typeof constraint === 'string') {
    return constraint in SQLITE_UNIQUE_COLUMNS ? (constraint as UniqueConstraint) : undefined
  }
  if (code === 'SQLITE_CONSTRAINT_UNIQUE' && typeof message === 'string') {
    const columns = message
      .slice(message.indexOf(':') + 1)
      .split(',')
      .map((c) => c.trim())
    for (const [name, column] of Object.entries(SQLITE_UNIQUE_COLUMNS)) {
      if (columns.includes(column)) return name as UniqueConstraint
    }
  }
  return undefined
}

const UNAVAILABLE_NODE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
])
const UNAVAILABLE_SQLITE_CODES = new Set([
  'SQLITE_BUSY',
  'SQLITE_LOCKED',
  'SQLITE_CANTOPEN',
  'SQLITE_FULL',
])

/**
 * Whether the database could not be reached or could not serve the request right now:
 * the client should retry later (503), rather than the service being broken (500).
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  const { code, message } = (error ?? {}) as DriverError
  if (typeof code === 'string') {
    if (UNAVAILABLE_NODE_CODES.has(code) || UNAVAILABLE_SQLITE_CODES.has(code)) return true
    if (code.startsWith('SQLITE_IOERR')) return true
    // PostgreSQL classes 08 (connection exception), 53 (insufficient resources),
    // 57P0x (operator intervention: shutdown, crash recovery, cannot connect now), 3D000
    // (the database does not exist: dropped, or not created yet).
    if (code.startsWith('08') || code.startsWith('53') || /^57P0[1-4]$/.test(code)) return true
    if (code === '3D000') return true
  }
  if (typeof message === 'string') {
    return (
      message.includes('timeout exceeded when trying to connect') ||
      message.includes('Connection terminated') ||
      message.includes('The database connection is not open') ||
      message.includes('driver has already been destroyed') ||
      message.includes('Client has encountered a connection error')
    )
  }
  return false
}
