import type { FastifyBaseLogger, FastifyServerOptions } from 'fastify'

type Level = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace'
type Write = (...args: unknown[]) => void

/** A logger that can say whether a level is written: pino's. */
type LevelAware = FastifyBaseLogger & { isLevelEnabled(level: string): boolean }

/**
 * Fastify's factory of `request.log`, the app's logger with the request's `reqId`. Fastify
 * makes one for every request; a pino child costs a few µs to make, and most requests log
 * nothing but their one line (and nothing at all below info). So the child is made when
 * the request first writes a line at a level the app writes, and the line is the same as
 * the child would have written from the start.
 */
export const requestLoggerFactory: NonNullable<FastifyServerOptions['childLoggerFactory']> = (
  logger,
  bindings,
  options,
) => {
  const levelAware = typeof (logger as Partial<LevelAware>).isLevelEnabled === 'function'
  // A route's own level or serializers (none of ours has any) make the child at once.
  if (!levelAware || options.level !== undefined || options.serializers !== undefined) {
    return logger.child(bindings, options)
  }
  return new RequestLogger(logger as LevelAware, bindings) as unknown as FastifyBaseLogger
}

class RequestLogger {
  readonly #parent: LevelAware
  readonly #bindings: Record<string, unknown>
  #child: FastifyBaseLogger | undefined

  constructor(parent: LevelAware, bindings: Record<string, unknown>) {
    this.#parent = parent
    this.#bindings = bindings
  }

  get level(): string {
    return (this.#child ?? this.#parent).level
  }

  set level(level: string) {
    this.#logger().level = level
  }

  fatal(...args: unknown[]): void {
    this.#write('fatal', args)
  }

  error(...args: unknown[]): void {
    this.#write('error', args)
  }

  warn(...args: unknown[]): void {
    this.#write('warn', args)
  }

  info(...args: unknown[]): void {
    this.#write('info', args)
  }

  debug(...args: unknown[]): void {
    this.#write('debug', args)
  }

  trace(...args: unknown[]): void {
    this.#write('trace', args)
  }

  silent(): void {}

  child(...args: Parameters<FastifyBaseLogger['child']>): FastifyBaseLogger {
    return this.#logger().child(...args)
  }

  #logger(): FastifyBaseLogger {
    return (this.#child ??= this.#parent.child(this.#bindings))
  }

  #write(level: Level, args: unknown[]): void {
    if (this.#child === undefined && !this.#parent.isLevelEnabled(level)) return
    const logger = this.#logger()
    ;(logger[level] as Write).apply(logger, args)
  }
}
